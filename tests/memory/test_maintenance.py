"""L1 maintenance (DESIGN §8): decay candidates, dry and real decay runs, the rebuild job, the
inventory, the Celery tasks and the maintenance endpoints.

Time travels by passing ``now=`` into the actions: nothing sleeps. Each candidate rule is proven
by an entry that breaks only that rule next to a control entry that is retired.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from memory import actions, inventory, maintenance, tasks
from memory.actors import Actor
from memory.exceptions import Forbidden, JobNotAvailable, MaintenanceDisabled
from memory.maintenance import decay
from memory.models import (
    AuditEvent,
    Entry,
    Head,
    LifecycleProjection,
    MaintenanceRun,
    Memory,
    RelationKind,
    Revision,
    RevisionChange,
    RevisionKind,
)
from proposals.requests import submit_request
from tests.conftest import make_key
from tests.factories import add_via_api, remember

LATER = timedelta(days=200)  # past the seed long-tier window (180 days)


def note(memory: Memory, actor: Actor, body: str, **extra: Any) -> Entry:
    """A low-value long-tier working note: importance 0, the decay scan's natural candidate."""
    extra.setdefault("tier", "long")
    extra.setdefault("dedupe", False)
    return remember(memory, actor, body, kind="working_note", **extra).entry


def enable(memory: Memory, **policy: Any) -> Memory:
    founder = Actor.for_user(User.objects.get(username="founder"))
    return actions.update_memory_policy(
        memory, actor=founder, policy={"l1_enabled": True, **policy}
    )


def uids(scan: maintenance.Scan) -> set[str]:
    return {c.entry_uid for c in scan.candidates}


def candidates(memory: Memory, now: Any, **policy: Any) -> set[str]:
    memory.refresh_from_db()
    return uids(maintenance.decay_candidates(memory, now, {**memory.policy, **policy}))


def state(memory: Memory) -> tuple[Any, ...]:
    """Everything a run must not change: heads, projection, revisions."""
    return (
        list(Head.objects.filter(memory=memory).order_by("pk").values_list()),
        list(LifecycleProjection.objects.filter(memory=memory).order_by("pk").values_list()),
        list(Revision.objects.filter(memory=memory).order_by("pk").values_list()),
    )


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


@pytest.fixture
def control(memory, agent) -> Entry:
    return note(memory, agent.actor, "Control note that the decay scan retires")


# --- The retention score ----------------------------------------------------------------------


def test_retention_score_decays_with_age_and_recalls_lift_it():
    now = timezone.now()
    fresh = maintenance.retention_score(
        importance=0,
        interval_started_at=now,
        time_known=True,
        recall_count=0,
        last_recalled_at=None,
        now=now,
    )
    old = maintenance.retention_score(
        importance=0,
        interval_started_at=now - timedelta(days=90),
        time_known=True,
        recall_count=0,
        last_recalled_at=None,
        now=now,
    )
    assert fresh == pytest.approx(0.25)
    assert old == pytest.approx(0.125)  # one 90-day half-life
    recalled = maintenance.retention_score(
        importance=0,
        interval_started_at=now - timedelta(days=90),
        time_known=True,
        recall_count=3,
        last_recalled_at=now,
        now=now,
    )
    assert recalled == pytest.approx(0.125 + 0.5 * math.log(4))


def test_unknown_time_never_counts_as_old_in_the_score():
    now = timezone.now()
    unknown = maintenance.retention_score(
        importance=0,
        interval_started_at=now - timedelta(days=900),
        time_known=False,
        recall_count=0,
        last_recalled_at=None,
        now=now,
    )
    assert unknown == pytest.approx(0.25)


@given(
    importance=st.integers(0, 3),
    age=st.floats(0, 5000),
    more=st.floats(0, 5000),
    recalls=st.integers(0, 1000),
)
def test_retention_score_never_grows_with_age(importance, age, more, recalls):
    now = timezone.now()

    def score(days: float) -> float:
        return maintenance.retention_score(
            importance=importance,
            interval_started_at=now - timedelta(days=days),
            time_known=True,
            recall_count=recalls,
            last_recalled_at=now - timedelta(days=days),
            now=now,
        )

    assert score(age + more) <= score(age) + 1e-12
    assert score(age) >= 0


