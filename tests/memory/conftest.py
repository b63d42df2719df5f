"""Helpers for the recall tests: authoritative supersession through the revision writer, and
a deterministic test reranker that records what it was shown."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.db import transaction

from memory import actions
from memory.actors import Actor
from memory.models import Entry, Head, Memory, RelationKind, RevisionKind


def supersede(memory: Memory, *, old: Entry, new: Entry, actor: Actor | None = None) -> None:
    """Record ``new supersedes old`` in one revision, the way an approved supersession does."""
    actor = actor or Actor.system("test")
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        head = Head.objects.get(entry=old)
        actions.write_revision(
            locked,
            actor=actor,
            kind=RevisionKind.SUPERSEDE,
            reason="test supersession",
            changes=[
                actions.Change(entry=old, to_state=head.state, state_reason=head.state_reason)
            ],
            relations=[
                actions.NewRelation(kind=RelationKind.SUPERSEDES, from_entry=new, to_entry=old)
            ],
        )


class RecordingReranker:
    """Reverses the pool and remembers every pool it was shown (entry uids)."""

    name = "recording-reverse"
    shown: list[list[str]] = []

    def rerank(self, query: str, hits: Sequence) -> list:
        RecordingReranker.shown.append([h.entry_id for h in hits])
        return list(reversed(list(hits)))


@pytest.fixture
def recording_reranker():
    RecordingReranker.shown = []
    return RecordingReranker()


@pytest.fixture
def broker() -> Iterator[Any]:
    """Tasks are queued as with ``CELERY_BROKER_URL`` (on kombu's in-process transport, where no
    worker takes them): the API and the pages answer before any run exists."""
    from config.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield app
    app.conf.task_always_eager = saved
