"""Rules of the approval engine: compensation restores heads exactly, one person is one
approval, compensation respects clearance, and a moved target makes a pending merge stale."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from memory import actions
from memory.actors import Actor
from memory.models import Head, LifecycleProjection
from proposals.requests import submit_request
from review import actions as review
from review.exceptions import AlreadyDecided, NotFound
from tests.conftest import make_key

HEAD_FIELDS = (
    "version_id",
    "state",
    "state_reason",
    "interval_started_at",
    "pinned",
    "importance_override",
)
PROJ_FIELDS = (
    "version_id",
    "state",
    "validity",
    "validity_reason",
    "successor_entry_id",
    "importance",
    "interval_started_at",
    "auto_action_reason",
)


def add(memory, actor, body, **kw):
    kw.setdefault("dedupe", False)
    kw.setdefault("kind", "fact")
    return actions.add_entry(memory, actor=actor, body=body, **kw)


def snap(entries):
    return {
        e.uid: (
            {f: getattr(Head.objects.get(entry=e), f) for f in HEAD_FIELDS},
            {f: getattr(LifecycleProjection.objects.get(entry=e), f) for f in PROJ_FIELDS},
        )
        for e in entries
    }


def diff(a, b):
    return {
        (uid, f): (a[uid][i][f], b[uid][i][f])
        for uid in a
        for i in (0, 1)
        for f in a[uid][i]
        if a[uid][i][f] != b[uid][i][f]
    }


# Compensating a promotion leaves notes that were already inactive (session_end) inactive.
def test_promotion_compensation_restores_inactive_notes_as_inactive(memory, agent, reviewer):
    n1 = add(
        memory,
        agent.actor,
        "Use pnpm for the web app",
        kind="working_note",
        tier="session",
        session_id="s1",
    )
    n2 = add(
        memory,
        agent.actor,
        "Use pnpm for the web app builds",
        kind="working_note",
        tier="session",
        session_id="s2",
    )
    actions.end_session(memory, actor=agent.actor, session_id="s1")
    assert Head.objects.get(entry=n1.entry).state == "inactive"
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "promotion",
            "rationale": "recurring",
            "notes": [
                {"entry_id": n1.entry.uid, "version": 1},
                {"entry_id": n2.entry.uid, "version": 1},
            ],
            "target_kind": "preference",
            "body": "Use pnpm for the web app builds",
        },
    ).proposal
    res = review.approve_proposal(p.pk, actor=reviewer.actor)
    assert res.operation is not None
    review.compensate_operation(res.operation.pk, actor=reviewer.actor, comment="undo")
    h1 = Head.objects.get(entry=n1.entry)
    # pre-state recorded by the operation says inactive/session_end
    assert res.operation.pre_state[0]["state"] == "inactive"
    assert (h1.state, h1.state_reason) == ("inactive", "session_end"), (h1.state, h1.state_reason)


# A key and its owner's browser session are one person: they supply one approval, not two.
def test_same_person_cannot_supply_two_of_the_required_approvals(memory, agent, reviewer):
    actions.update_memory_policy(
        memory, actor=reviewer.actor, policy={"approvals_required": {"cleanup": 2}}
    )
    e = add(memory, agent.actor, "old scratch note", kind="working_note")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "low value",
            "entries": [{"entry_id": e.entry.uid, "version": 1}],
        },
    ).proposal
    rita_session = Actor.for_user(User.objects.get(username="rita"))
    first = review.approve_proposal(p.pk, actor=reviewer.actor)  # rita's key
    assert first.revision is None
    with pytest.raises(AlreadyDecided):
        review.approve_proposal(p.pk, actor=rita_session)  # rita again, in the browser


# An operation on entries above a reviewer key's clearance does not exist for that key: it
# cannot be compensated (404), and no conflict details name those entries.
def test_low_clearance_reviewer_cannot_compensate_restricted_operation(
    memory, reviewer, other_reviewer
):
    high = make_key("high", "agent", clearance="restricted")
    e = add(memory, high.actor, "secret-ish scratch", kind="working_note", sensitivity="restricted")
    p = submit_request(
        actor=high.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "low value",
            "entries": [{"entry_id": e.entry.uid, "version": 1}],
        },
    ).proposal
    boss = Actor.for_user(User.objects.get(username="ravi"))  # restricted clearance (user)
    res = review.approve_proposal(p.pk, actor=boss)
    assert res.operation is not None
    assert reviewer.actor.clearance == "internal"
    with pytest.raises(NotFound):
        review.compensate_operation(res.operation.pk, actor=reviewer.actor, comment="undo")


def test_supersession_compensation_restores_old_head_exactly(memory, agent, reviewer):
    old = add(memory, agent.actor, "Deploy target is eu-2", current_state=True).entry
    new = add(memory, agent.actor, "Deploy target is eu-3 since March", current_state=True).entry
    before = snap([old, new])
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "supersession",
            "rationale": "moved",
            "old": {"entry_id": old.uid, "version": 1},
            "successor": {"entry_id": new.uid, "version": 1},
        },
    ).proposal
    res = review.approve_proposal(
        p.pk, actor=reviewer.actor, acknowledge_lost_details=review.lost_detail_names(p)
    )
    assert res.operation is not None
    review.compensate_operation(res.operation.pk, actor=reviewer.actor, comment="undo")
    d = diff(before, snap([old, new]))
    assert not d, d


def test_consolidation_compensation_restores_heads_exactly(memory, agent, reviewer):
    a = add(memory, agent.actor, "Backups run at 03:00 UTC").entry
    b = add(memory, agent.actor, "Backups run nightly at 03:00 UTC").entry
    before = snap([a, b])
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "same",
            "target": {"entry_id": a.uid, "version": 1},
            "redundant": [{"entry_id": b.uid, "version": 1}],
            "body": "Backups run nightly at 03:00 UTC",
        },
    ).proposal
    res = review.approve_proposal(p.pk, actor=reviewer.actor)
    assert res.operation is not None
    review.compensate_operation(res.operation.pk, actor=reviewer.actor, comment="undo")
    d = diff(before, snap([a, b]))
    assert not d, d


def test_pending_consolidation_into_a_newly_superseded_entry_goes_stale(memory, agent, reviewer):
    o = add(memory, agent.actor, "Build cache lives on host cache-1 port 6379").entry
    r = add(memory, agent.actor, "Build cache on cache-1 port 6379 needs VPN").entry
    s = add(memory, agent.actor, "Build cache moved to cache-2 port 6380").entry
    p_merge = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "same host",
            "target": {"entry_id": o.uid, "version": 1},
            "redundant": [{"entry_id": r.uid, "version": 1}],
            "body": "Build cache lives on host cache-1 port 6379 and needs VPN",
        },
    ).proposal
    p_sup = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "supersession",
            "rationale": "moved",
            "old": {"entry_id": o.uid, "version": 1},
            "successor": {"entry_id": s.uid, "version": 1},
        },
    ).proposal
    review.approve_proposal(
        p_sup.pk, actor=reviewer.actor, acknowledge_lost_details=review.lost_detail_names(p_sup)
    )
    assert LifecycleProjection.objects.get(entry=o).validity == "superseded"
    p_merge.refresh_from_db()
    # The merge was reviewed against a *current* target; it now folds r into a superseded
    # entry, so r's text leaves current recall entirely.
    assert p_merge.status == "stale", p_merge.status