# --- Candidate rules (each: the violator stays, the control goes) ------------------------------


def test_a_low_old_long_note_is_a_candidate_only_after_its_window(memory, control):
    now = timezone.now()
    assert candidates(memory, now + timedelta(days=179)) == set()
    assert candidates(memory, now + timedelta(days=181)) == {control.uid}


def test_short_tier_has_a_shorter_window_and_policy_can_change_it(memory, agent, control):
    short = note(memory, agent.actor, "Short tier note", tier="short")
    now = timezone.now() + timedelta(days=40)
    assert candidates(memory, now) == {short.uid}
    assert candidates(memory, now, retention_days={"short": 60}) == set()
    assert candidates(memory, now, retention_days={"long": 30}) == {short.uid, control.uid}
    # A per-kind window can only shorten.
    assert candidates(memory, now, retention_days={"working_note": 10}) == {short.uid, control.uid}


def test_inactive_entries_are_not_candidates(memory, agent, control):
    gone = note(memory, agent.actor, "Already forgotten note")
    actions.forget_entry(memory, actor=agent.actor, entry_uid=gone.uid, reason="done")
    assert candidates(memory, timezone.now() + LATER) == {control.uid}


def test_entries_whose_validity_is_not_current_are_not_candidates(memory, agent, control):
    a = note(memory, agent.actor, "Note in conflict")
    b = remember(memory, agent.actor, "A fact it conflicts with", kind="fact").entry
    actions.record_conflict(memory, actor=agent.actor, from_entry=b.uid, to_entry=a.uid)
    assert LifecycleProjection.objects.get(entry=a).validity == "unresolved_conflict"
    assert candidates(memory, timezone.now() + LATER) == {control.uid}


def test_importance_above_the_floor_is_not_a_candidate(memory, agent, control):
    fact = remember(memory, agent.actor, "A plain fact of importance one", kind="fact").entry
    assert LifecycleProjection.objects.get(entry=fact).importance == 1
    later = timezone.now() + LATER
    assert candidates(memory, later) == {control.uid}
    assert candidates(memory, later, importance_floor=1) == {control.uid, fact.uid}


def test_unknown_time_never_counts_as_old(memory, agent, control):
    legacy = note(memory, agent.actor, "Legacy note without a recorded time")
    # A legacy row: the derived projection says its time is unknown.
    LifecycleProjection.objects.filter(entry=legacy).update(time_known=False)
    assert candidates(memory, timezone.now() + timedelta(days=5000)) == {control.uid}


def test_pinned_entries_are_not_candidates(memory, agent, reviewer, control):
    pinned = note(memory, agent.actor, "Pinned note")
    actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=pinned.uid,
        pinned=True,
        category="durable_decision",
        reason="keep",
    )
    assert candidates(memory, timezone.now() + LATER) == {control.uid}


def test_session_tier_entries_are_left_to_end_session(memory, agent, control):
    note(memory, agent.actor, "Session scratch", tier="session", session_id="s-9")
    assert candidates(memory, timezone.now() + LATER) == {control.uid}


def test_an_entry_with_an_inbound_authoritative_relation_is_not_a_candidate(
    memory, agent, control, system
):
    target = note(memory, agent.actor, "Consolidation target note")
    source = remember(memory, agent.actor, "A fact consolidated into it", kind="fact").entry
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        actions.write_revision(
            locked,
            actor=system,
            kind=RevisionKind.CONSOLIDATE,
            reason="test",
            changes=[actions.Change(entry=source, to_state="inactive", state_reason="test")],
            relations=[
                actions.NewRelation(
                    kind=RelationKind.CONSOLIDATED_INTO, from_entry=source, to_entry=target
                )
            ],
        )
    assert LifecycleProjection.objects.get(entry=target).validity == "current"
    assert candidates(memory, timezone.now() + LATER) == {control.uid}


def test_an_entry_under_a_pending_proposal_is_not_a_candidate(memory, agent, control):
    touched = note(memory, agent.actor, "Note a cleanup proposal touches")
    submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "old",
            "entries": [{"entry_id": touched.uid, "version": 1}],
        },
    )
    memory.refresh_from_db()
    scan = maintenance.decay_candidates(memory, timezone.now() + LATER)
    assert uids(scan) == {control.uid}
    assert scan.skipped_pending_proposal == 1


