"""The after-the-write seam (``memory.effects``): listeners run in order, once each, a failing one
never stops the others nor fails the announcer, and an after-commit effect runs only when the
writing transaction commits."""

import logging

import pytest
from django.db import transaction

from memory import effects
from memory.effects import Effect


def _session_ended(memory_pk: int) -> None: ...


@pytest.fixture
def effect():
    return Effect.like(_session_ended)


def test_listeners_run_in_order_once_each_and_a_failure_is_logged(effect, caplog):
    heard: list[tuple[str, int]] = []

    def first(memory_pk: int) -> None:
        heard.append(("first", memory_pk))

    def broken(memory_pk: int) -> None:
        raise RuntimeError("listener down")

    def last(memory_pk: int) -> None:
        heard.append(("last", memory_pk))

    for fn in (first, broken, last, first):
        effect.connect(fn)
    with caplog.at_level(logging.ERROR, logger="memory.effects"):
        effect(7)
    assert heard == [("first", 7), ("last", 7)]
    assert effect.name == "session_ended"
    assert "session_ended listener broken failed" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_an_after_commit_effect_waits_for_the_commit_and_dies_with_a_rollback(effect):
    heard: list[int] = []
    effect.connect(heard.append)

    with transaction.atomic():
        effect.after_commit(1)
        assert heard == []  # not while the transaction is open
    assert heard == [1]

    with pytest.raises(RuntimeError), transaction.atomic():
        effect.after_commit(2)
        raise RuntimeError("rolled back")
    assert heard == [1]

    effect.after_commit(3)  # no transaction: now
    assert heard == [1, 3]


def test_the_apps_wire_memorys_own_effects_at_start():
    """The writer, the session end and the recall path import no task and no maintenance: what
    follows them is connected here, at start-up."""
    from memory import maintenance, recall_events, tasks

    assert tasks.queue_vectors in effects.versions_written._listeners
    assert maintenance.after_session_end in effects.session_ended._listeners
    assert recall_events.served in effects.served._listeners
    assert effects.entry_admitted.connected and effects.retired.connected
    assert effects.entries_fell_due.connected
