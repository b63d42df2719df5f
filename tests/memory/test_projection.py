"""The lifecycle projection: derivation rules, and ``rebuild_projection`` (--check, repair)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory import actions
from memory.models import AuditEvent, Head, LifecycleProjection
from tests.factories import remember

from .conftest import supersede

pytestmark = pytest.mark.django_db


@pytest.fixture
def me(agent):
    return agent.actor


def projection(entry):
    return LifecycleProjection.objects.get(entry=entry)


def run(*args):
    out = StringIO()
    try:
        call_command("rebuild_projection", *args, stdout=out, stderr=out)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue()


REPO = [{"source": "repo", "ref": "ADR-1"}]
CHAT = [{"source": "chat", "ref": "msg-1"}]


def test_importance_seed_and_caps(memory, me, staff):
    decision = remember(memory, me, "We chose Postgres", kind="decision", evidence=REPO).entry
    weak_decision = remember(memory, me, "We chose Redis", kind="decision", evidence=CHAT).entry
    note = remember(memory, me, "Tried a flaky fix", kind="working_note").entry
    session = remember(
        memory,
        me,
        "Scratch constraint",
        kind="constraint",
        tier="session",
        session_id="s1",
        evidence=REPO,
    ).entry
    fact = remember(memory, me, "Deploy target eu-2", current_state=True, evidence=REPO).entry
    assert projection(decision).importance == 2
    assert projection(weak_decision).importance == 1  # weak evidence caps at 1
    assert projection(note).importance == 0
    assert projection(session).importance == 1  # session tier caps at 1
    assert projection(fact).importance == 1
    actions.revise_entry(
        memory,
        actor=me,
        entry_uid=fact.uid,
        body="Deploy target eu-3",
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    )
    assert projection(fact).importance == 2  # evidence-backed revise of current state: +1
    actions.revise_entry(
        memory,
        actor=staff,
        entry_uid=note.uid,
        body="Tried a flaky fix once",
        importance_override=3,
    )
    assert projection(note).importance == 3


def test_only_reviewers_override_importance(memory, me, reviewer, staff):
    from memory.exceptions import Forbidden
    from memory.models import Revision

    weak = remember(memory, me, "A weak note", kind="working_note").entry
    with pytest.raises(Forbidden):
        actions.revise_entry(
            memory, actor=me, entry_uid=weak.uid, body="A weak note", importance_override=3
        )
    assert projection(weak).importance == 0
    actions.revise_entry(
        memory, actor=reviewer.actor, entry_uid=weak.uid, body="A weak note", importance_override=3
    )
    assert projection(weak).importance == 3
    last = Revision.objects.filter(memory=memory).last()
    assert last is not None and last.reason == "importance_override:3"
    with pytest.raises(Forbidden):  # a reviewer key overrides, it does not rewrite
        actions.revise_entry(
            memory,
            actor=reviewer.actor,
            entry_uid=weak.uid,
            body="Another text",
            importance_override=2,
        )


def test_the_plus_one_needs_new_evidence(memory, me):
    fact = remember(memory, me, "Deploy target eu-2", current_state=True, evidence=REPO).entry
    actions.revise_entry(memory, actor=me, entry_uid=fact.uid, body="Deploy target eu-3")
    assert projection(fact).importance == 1  # a revise citing nothing new earns nothing
    actions.revise_entry(
        memory,
        actor=me,
        entry_uid=fact.uid,
        body="Deploy target eu-4",
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    )
    assert projection(fact).importance == 2


def test_evidence_strength_provenance_and_time(memory, me):
    from datetime import UTC, datetime

    e = remember(
        memory,
        me,
        "Queue is RabbitMQ",
        evidence=[
            {"source": "repo", "ref": "a", "observed_at": "2025-03-01T00:00:00Z"},
            {"source": "chat", "ref": "b"},
        ],
    ).entry
    p = projection(e)
    assert p.evidence_strength == "direct"
    assert p.provenance == {"repository_attested": 1, "untrusted": 1}
    assert p.effective_at == datetime(2025, 3, 1, tzinfo=UTC)
    assert p.time_known is True and p.recorded_at is not None
    plain = projection(remember(memory, me, "Queue depth alarm at 500").entry)
    assert plain.evidence_strength == "weak" and plain.effective_at is None


def test_a_new_entry_row_equals_the_one_derived_from_the_stored_records(memory, me):
    """An add derives its entry's row from what it has just written; reading every input back
    (as the rebuild does) gives the same row, evidence, times, tier and session included."""
    from memory import lifecycle

    entries = [
        remember(
            memory,
            me,
            "Queue is RabbitMQ",
            current_state=True,
            effective_at="2025-03-01T09:30:00+02:00",
            evidence=[
                {"source": "repo", "ref": "a", "observed_at": "2025-03-01T00:00:00Z"},
                {"source": "chat", "ref": "b"},
            ],
        ).entry,
        remember(
            memory, me, "Ship the hotfix", kind="working_note", tier="session", session_id="s-1"
        ).entry,
        remember(memory, me, "Prefers tabs", kind="preference", sensitivity="public").entry,
    ]
    entries.append(
        remember(
            memory,
            me,
            "Queue depth alarm at 500",
            evidence=[{"source": "chat", "ref": "c", "observed_at": "2025-04-02T08:00:00-05:00"}],
        ).entry
    )
    memory.policy = {**memory.policy, "admission_review": {"below_authority": "user_asserted"}}
    memory.save(update_fields=["policy"])
    candidate = remember(memory, me, "The on-call rota changes on Mondays")
    assert candidate.state == "candidate"
    entries.append(candidate.entry)
    for entry in entries:
        stored = projection(entry)
        (read_back,) = lifecycle.derive([entry.pk])
        assert lifecycle.diff(stored, read_back) == {}, entry.uid


def test_validity_rules(memory, me):
    a = remember(memory, me, "TTL is 60s").entry
    b = remember(memory, me, "TTL is 300s").entry
    c = remember(memory, me, "TTL is configured per service").entry
    actions.record_conflict(memory, actor=me, from_entry=a.uid, to_entry=b.uid)
    assert projection(a).validity == projection(b).validity == "unresolved_conflict"
    supersede(memory, old=a, new=b)  # an authoritative edge settles the conflict
    assert projection(a).validity == "superseded"
    assert projection(a).successor_entry_id == b.pk
    assert projection(b).validity == "current"
    actions.forget_entry(memory, actor=me, entry_uid=b.uid, reason="wrong")
    # A supersedes edge from an inactive entry no longer supersedes, but the authoritative
    # edge still settles the conflict between the two.
    assert projection(a).validity == "current"
    assert projection(b).validity == "inactive" and projection(b).validity_reason == "wrong"
    assert projection(c).validity == "current"


def test_check_is_clean_after_ordinary_writes(memory, me):
    e = remember(memory, me, "Deploy target eu-2", current_state=True, evidence=REPO).entry
    actions.revise_entry(memory, actor=me, entry_uid=e.uid, body="Deploy target eu-3")
    f = remember(memory, me, "Scratch", kind="working_note", tier="session", session_id="s1").entry
    actions.end_session(memory, actor=me, session_id="s1")
    actions.reactivate_entry(memory, actor=me, entry_uid=f.uid)
    code, out = run("--check")
    assert code == 0, out
    assert "projection clean." in out and "acme: 2 entries" in out


def test_check_lists_differing_rows_and_exits_1_then_rebuild_repairs(memory, me):
    e = remember(memory, me, "We chose Postgres", kind="decision", evidence=REPO).entry
    g = remember(memory, me, "We chose Redis", kind="decision").entry
    LifecycleProjection.objects.filter(entry=e).update(importance=0, validity="inactive")
    LifecycleProjection.objects.filter(entry=g).delete()
    code, out = run("--check", "--memory", "acme")
    assert code == 1
    assert f"DIFF acme {e.uid}: importance: live=0 rebuilt=2, validity: live='inactive'" in out
    assert f"DIFF acme {g.uid}: row: live='missing'" in out
    assert projection(e).importance == 0  # --check writes nothing
    code, out = run("--memory", "acme")
    assert code == 0 and "2 written" in out
    assert projection(e).importance == 2 and projection(g).validity == "current"
    assert AuditEvent.objects.filter(action="projection.rebuilt").count() == 1
    assert run("--check")[0] == 0


def test_check_reports_a_head_that_differs_from_its_revisions(memory, me):
    e = remember(memory, me, "We chose Postgres").entry
    Head.objects.filter(entry=e).update(state_reason="tampered")
    code, out = run("--check")
    assert code == 1 and f"HEAD acme {e.uid}" in out


def test_progress_is_shown_per_batch(memory, me):
    for i in range(5):
        remember(memory, me, f"Note {i}")
    code, out = run("--check", "--batch", "2")
    assert code == 0
    assert [line.strip() for line in out.splitlines() if "/5 entries" in line] == [
        "acme: 2/5 entries, 0 differ",
        "acme: 4/5 entries, 0 differ",
        "acme: 5/5 entries, 0 differ",
    ]


def test_unknown_memory_is_an_error(memory):
    with pytest.raises(CommandError):
        call_command("rebuild_projection", "--memory", "nope", stdout=StringIO())


def test_reindex_keeps_search_working(memory, me):
    from memory.search import lexical_candidates

    e = remember(memory, me, "Leader election uses advisory locks").entry
    code, out = run("--reindex")
    assert code == 0 and "lexical index rebuilt." in out
    assert lexical_candidates(memory.pk, "leader election") == [e.pk]


def test_vectors_are_a_derived_projection_rebuilt_by_the_command(memory, me, settings):
    from memory.embeddings import _provider
    from memory.models import EntryEmbedding

    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    # dedupe=False: the admission check would embed the body, and test transactions never
    # commit, so the after-commit task never runs: the version has no vector yet.
    e = remember(memory, me, "Leader election uses advisory locks", dedupe=False).entry
    code, out = run("--check")
    assert code == 1 and "VECTORS acme: 1 head versions have no vector" in out
    code, out = run()
    assert code == 0 and "1 vectors created" in out
    (vec,) = EntryEmbedding.objects.all()
    assert vec.content_hash == Head.objects.get(entry=e).version.content_hash
    assert run("--check")[0] == 0