def test_candidates_are_ordered_by_retention_score_and_bounded(memory, agent):
    older = note(memory, agent.actor, "The older note")
    start = timezone.now()
    newer = note(memory, agent.actor, "The newer note")
    Head.objects.filter(entry=older).update(interval_started_at=start - timedelta(days=30))
    LifecycleProjection.objects.filter(entry=older).update(
        interval_started_at=start - timedelta(days=30)
    )
    now = start + LATER
    scan = maintenance.decay_candidates(memory, now, {}, batch_size=1)
    assert [c.entry_uid for c in scan.candidates] == [older.uid, newer.uid]
    assert scan.candidates[0].score < scan.candidates[1].score
    bounded = maintenance.decay_candidates(memory, now, {"l1_max_per_run": 1}, batch_size=1)
    assert [c.entry_uid for c in bounded.candidates] == [older.uid]


# --- Runs ------------------------------------------------------------------------------------


def test_a_dry_run_changes_nothing_and_lists_candidates(memory, agent, control, system):
    other = note(memory, agent.actor, "Second old note")
    enable(memory)  # even when enabled, a dry run only records
    before = state(memory)
    run = maintenance.run_decay_scan(memory, actor=system, now=timezone.now() + LATER)
    assert state(memory) == before
    assert run.dry_run and run.job == "l1"
    assert {i["entry_id"] for i in run.items} == {control.uid, other.uid}
    assert {i["action"] for i in run.items} == {"would_retire"}
    assert run.counts["candidates"] == 2 and run.counts["retired"] == 0
    event = AuditEvent.objects.get(action="maintenance.run")
    assert event.run_id == run.pk and event.payload["dry_run"] is True


def test_a_real_run_is_refused_while_l1_is_disabled_and_nothing_moves(memory, control, system):
    before = state(memory)
    with pytest.raises(MaintenanceDisabled):
        maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=timezone.now() + LATER)
    assert state(memory) == before
    assert not MaintenanceRun.objects.exists()
    assert not AuditEvent.objects.filter(action="maintenance.run").exists()


def test_a_real_run_retires_in_one_revision_per_batch_bounded_and_idempotent(memory, agent, system):
    notes = [note(memory, agent.actor, f"Old note number {i}") for i in range(5)]
    enable(memory, l1_max_per_run=3)
    now = timezone.now() + LATER
    head_before = Memory.objects.get(pk=memory.pk).head
    run = maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=now, batch_size=2)
    assert run.counts["retired"] == 3
    revisions = list(Revision.objects.filter(memory=memory, number__gt=head_before))
    assert [r.kind for r in revisions] == ["forget", "forget"]
    assert [r.changes.count() for r in revisions] == [2, 1]
    assert run.counts["revisions"] == [r.number for r in revisions]
    changes = RevisionChange.objects.filter(revision__in=revisions)
    assert {c.state_reason for c in changes} == {"auto_decay:v1"}
    assert {r.reason for r in revisions} == {"auto_decay:v1"}
    retired = set(changes.values_list("entry__uid", flat=True))
    assert {i["entry_id"] for i in run.items if i["action"] == "retired"} == retired
    projection = LifecycleProjection.objects.filter(entry__uid__in=retired)
    assert {(p.state, p.auto_action_reason) for p in projection} == {("inactive", "auto_decay:v1")}
    # Bounded per run: the next run takes the remaining two, then nothing is left.
    second = maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=now)
    assert second.counts["retired"] == 2
    head = Memory.objects.get(pk=memory.pk).head
    third = maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=now)
    assert third.counts["retired"] == 0 and third.items == []
    assert Memory.objects.get(pk=memory.pk).head == head
    assert len(notes) == 5


def test_a_candidate_that_changed_before_the_lock_is_skipped(memory, agent, control, system):
    """Compare-and-set: a head that moved since the scan is left alone."""
    enable(memory)
    now = timezone.now() + LATER
    scan = maintenance.decay_candidates(Memory.objects.get(pk=memory.pk), now)
    actions.forget_entry(memory, actor=agent.actor, entry_uid=control.uid, reason="by hand")
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        ok = maintenance._still_eligible(locked, scan.candidates, now, locked.policy)
    assert ok == []


def test_reactivate_undoes_an_auto_decay(memory, agent, control, system):
    enable(memory)
    now = timezone.now() + LATER
    maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=now)
    head = Head.objects.get(entry=control)
    assert (head.state, head.state_reason) == ("inactive", "auto_decay:v1")
    version = head.version_id
    actions.reactivate_entry(memory, actor=agent.actor, entry_uid=control.uid, reason="needed")
    head = Head.objects.get(entry=control)
    assert head.state == "active" and head.version_id == version
    projection = LifecycleProjection.objects.get(entry=control)
    assert projection.auto_action_reason == "" and projection.state == "active"
    # A new interval: its retention clock starts again.
    assert head.interval_started_at > now - LATER
    soon = timezone.now() + timedelta(days=30)
    run = maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=soon)
    assert run.counts["retired"] == 0


def test_agents_and_auditors_may_not_run_maintenance(memory, agent, auditor):
    for key in (agent, auditor):
        with pytest.raises(Forbidden):
            maintenance.run_decay_scan(memory, actor=key.actor)


def test_the_rebuild_job_records_a_run_and_finds_a_tampered_row(memory, control, system):
    run = maintenance.run_projection_rebuild(memory, actor=system, dry_run=True)
    assert run.counts["differing"] == 0 and run.counts["entries"] == 1
    LifecycleProjection.objects.filter(entry=control).update(importance=3)
    check = maintenance.run_projection_rebuild(memory, actor=system, dry_run=True)
    assert check.items == [{"entry_id": control.uid, "action": "differs", "fields": ["importance"]}]
    assert LifecycleProjection.objects.get(entry=control).importance == 3
    fixed = maintenance.run_projection_rebuild(memory, actor=system, dry_run=False)
    assert fixed.counts["written"] == 1
    assert LifecycleProjection.objects.get(entry=control).importance == 0


def test_runs_are_append_only(memory, control, system):
    from memory.models import AppendOnlyError

    run = maintenance.run_decay_scan(memory, actor=system)
    with pytest.raises(AppendOnlyError):
        run.save()
    with pytest.raises(AppendOnlyError):
        run.delete()


def test_the_celery_task_runs_the_scan_as_the_system_actor(memory, control):
    enable(memory)
    run_id = tasks.l1_decay_scan.delay(memory.pk, dry_run=True).get()
    run = MaintenanceRun.objects.get(pk=run_id)
    assert run.actor_type == "system" and run.counts["candidates"] == 0  # not old yet today
    rebuild_id = tasks.rebuild_projection.delay(memory.pk).get()
    assert MaintenanceRun.objects.get(pk=rebuild_id).job == "rebuild"


def test_unknown_jobs_are_refused_and_every_named_job_is_available():
    with pytest.raises(JobNotAvailable):
        maintenance.check_job("nope")
    for job in maintenance.job_names():
        assert maintenance.check_job(job).name == job


# --- Inventory -------------------------------------------------------------------------------


def test_inventory_figures(memory, agent, system):
    note(memory, agent.actor, "Inventory note one")
    decision = remember(memory, agent.actor, "Inventory decision", kind="decision").entry
    gone = remember(memory, agent.actor, "Inventory fact to forget", kind="fact").entry
    actions.forget_entry(memory, actor=agent.actor, entry_uid=gone.uid, reason="wrong")
    note(memory, agent.actor, "Session note", tier="session", session_id="s-1")
    actions.end_session(memory, actor=agent.actor, session_id="s-1")
    kept = remember(memory, agent.actor, "Inventory fact that stays", kind="fact").entry
    enable(memory)
    maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=timezone.now() + LATER)
    submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "old",
            "entries": [{"entry_id": kept.uid, "version": 1}],
        },
    )
    inv = inventory.inventory(memory)
    assert (inv["entries"], inv["active"], inv["inactive"]) == (5, 2, 3)
    assert inv["inactive_share"] == 0.6
    # The decision and the fact: both capped at 1 for weak evidence.
    assert inv["importance"] == {"0": 0, "1": 2, "2": 0, "3": 0}
    assert inv["auto_deactivations"] == {"auto_decay:v1": 1, "session_end": 1}
    assert inv["pending_proposals"] == {"cleanup": 1}
    assert inv["near_duplicates"] == {"duplicate_of": 0, "near_duplicate_of": 0, "total": 0}
    assert inv["alerts"] == []
    assert LifecycleProjection.objects.get(entry=decision).importance == 1


@pytest.mark.parametrize("clearance", ["public", "restricted"])
def test_the_inventory_takes_a_fixed_number_of_queries_at_any_clearance(
    memory, agent, clearance, django_assert_num_queries
):
    reader = make_key(f"reader-{clearance}", "agent", clearance=clearance).actor
    for i in range(3):
        note(memory, agent.actor, f"Counted note {i}")
    # The pending and the rejected proposals are one aggregate each.
    with django_assert_num_queries(7):
        small = inventory.inventory(memory, reader)
    for i in range(3, 12):
        note(memory, agent.actor, f"Counted note {i}")
    with django_assert_num_queries(7):
        large = inventory.inventory(memory, reader)
    # Internal notes: the public reader counts none of them, the restricted one every one.
    assert (small["entries"], large["entries"]) == ((0, 0) if clearance == "public" else (3, 12))


def test_inventory_counts_live_near_duplicate_findings(memory, agent):
    remember(memory, agent.actor, "The deploy target is the eu-2 region cluster", kind="fact")
    r = remember(
        memory, agent.actor, "The deploy target is the eu-2 region cluster now", kind="fact"
    )
    found = len(r.near_duplicates)
    assert found == 1
    inv = inventory.inventory(memory)
    assert inv["near_duplicates"]["total"] == found


def test_the_inactive_share_alert_needs_more_than_60_percent_and_1000_entries(
    memory, agent, monkeypatch
):
    entries = [note(memory, agent.actor, f"Alert note {i}") for i in range(5)]
    for e in entries[:3]:
        actions.forget_entry(memory, actor=agent.actor, entry_uid=e.uid, reason="x")
    # 3/5 = 60 %: not over the share.
    monkeypatch.setattr(inventory, "INACTIVE_ALERT_MIN_ENTRIES", 4)
    assert inventory.inventory(memory)["alerts"] == []
    actions.forget_entry(memory, actor=agent.actor, entry_uid=entries[3].uid, reason="x")
    assert [a["code"] for a in inventory.inventory(memory)["alerts"]] == ["inactive_share_high"]
    # 5 entries is not more than 5: the size threshold holds too.
    monkeypatch.setattr(inventory, "INACTIVE_ALERT_MIN_ENTRIES", 5)
    assert inventory.inventory(memory)["alerts"] == []
    assert inventory.INACTIVE_ALERT_SHARE == 0.6


# --- Endpoints ---------------------------------------------------------------------------------


def bearer(key: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {key.secret}"}


def test_a_reviewer_starts_a_dry_run_and_reads_it_back(api, memory, agent, reviewer, auditor):
    add_via_api(api.as_(agent), "An API note", kind="working_note")
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["dry_run"] is True and body["status"] == "finished"
    run_id = body["run"]
    for key in (reviewer, auditor, agent):
        r = api.as_(key).get(f"/api/v1/maintenance/runs/{run_id}")
        assert r.status_code == 200, r.text
        assert r.json()["job"] == "l1" and r.json()["memory"] == "acme"


def test_roles_on_the_maintenance_endpoint(api, memory, agent, auditor, reviewer):
    for key in (agent, auditor):
        r = api.as_(key).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": True})
        assert r.status_code == 403, r.text
        assert r.json()["error"]["code"] == "forbidden"
    assert not MaintenanceRun.objects.exists()
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/rebuild", {"dry_run": True})
    assert r.status_code == 202, r.text


def test_a_real_l1_run_over_http_is_refused_while_disabled(api, memory, reviewer):
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": False})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "maintenance_disabled"
    assert not MaintenanceRun.objects.exists()


def test_with_a_broker_a_real_run_of_a_disabled_job_is_refused_before_it_is_queued(
    api, memory, reviewer, broker
):
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": False})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "maintenance_disabled"
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": True})
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "queued" and r.json()["run"] is None
    # rebuild rewrites derived rows only: a real run needs no switch
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/rebuild", {"dry_run": False})
    assert r.status_code == 202, r.text


def test_with_a_broker_a_run_while_the_job_holds_its_lock_is_refused(api, memory, reviewer, broker):
    with maintenance.job_lock(memory, "near_duplicates"):
        r = api.as_(reviewer).post(
            "/api/v1/memories/acme/maintenance/near_duplicates", {"dry_run": True}
        )
        assert r.status_code == 409, r.text
        assert r.json()["error"]["code"] == "maintenance_running"
        r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": True})
        assert r.status_code == 202, r.text  # another job is free


def test_a_worker_refused_by_the_lock_or_the_policy_logs_one_line_instead_of_raising(
    memory, reviewer, caplog
):
    """A run queued before another started, or before the policy turned the job off: in a
    worker nobody waits for the 409, so it is skipped with a warning, not a traceback."""
    from types import SimpleNamespace

    worker = SimpleNamespace(request=SimpleNamespace(id="task-2", is_eager=False))
    asked = tasks.actor_to_primitive(reviewer.actor)
    kwargs: dict[str, Any] = {"actor": asked, "correlation_id": None}
    with caplog.at_level("WARNING", logger="memory.tasks"):
        assert tasks.run_task(worker, "l1", memory.pk, dry_run=False, **kwargs) == 0
        with maintenance.job_lock(memory, "rebuild", "task-1"):
            assert tasks.run_task(worker, "rebuild", memory.pk, dry_run=True, **kwargs) == 0
    assert [r.getMessage() for r in caplog.records] == [
        f"l1 on memory {memory.pk} is disabled by its policy; skipped",
        f"rebuild on memory {memory.pk} is already running; skipped",
    ]
    assert not MaintenanceRun.objects.exists()
    # ... and recorded for whoever asked, naming the task, for its queued-run page
    skips = AuditEvent.objects.filter(action="maintenance.skipped").order_by("id")
    assert [(e.actor_label, e.payload) for e in skips] == [
        (
            reviewer.actor.label,
            {"job": "l1", "task_id": "task-2", "dry_run": False, "reason": "disabled"},
        ),
        (
            reviewer.actor.label,
            {"job": "rebuild", "task_id": "task-2", "dry_run": True, "reason": "already_running"},
        ),
    ]
    assert maintenance.task_state(memory, "rebuild", "task-2") == (
        "skipped",
        None,
        "the same job was already running on this Memory when a worker took it",
    )
    assert maintenance.task_state(memory, "rebuild", "task-9").state == "queued"
    # a scheduled run (no one asked) skipped by the lock is only the log line
    beat = SimpleNamespace(request=SimpleNamespace(id="task-4", is_eager=False))
    with maintenance.job_lock(memory, "rebuild", "task-1"):
        assert (
            tasks.run_task(
                beat, "rebuild", memory.pk, dry_run=True, actor=None, correlation_id=None
            )
            == 0
        )
    assert skips.count() == 2
    eager = SimpleNamespace(request=SimpleNamespace(id="task-3", is_eager=True))
    with pytest.raises(MaintenanceDisabled):  # in-process the caller hears it
        tasks.run_task(eager, "l1", memory.pk, dry_run=False, **kwargs)


def test_jobs_l1_enabled_is_the_switch_the_beat_reads_and_the_scan_obeys(memory, control):
    """``jobs.l1.enabled`` makes the beat queue l1 (``due_jobs``): the scan must honour it, or the
    beat queues a refused run every tick."""
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(memory, actor=founder, policy={"jobs": {"l1": {"enabled": True}}})
    assert tasks.schedule_maintenance.delay().get() == [["acme", "l1"]]
    run = MaintenanceRun.objects.get(job="l1")
    assert run.dry_run is False and run.actor_type == "system"
    assert maintenance.due_jobs(memory, timezone.now()) == []  # recorded, so not due every tick
    later = decay.run_decay_scan(
        memory, actor=Actor.system("test"), dry_run=False, now=timezone.now() + LATER
    )
    assert later.counts["retired"] == 1


def test_unknown_jobs_answer_422_and_the_injection_scan_runs(api, memory, reviewer):
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/unknown", {})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "invalid"
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/injection_scan", {})
    assert r.status_code == 202, r.text
    run = api.as_(reviewer).get(f"/api/v1/maintenance/runs/{r.json()['run']}").json()
    assert run["job"] == "injection_scan" and run["dry_run"] is True


def test_the_run_list_checks_its_query_like_every_list(api, memory, reviewer):
    rv = api.as_(reviewer)
    assert rv.post("/api/v1/memories/acme/maintenance/injection_scan", {}).status_code == 202
    runs = "/api/v1/memories/acme/maintenance/runs"
    r = rv.get(f"{runs}?job=injection_scan")
    assert r.status_code == 200 and [i["job"] for i in r.json()["items"]] == ["injection_scan"]
    assert rv.get(f"{runs}?job=l1").json()["items"] == []
    r = rv.get(f"{runs}?job=bogus")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid", r.text
    assert list(r.json()["error"]["details"]) == ["job"]
    r = rv.get(f"{runs}?colour=blue")
    assert r.status_code == 400
    assert r.json()["error"]["details"] == {"colour": ["Unknown field."]}


def test_runs_and_inventory_of_other_memories_are_404(
    api, memory, other_memory, reviewer, scoped_agent, system
):
    run = maintenance.run_decay_scan(other_memory, actor=system)
    r = api.as_(scoped_agent).get(f"/api/v1/maintenance/runs/{run.pk}")
    assert r.status_code == 404, r.text
    r = api.as_(scoped_agent).get("/api/v1/memories/other/inventory")
    assert r.status_code == 404, r.text
    r = api.as_(scoped_agent).get("/api/v1/memories/acme/inventory")
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("extra", [0, 12])
def test_inventory_and_run_detail_cost_a_fixed_number_of_queries(
    memory, agent, auditor, system, django_assert_max_num_queries, extra
):
    for i in range(extra):
        e = note(memory, agent.actor, f"Query count note {i}")
        if i % 3 == 0:
            actions.forget_entry(memory, actor=agent.actor, entry_uid=e.uid, reason="x")
    run = maintenance.run_decay_scan(memory, actor=system, now=timezone.now() + LATER)
    with django_assert_max_num_queries(10):
        r = Client().get("/api/v1/memories/acme/inventory", headers=bearer(auditor))
    assert r.status_code == 200
    assert r.json()["entries"] == extra
    with django_assert_max_num_queries(5):
        r = Client().get(f"/api/v1/maintenance/runs/{run.pk}", headers=bearer(auditor))
    assert r.status_code == 200
    assert r.json()["counts"]["candidates"] == extra - len(range(0, extra, 3))


def test_the_database_refuses_to_update_a_run(memory, system):
    """The trigger, not only Python: a raw UPDATE fails on both backends (DELETE too on
    PostgreSQL)."""
    from django.db import DatabaseError, connection

    run = maintenance.run_decay_scan(memory, actor=system)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE memory_maintenancerun SET job = 'x' WHERE id = %s", [run.pk])
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM memory_maintenancerun WHERE id = %s", [run.pk])
    assert MaintenanceRun.objects.get(pk=run.pk).job == "l1"


def test_run_items_never_name_entries_above_the_readers_clearance(memory, agent, system):
    secret = note(memory, system, "Confidential old note", sensitivity="confidential")
    plain = note(memory, agent.actor, "Internal old note")
    run = maintenance.run_decay_scan(memory, actor=system, now=timezone.now() + LATER)
    assert {i["entry_id"] for i in run.items} == {secret.uid, plain.uid}
    public = make_key("public-reader", "auditor", clearance="internal")
    r = Client().get(f"/api/v1/maintenance/runs/{run.pk}", headers=bearer(public))
    assert r.status_code == 200, r.content
    assert [i["entry_id"] for i in r.json()["items"]] == [plain.uid]
    assert r.json()["items_hidden"] == 1
    assert secret.uid not in r.content.decode()


def test_a_proposal_filed_after_the_scan_protects_its_entry_under_the_lock(memory, agent, control):
    now = timezone.now() + LATER
    scan = maintenance.decay_candidates(Memory.objects.get(pk=memory.pk), now)
    assert uids(scan) == {control.uid}
    submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "old",
            "entries": [{"entry_id": control.uid, "version": 1}],
        },
    )
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        assert maintenance._still_eligible(locked, scan.candidates, now, locked.policy) == []


def test_turning_l1_off_mid_run_stops_before_the_next_batch(memory, agent, system, monkeypatch):
    for i in range(3):
        note(memory, agent.actor, f"Mid-run note {i}")
    enable(memory)
    real = decay.write_revision

    def then_disable(*args: Any, **kwargs: Any) -> Any:
        revision = real(*args, **kwargs)
        # As if a reviewer switched it off while the run was going (a later transaction).
        Memory.objects.filter(pk=memory.pk).update(policy={"l1_enabled": False})
        return revision

    monkeypatch.setattr(decay, "write_revision", then_disable)
    run = maintenance.run_decay_scan(
        memory, actor=system, dry_run=False, now=timezone.now() + LATER, batch_size=1
    )
    assert run.counts["retired"] == 1 and run.counts["stopped"] == "l1_disabled"
    assert Head.objects.filter(memory=memory, state="inactive").count() == 1


def test_inventory_counts_auto_deactivations_cumulatively_and_measures_the_manifest(
    memory, agent, system
):
    body = "Zürich note ✓"  # multi-byte characters: bytes, not characters
    e = note(memory, agent.actor, body)
    kept = remember(memory, agent.actor, "A fact that stays", kind="fact").entry
    enable(memory)
    maintenance.run_decay_scan(memory, actor=system, dry_run=False, now=timezone.now() + LATER)
    assert Head.objects.get(entry=e).state == "inactive"
    actions.reactivate_entry(memory, actor=agent.actor, entry_uid=e.uid)
    figures = inventory.inventory(memory)
    # The retirement is still counted after the reactivation (it happened).
    assert figures["auto_deactivations"] == {"auto_decay:v1": 1}
    expected = len(body.encode()) + len(b"A fact that stays")
    assert figures["manifest_bytes"] == expected and kept
    assert figures["active_count"] == 2 and figures["conflicts"] == 0


def test_retention_half_lives_come_from_the_policy_per_tier_and_kind():
    policy = {"half_life_days": {"short": 10, "working_note": 5}}
    assert maintenance.retention_half_life(policy, "short", "fact") == 10
    assert maintenance.retention_half_life(policy, "short", "working_note") == 5
    assert maintenance.retention_half_life(policy, "long", "fact") == 90
    now = timezone.now()
    score = maintenance.retention_score(
        importance=0,
        interval_started_at=now - timedelta(days=5),
        time_known=True,
        recall_count=0,
        last_recalled_at=None,
        now=now,
        half_life_days=5,
    )
    assert score == pytest.approx(0.125)


def test_the_manifest_size_is_summed_from_projection_rows_and_reads_no_entry_text(memory, agent):
    """At a million entries reading every active body took seconds; each projection row keeps
    its head's size in bytes, kept right through a revise and a forget."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    first = remember(memory, agent.actor, "Zürich runs the night build ✓", kind="fact").entry
    second = remember(memory, agent.actor, "The cache is redis-2", kind="fact").entry
    actions.revise_entry(memory, actor=agent.actor, entry_uid=second.uid, body="The cache is rds-3")
    actions.forget_entry(memory, actor=agent.actor, entry_uid=first.uid, reason="moved")
    remember(memory, agent.actor, "Deploys are on Tuesdays", kind="fact")
    with CaptureQueriesContext(connection) as seen:
        size = inventory.manifest_bytes(memory)
    assert size == len(b"The cache is rds-3") + len(b"Deploys are on Tuesdays")
    assert len(seen) == 1 and "body" not in seen[0]["sql"].replace("body_bytes", "")
    assert LifecycleProjection.objects.get(entry=first).body_bytes == len(
        "Zürich runs the night build ✓".encode()
    )
