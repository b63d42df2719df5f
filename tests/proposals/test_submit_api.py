"""Proposal intake over HTTP: each kind with its verification, the refusals, idempotency, the
one-open rule, staleness, and that a proposal changes nothing about memory."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memory.models import AuditEvent, Relation
from proposals.models import IdempotencyKey, Proposal, ProposalTarget
from tests.conftest import make_key

from .conftest import E, P, add, cleanup, consolidation, promotion, ref, supersession


def nothing_stored() -> None:
    assert Proposal.objects.count() == 0
    assert ProposalTarget.objects.count() == 0
    assert IdempotencyKey.objects.count() == 0
    assert not AuditEvent.objects.filter(action__startswith="proposal.").exists()


def check(verification: dict, code: str) -> dict:
    found = [c for c in verification["checks"] if c["code"] == code]
    assert found, (code, verification["checks"])
    return found[0]


# --- Each kind is accepted with its verification --------------------------------------------


def test_consolidation_is_accepted_with_pre_state_and_verification(a, agent):
    target = add(a, "Use PostgreSQL advisory locks for leader election")
    dup = add(a, "Use PostgreSQL advisory locks for leader election in the scheduler")
    body = "Use PostgreSQL advisory locks for leader election in the scheduler."
    r = a.post(P, consolidation(target, [dup], body))
    assert r.status_code == 201, r.text
    p = r.json()
    assert p["status"] == "pending" and p["kind"] == "consolidation" and p["memory"] == "acme"
    assert p["payload"] == {"target": ref(target), "redundant": [ref(dup)], "body": body}
    v = p["verification"]
    assert v["similarity"] == 0.7  # 7 shared of 10 distinct tokens, recomputed by the server
    assert v["similarity_method"] == "lexical"
    assert v["lost_details"] == []
    assert check(v, "heads_match")["status"] == "pass"
    assert check(v, "details_preserved")["status"] == "pass"
    assert check(v, "similarity")["status"] == "pass"
    entry = a.get(f"{E}/{target['entry_id']}").json()
    assert p["targets"][0] == {
        "role": "target",
        "entry_id": target["entry_id"],
        "kind": "fact",
        "sensitivity": "internal",
        "session_id": None,
        "pre_state": {"version": 1, "state": "active", "content_hash": entry["content_hash"]},
        "body": "Use PostgreSQL advisory locks for leader election",
    }
    assert [t["role"] for t in p["targets"]] == ["target", "redundant"]
    assert p["submitted_by"]["id"] == agent.actor.id
    assert p["submitted_by"]["type"] == "agent"
    assert p["decision"] == {
        "decided_by": None,
        "decided_by_label": None,
        "decided_at": None,
        "rejection_reason": None,
        "comment": None,
    }
    assert p["policy_version"].startswith("p1-")
    event = AuditEvent.objects.get(action="proposal.submitted")
    assert event.proposal_id == p["id"]
    assert event.entry_ids == [target["entry_id"], dup["entry_id"]]
    assert a.get(f"{P}/{p['id']}").json() == p


def test_lost_details_are_listed(a):
    nightly = add(a, "Deploys run nightly")
    precise = add(a, "Deploy runs at 02:00 UTC via deploy.sh")
    r = a.post(P, consolidation(nightly, [precise], "Deploys run nightly"))
    assert r.status_code == 201, r.text
    v = r.json()["verification"]
    assert [d["text"] for d in v["lost_details"]] == ["02:00", "UTC", "deploy.sh"]
    assert v["lost_detail_info"][0] == {
        "detail": "02:00",
        "kind": "time",
        "entries": [precise["entry_id"]],
    }
    assert check(v, "details_preserved")["status"] == "warn"
    # Keeping the details clears the report.
    other = add(a, "Deploys happen every night")
    r = a.post(
        P,
        consolidation(other, [precise], "Deploys run nightly at 02:00 UTC via deploy.sh"),
    )
    assert r.status_code == 201, r.text
    assert r.json()["verification"]["lost_details"] == []


def test_supersession_with_a_new_successor_is_accepted(a):
    old = add(a, "The staging database is db-stage-3", current_state=True)
    r = a.post(
        P,
        supersession(
            old,
            {
                "body": "The staging database is db-stage-4",
                "kind": "fact",
                "evidence": [{"source": "repo", "ref": "infra/staging.tf"}],
            },
            evidence=[{"source": "chat", "ref": "msg-1"}],
        ),
    )
    assert r.status_code == 201, r.text
    p = r.json()
    successor = p["payload"]["successor"]
    assert successor["body"] == "The staging database is db-stage-4"
    assert successor["evidence"][0]["ref"] == "infra/staging.tf"
    assert successor["evidence"][0]["snapshot"]["authority"] == "repository_attested"
    assert successor["sensitivity"] == "internal" and successor["tier"] == "long"
    assert len(successor["content_hash"]) == 64
    assert [t["role"] for t in p["targets"]] == ["old"]
    assert p["evidence"][0]["source"] == "chat"
    assert p["verification"]["similarity"] is not None
    # The value it replaces is named: a supersession has its lost-detail check too.
    assert [(d["text"], d["kind"]) for d in p["verification"]["lost_details"]] == [
        ("db-stage-3", "identifier")
    ]


def test_supersession_with_an_existing_successor_is_accepted(a):
    old = add(a, "The deploy target is eu-2")
    new = add(a, "Production now deploys to the eu-3 cluster")
    r = a.post(P, supersession(old, ref(new)))
    assert r.status_code == 201, r.text
    p = r.json()
    assert [t["role"] for t in p["targets"]] == ["old", "successor"]
    assert p["payload"]["successor"] == ref(new)


def test_promotion_from_two_sessions_is_accepted(a):
    n1 = add(a, "Lease expires after 30s", kind="working_note", tier="session", session_id="s-1")
    n2 = add(a, "The scheduler lease is 30s", kind="working_note", tier="session", session_id="s-2")
    r = a.post(P, promotion([n1, n2], "The scheduler lease expires after 30s.", "fact"))
    assert r.status_code == 201, r.text
    v = r.json()["verification"]
    assert check(v, "distinct_sessions")["sessions"] == ["s-1", "s-2"]
    assert v["lost_details"] == []
    assert r.json()["payload"]["target_kind"] == "fact"


def test_promotion_needs_distinct_sessions_per_policy(a, memory, reviewer, api):
    n1 = add(a, "Lease expires after 30s", kind="working_note", tier="session", session_id="s-1")
    n2 = add(a, "Renew the lease at 10s", kind="working_note", tier="session", session_id="s-1")
    r = a.post(P, promotion([n1, n2], "The lease expires after 30s; renew at 10s."))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "insufficient_sessions"
    assert r.json()["error"]["details"] == {"sessions": ["s-1"], "required": 2}
    n3 = add(a, "Lease is 30s", kind="working_note", tier="session", session_id="s-2")
    api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"promotion_min_sessions": 3}})
    r = a.post(P, promotion([n1, n3], "The lease expires after 30s."))
    assert r.status_code == 422 and r.json()["error"]["details"]["required"] == 3
    nothing_stored()


def test_cleanup_is_accepted_and_flags_valuable_entries(a):
    note = add(a, "Looked at the flaky cache test", kind="working_note")
    decision = add(
        a,
        "We chose Celery for background jobs",
        kind="decision",
        evidence=[{"source": "repo", "ref": "docs/adr/0004.md"}],
    )
    r = a.post(P, cleanup([note, decision]))
    assert r.status_code == 201, r.text
    v = r.json()["verification"]
    assert v["similarity"] is None and v["lost_details"] == []
    assert check(v, "low_value") == {
        "code": "low_value",
        "status": "warn",
        "message": "Some entries are not low-value (importance above 1).",
        "entries": [decision["entry_id"]],
    }
    assert [t["role"] for t in r.json()["targets"]] == ["entry", "entry"]


def test_a_claimed_policy_version_is_checked(a):
    x = add(a, "Tabs in Makefiles")
    r = a.post(P, cleanup([x], policy_version="p1-000000000000"))
    assert r.status_code == 201, r.text
    c = check(r.json()["verification"], "policy_version")
    assert c["status"] == "warn" and c["claimed"] == "p1-000000000000"


# --- Refusals: precise codes, nothing stored ------------------------------------------------


@pytest.fixture
def cast(a, api, agent, other_memory):
    x = add(a, "Redis is only a cache")
    y = add(a, "Redis 7 is used only as a cache")
    gone = add(a, "The FTP host is ftp-old")
    a.post(f"{E}/{gone['entry_id']}/forget", {"reason": "decommissioned"})
    elsewhere = add(a, "Other team uses Go", slug="other")
    return {"x": x, "y": y, "gone": gone, "elsewhere": elsewhere}


def _good(c: dict) -> dict:
    return consolidation(c["x"], [c["y"]], "Redis 7 is only a cache")


def _without(body: dict, key: str) -> dict:
    return {k: v for k, v in body.items() if k != key}


# name → (request built from the cast, status, code)
REFUSALS = {
    "unknown field": (lambda c: {**_good(c), "confidence": 0.9}, 400, "invalid"),
    "field of another kind": (lambda c: {**_good(c), "old": ref(c["x"])}, 400, "invalid"),
    "unknown kind": (lambda c: {**_good(c), "kind": "merge"}, 400, "invalid"),
    "missing kind": (lambda c: _without(_good(c), "kind"), 400, "invalid"),
    "missing body": (lambda c: _without(_good(c), "body"), 400, "invalid"),
    "blank rationale": (lambda c: {**_good(c), "rationale": "  "}, 400, "invalid"),
    "unknown field in a ref": (
        lambda c: {**_good(c), "target": {**ref(c["x"]), "state": "active"}},
        400,
        "invalid",
    ),
    "version as text": (
        lambda c: {**_good(c), "target": {"entry_id": c["x"]["entry_id"], "version": "1"}},
        400,
        "invalid",
    ),
    "version as bool": (
        lambda c: {**_good(c), "target": {"entry_id": c["x"]["entry_id"], "version": True}},
        400,
        "invalid",
    ),
    "version zero": (
        lambda c: {**_good(c), "target": {"entry_id": c["x"]["entry_id"], "version": 0}},
        400,
        "invalid",
    ),
    "non-ascii entry id": (
        lambda c: {**_good(c), "target": {"entry_id": "é_1", "version": 1}},
        400,
        "invalid",
    ),
    "no redundant": (lambda c: {**_good(c), "redundant": []}, 400, "invalid"),
    "same entry twice": (lambda c: consolidation(c["x"], [c["y"], c["x"]], "R"), 400, "invalid"),
    "unknown entry": (
        lambda c: consolidation(c["x"], [{"entry_id": "e_nope", "version": 1}], "R"),
        404,
        "not_found",
    ),
    "entry of another memory": (
        lambda c: consolidation(c["x"], [c["elsewhere"]], "R"),
        404,
        "not_found",
    ),
    "unknown memory": (lambda c: {**_good(c), "memory": "nowhere"}, 404, "not_found"),
    "version not the head": (
        lambda c: consolidation(c["x"], [{**c["y"], "version": 2}], "R"),
        409,
        "stale_proposal",
    ),
    "inactive entry": (lambda c: consolidation(c["x"], [c["gone"]], "R"), 409, "entry_inactive"),
    "secret in body": (
        lambda c: {**_good(c), "body": "Use key AKIAIOSFODNN7EXAMPLE for S3"},
        422,
        "secret_detected",
    ),
    "body over the limit": (lambda c: {**_good(c), "body": "x" * 8193}, 413, "too_large"),
    "too much evidence": (
        lambda c: {**_good(c), "evidence": [{"source": "repo", "ref": f"r{i}"} for i in range(33)]},
        413,
        "too_large",
    ),
    "unknown evidence source": (
        lambda c: {**_good(c), "evidence": [{"source": "nope", "ref": "x"}]},
        400,
        "invalid",
    ),
    "noop successor": (
        lambda c: supersession(c["x"], {"body": "redis is ONLY a cache.", "kind": "fact"}),
        422,
        "noop_rewrite",
    ),
    "successor mixes shapes": (
        lambda c: supersession(c["x"], {**ref(c["y"]), "body": "b"}),
        400,
        "invalid",
    ),
    "promotion of a fact": (lambda c: promotion([c["x"], c["y"]], "Redis"), 400, "invalid"),
    "promotion to a working note": (
        lambda c: promotion([c["x"], c["y"]], "Redis", target_kind="working_note"),
        400,
        "invalid",
    ),
    "cleanup of nothing": (lambda c: cleanup([]), 400, "invalid"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_malformed_or_foreign_payloads_are_refused_and_nothing_is_stored(a, cast, case):
    build, status, code = REFUSALS[case]
    r = a.post(P, build(cast), headers={"Idempotency-Key": f"k-{case}"})
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code, r.json()
    nothing_stored()


def test_refusals_name_the_field(a, cast):
    x, y = cast["x"], cast["y"]
    r = a.post(P, {**consolidation(x, [y], "b"), "old": ref(x)})
    assert r.json()["error"]["details"] == {"old": ["Unknown field."]}
    r = a.post(P, consolidation(x, [{**y, "version": 2}], "b"))
    assert r.json()["error"]["details"] == {
        "redundant[0]": {"entry_id": y["entry_id"], "version": 2, "head_version": 1}
    }
    r = a.post(P, consolidation(x, [cast["elsewhere"]], "b"))
    assert list(r.json()["error"]["details"]) == ["redundant[0]"]
    r = a.post(P, [1, 2])
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid"
    r = a.post(P, consolidation(x, [y], "b"), headers={"Idempotency-Key": "é" * 3})
    assert r.status_code == 400
    nothing_stored()


def test_reviewers_and_auditors_cannot_submit(api, a, reviewer, auditor):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis 7 is only a cache")
    for key in (reviewer, auditor):
        r = api.as_(key).post(P, consolidation(x, [y], "Redis 7 is only a cache"))
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    nothing_stored()


def test_a_scoped_key_sees_only_its_memories(api, a, scoped_agent):
    mine = a.post(P, cleanup([add(a, "Old note A"), add(a, "Old note B")])).json()
    e1 = add(a, "Go services use chi", slug="other")
    e2 = add(a, "Go services log JSON", slug="other")
    theirs = a.post(P, {**cleanup([e1, e2]), "memory": "other"})
    assert theirs.status_code == 201, theirs.text
    s = api.as_(scoped_agent)
    assert s.get(f"{P}/{mine['id']}").status_code == 200
    r = s.get(f"{P}/{theirs.json()['id']}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert [p["id"] for p in s.get(P).json()["items"]] == [mine["id"]]
    assert s.get(f"{P}?memory=other").status_code == 404
    r = s.post(P, {**cleanup([e1]), "memory": "other"})
    assert r.status_code == 404
    assert s.post(f"{P}/{theirs.json()['id']}/withdraw", {}).status_code == 404


def test_entries_above_the_key_clearance_do_not_exist(api, a):
    high = make_key("ops", "agent", clearance="restricted")
    h = api.as_(high)
    secret = add(h, "Incident 42 involved the HR system", sensitivity="restricted")
    plain = add(h, "Incident 41 involved the VPN")
    r = a.post(P, cleanup([plain, secret]))
    assert r.status_code == 404, r.text
    assert list(r.json()["error"]["details"]) == ["entries[1]"]
    visible_to_high = h.post(P, cleanup([plain, secret])).json()
    assert a.get(f"{P}/{visible_to_high['id']}").status_code == 404
    assert a.get(P).json()["items"] == []
    assert h.get(f"{P}/{visible_to_high['id']}").status_code == 200


# --- Idempotency ----------------------------------------------------------------------------


def test_same_key_same_body_replays_and_other_body_conflicts(api, a, other_agent):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis is only used as a cache")
    body = consolidation(x, [y], "Redis is only used as a cache")
    first = a.post(P, body, headers={"Idempotency-Key": "try-1"})
    assert first.status_code == 201, first.text
    again = a.post(P, dict(reversed(list(body.items()))), headers={"Idempotency-Key": "try-1"})
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other = a.post(P, {**body, "rationale": "changed"}, headers={"Idempotency-Key": "try-1"})
    assert other.status_code == 409, other.text
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert other.json()["error"]["details"] == {"proposal": first.json()["id"]}
    assert Proposal.objects.count() == 1
    assert AuditEvent.objects.filter(action="proposal.submitted").count() == 1
    # Keys belong to their submitter: another key may use the same name.
    z = add(a, "Memcached is not used")
    r = api.as_(other_agent).post(P, cleanup([z]), headers={"Idempotency-Key": "try-1"})
    assert r.status_code == 201, r.text


def test_replay_returns_the_original_even_after_it_went_stale(a):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis is only used as a cache")
    body = consolidation(x, [y], "Redis is only used as a cache")
    first = a.post(P, body, headers={"Idempotency-Key": "k"}).json()
    a.post(f"{E}/{y['entry_id']}/revise", {"body": "Redis is a cache and a broker"})
    again = a.post(P, body, headers={"Idempotency-Key": "k"})
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first["id"] and again.json()["status"] == "stale"


def test_keys_are_kept_a_day_and_free_after_expiry(a):
    from datetime import timedelta

    from django.utils import timezone

    from proposals.actions import purge_idempotency_keys

    x = add(a, "Tabs in Makefiles")
    first = a.post(P, cleanup([x]), headers={"Idempotency-Key": "day"}).json()
    record = IdempotencyKey.objects.get()
    assert record.expires_at - record.created_at >= timedelta(hours=24)
    assert purge_idempotency_keys() == 0
    a.post(f"{P}/{first['id']}/withdraw", {})
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    r = a.post(P, cleanup([x]), headers={"Idempotency-Key": "day"})
    assert r.status_code == 201 and r.json()["id"] != first["id"]
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert purge_idempotency_keys() == 1


# --- One open proposal per (kind, set of affected entries) ----------------------------------


def test_second_open_proposal_for_the_same_set_is_409_with_the_first_id(a, api, other_agent):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis is only used as a cache")
    first = a.post(P, consolidation(x, [y], "Redis is only used as a cache")).json()
    # Same set in another arrangement, by someone else: still the same open question.
    r = api.as_(other_agent).post(P, consolidation(y, [x], "Redis is only a cache"))
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "duplicate_proposal"
    assert r.json()["error"]["details"]["proposal"] == first["id"]
    # Another kind over the same set, or a different set, is a different question.
    assert a.post(P, cleanup([x, y])).status_code == 201
    assert a.post(P, cleanup([x])).status_code == 201
    # Once the first is no longer open, the set is free again.
    a.post(f"{P}/{first['id']}/withdraw", {"reason": "rethinking"})
    assert a.post(P, consolidation(y, [x], "Redis is only a cache")).status_code == 201


# --- Staleness --------------------------------------------------------------------------------


def test_revising_an_affected_entry_turns_the_pending_proposal_stale(a):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis is only used as a cache")
    unrelated = add(a, "Tabs in Makefiles")
    p = a.post(P, consolidation(x, [y], "Redis is only used as a cache")).json()
    keep = a.post(P, cleanup([unrelated])).json()
    r = a.post(f"{E}/{y['entry_id']}/revise", {"body": "Redis is a cache and a queue broker"})
    assert r.status_code == 201
    revision = r.json()["revision"]
    now = a.get(f"{P}/{p['id']}").json()
    assert now["status"] == "stale"
    assert now["stale_revision"] == revision
    assert y["entry_id"] in now["status_reason"]
    assert a.get(f"{P}/{keep['id']}").json()["status"] == "pending"
    event = AuditEvent.objects.get(action="proposal.stale")
    assert event.proposal_id == p["id"] and event.revision_number == revision
    assert event.entry_ids == [y["entry_id"]]
    assert event.actor_id == AuditEvent.objects.get(action="entry.revised").actor_id
    # A stale proposal cannot be withdrawn either: it is no longer open.
    r = a.post(f"{P}/{p['id']}/withdraw", {})
    assert r.status_code == 409 and r.json()["error"]["code"] == "already_decided"


@pytest.mark.parametrize("write", ["forget", "forget_then_reactivate"])
def test_any_head_change_makes_it_stale(a, write):
    x = add(a, "Old note about caches", kind="working_note")
    p = a.post(P, cleanup([x])).json()
    a.post(f"{E}/{x['entry_id']}/forget", {"reason": "done"})
    if write == "forget_then_reactivate":
        a.post(f"{E}/{x['entry_id']}/reactivate", {})
    assert a.get(f"{P}/{p['id']}").json()["status"] == "stale"


def test_a_pin_or_an_observation_does_not_make_it_stale(api, a, reviewer):
    x, y = add(a, "Redis is only a cache"), add(a, "Redis is only used as a cache")
    p = a.post(P, consolidation(x, [y], "Redis is only used as a cache")).json()
    api.as_(reviewer).post(
        f"{E}/{x['entry_id']}/pin",
        {"pinned": True, "category": "durable_decision", "reason": "policy"},
    )
    a.post(
        "/api/v1/memories/acme/relations",
        {"kind": "conflicts_with", "from_entry": x["entry_id"], "to_entry": y["entry_id"]},
    )
    assert a.get(f"{P}/{p['id']}").json()["status"] == "pending"


# --- A proposal changes nothing about memory -------------------------------------------------


def _memory_state(client) -> dict:
    from memory.models import Head, LifecycleProjection, Memory, Revision

    heads = sorted(Head.objects.values_list("entry_id", "version_id", "state", "revision_id"))
    projection = sorted(
        tuple(sorted((k, str(v)) for k, v in row.items()))
        for row in LifecycleProjection.objects.values()
    )
    return {
        "revisions": Revision.objects.count(),
        "head": Memory.objects.get(slug="acme").head,
        "heads": heads,
        "projection": projection,
        "relations": Relation.objects.count(),
        "search": _search(client),
    }


def _search(client) -> list:
    out = []
    for query in ["deploy nightly 02:00", "staging database", "scheduler lease", "redis cache"]:
        r = client.post("/api/v1/memories/acme/search", {"query": query, "limit": 10})
        assert r.status_code == 200, r.text
        out.append([(h["entry_id"], h["version"], h["score"]) for h in r.json()["hits"]])
    return out


def test_a_proposal_creates_no_revision_head_projection_or_recall_change(a):
    nightly = add(a, "Deploys run nightly")
    precise = add(a, "Deploy runs at 02:00 UTC via deploy.sh")
    staging = add(a, "The staging database is db-stage-3", current_state=True)
    n1 = add(a, "Scheduler lease is 30s", kind="working_note", tier="session", session_id="s1")
    n2 = add(a, "The scheduler lease is 30s", kind="working_note", tier="session", session_id="s2")
    cache = add(a, "Redis cache note", kind="working_note")
    before = _memory_state(a)
    assert any(before["search"])
    for body in [
        consolidation(nightly, [precise], "Deploys run nightly"),
        supersession(staging, {"body": "The staging database is db-stage-4", "kind": "fact"}),
        promotion([n1, n2], "The scheduler lease is 30s.", "fact"),
        cleanup([cache]),
    ]:
        r = a.post(P, body)
        assert r.status_code == 201, r.text
    assert Proposal.objects.count() == 4
    assert _memory_state(a) == before


# --- Withdraw ---------------------------------------------------------------------------------


def test_only_the_submitter_withdraws_and_only_while_pending(api, a, other_agent, reviewer):
    x = add(a, "Tabs in Makefiles")
    p = a.post(P, cleanup([x])).json()
    r = api.as_(other_agent).post(f"{P}/{p['id']}/withdraw", {})
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert api.as_(reviewer).post(f"{P}/{p['id']}/withdraw", {}).status_code == 403
    r = a.post(f"{P}/{p['id']}/withdraw", {"reason": "wrong entry", "extra": 1})
    assert r.status_code == 400
    r = a.post(f"{P}/{p['id']}/withdraw", {"reason": "wrong entry"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "withdrawn" and r.json()["status_reason"] == "wrong entry"
    event = AuditEvent.objects.get(action="proposal.withdrawn")
    assert event.proposal_id == p["id"] and event.payload == {"reason": "wrong entry"}
    r = a.post(f"{P}/{p['id']}/withdraw", {})
    assert r.status_code == 409 and r.json()["error"]["code"] == "already_decided"
    assert r.json()["error"]["details"]["status"] == "withdrawn"
    assert a.post(f"{P}/999999/withdraw", {}).status_code == 404


def test_another_key_of_the_same_owner_counts_as_the_submitter(api, memory):
    from django.contrib.auth.models import User

    User.objects.create_user("olga", password="x")
    k1 = make_key("olga-1", "agent", owner="olga")
    k2 = make_key("olga-2", "agent", owner="olga")
    x = add(api.as_(k1), "Tabs in Makefiles")
    p = api.as_(k1).post(P, cleanup([x])).json()
    r = api.as_(k2).post(f"{P}/{p['id']}/withdraw", {})
    assert r.status_code == 200, r.text


# --- Listing and reading ----------------------------------------------------------------------


def test_list_filters_and_cursor_pagination(api, a, other_agent, reviewer, auditor):
    ids = []
    for i in range(5):
        x = add(a, f"Service {i} owns queue q{i}")
        ids.append(a.post(P, cleanup([x])).json()["id"])
    n1 = add(a, "Lease is 30s", kind="working_note", tier="session", session_id="s1")
    n2 = add(a, "Lease is 30s long", kind="working_note", tier="session", session_id="s2")
    promo = api.as_(other_agent).post(P, promotion([n1, n2], "The lease is 30s.")).json()["id"]
    a.post(f"{P}/{ids[0]}/withdraw", {})
    page1 = a.get(f"{P}?kind=cleanup&status=pending&limit=2").json()
    page2 = a.get(f"{P}?kind=cleanup&status=pending&limit=2&cursor={page1['next_cursor']}").json()
    assert [p["id"] for p in page1["items"] + page2["items"]] == ids[:0:-1]
    assert page2["next_cursor"] is None
    assert [p["id"] for p in a.get(f"{P}?status=withdrawn").json()["items"]] == [ids[0]]
    assert [p["id"] for p in a.get(f"{P}?kind=promotion").json()["items"]] == [promo]
    assert [p["id"] for p in a.get(f"{P}?submitted_by={other_agent.actor.id}").json()["items"]] == [
        promo
    ]
    assert [p["id"] for p in api.as_(other_agent).get(f"{P}?submitted_by=me").json()["items"]] == [
        promo
    ]
    assert len(a.get(f"{P}?memory=acme").json()["items"]) == 6
    for key in (reviewer, auditor):
        assert len(api.as_(key).get(P).json()["items"]) == 6
    assert a.get(f"{P}?status=open").status_code == 400
    assert a.get(f"{P}?colour=red").status_code == 400
    assert a.get(f"{P}?cursor=!!").status_code == 400
    assert a.get(f"{P}/123456").status_code == 404


def test_list_and_detail_have_fixed_query_counts(a, agent, django_assert_max_num_queries):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")

    def fill(n: int) -> int:
        last = 0
        for _ in range(n):
            x = add(a, f"Consolidate me {Proposal.objects.count()}")
            y = add(a, f"Consolidate me too {Proposal.objects.count()}")
            last = a.post(P, consolidation(x, [y], "Consolidate me")).json()["id"]
        return last

    fill(2)
    # key + its memories, proposals, targets, comments, decisions, amendments
    with django_assert_max_num_queries(7):
        r = client.get(P)
    assert r.status_code == 200 and len(r.json()["items"]) == 2
    last = fill(8)
    # … + the memory filter's lookup, whatever the page size
    with django_assert_max_num_queries(8):
        r = client.get(f"{P}?memory=acme&kind=consolidation&status=pending&limit=50")
    assert r.status_code == 200 and len(r.json()["items"]) == 10
    # every list filter at once: still one query for the page
    with django_assert_max_num_queries(8):
        r = client.get(f"{P}?memory=acme&q=consolidate&submitter=me&has_lost_details=true&limit=50")
    assert r.status_code == 200 and len(r.json()["items"]) == 10
    with django_assert_max_num_queries(7):
        r = client.get(f"{P}/{last}")
    assert r.status_code == 200 and len(r.json()["targets"]) == 2


#: The statements of ``POST /proposals`` (a consolidation of two entries) through the test client:
#: the key and its Memories, the transaction, the Memory, the cited source, the entries (read,
#: then their heads again under the lock), their evidence, the duplicate check, the three INSERTs
#: (proposal, targets, audit event) with the audit seal, the reviewers to notify — and nothing
#: read back for the 201 (it read the proposal, targets, comments, verdicts and amendments again).
SUBMIT_STATEMENTS = {"sqlite": 21, "postgresql": 20}


def test_a_submission_answers_from_what_it_wrote(a, agent):
    """The 201 is built from the proposal and targets the intake wrote: a fixed number of
    statements, none reading the proposal, its targets or its discussion back, and the body is
    byte for byte the proposal as read afterwards (JSON columns in the order the database gives
    them back), however many entries it names."""
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")

    def submit(n: int) -> tuple[Any, list[str]]:
        target = add(a, f"Leader election {n} uses PostgreSQL advisory locks")
        redundant = [
            add(a, f"Leader election {n} uses PostgreSQL advisory locks, said {i}")
            for i in range(n)
        ]
        body = consolidation(
            target,
            redundant,
            f"Leader election {n} uses PostgreSQL advisory locks.",
            evidence=[{"source": "repo", "ref": "docs/adr/0004.md", "quote": "locks"}],
        )
        with CaptureQueriesContext(connection) as ctx:
            r = client.post(P, body, content_type="application/json")
        assert r.status_code == 201, r.content
        return r, [q["sql"] for q in ctx.captured_queries]

    (two, statements), (four, _) = submit(1), submit(3)
    assert len(statements) == SUBMIT_STATEMENTS[connection.vendor], statements
    read_back = ("proposalcomment", "review_decision", "proposalamendment", "proposaltarget")
    assert not [q for q in statements if q.startswith("SELECT") and any(t in q for t in read_back)]
    for r in (two, four):
        assert r.content == client.get(f"{P}/{r.json()['id']}").content


def test_openapi_describes_the_proposal_endpoints(a):
    paths = a.get("/api/v1/schema/?format=json").json()["paths"]
    for path in [
        "/api/v1/proposals",
        "/api/v1/proposals/{proposal_id}",
        "/api/v1/proposals/{proposal_id}/withdraw",
    ]:
        assert path in paths, path
    assert "requestBody" in paths["/api/v1/proposals"]["post"]


def test_a_supersession_names_the_value_and_the_clause_its_successor_drops(a):
    old = add(a, "The daily report is sent at 09:00 CET, never on weekends.", current_state=True)
    r = a.post(
        P, supersession(old, {"body": "The daily report is sent every morning.", "kind": "fact"})
    )
    assert r.status_code == 201, r.text
    lost = r.json()["verification"]["lost_details"]
    assert {(d["text"], d["kind"]) for d in lost} >= {
        ("09:00", "time"),
        ("CET", "name"),
        ("never on weekends", "negation"),
    }
    assert {d["from_entry"] for d in lost} == {old["entry_id"]}


def test_a_consolidation_that_drops_never_and_only_lists_both(a):
    redis = add(a, "Redis is used only for rate limits; never store sessions in it.")
    other = add(a, "Redis runs 5 replicas.")
    r = a.post(P, consolidation(redis, [other], "Redis runs 5 replicas and caches rate limits."))
    assert r.status_code == 201, r.text
    kinds = {d["kind"] for d in r.json()["verification"]["lost_details"]}
    assert {"negation", "restriction"} <= kinds


def test_a_merge_gluing_two_methods_fails_verification_and_needs_acknowledging(a, api, reviewer):
    first = "Database migrations are applied automatically by the deploy pipeline."
    second = "Database migrations are applied by hand by the on-call engineer."
    auto, hand = add(a, first), add(a, second)
    r = a.post(P, consolidation(auto, [hand], f"{first} {second}"))
    assert r.status_code == 201, r.text
    v = r.json()["verification"]
    assert check(v, "no_conflicting_values")["status"] == "fail"
    (conflict,) = [d for d in v["lost_details"] if d["kind"] == "conflict"]
    assert "applied by hand" in conflict["text"] and conflict["from_entry"] is None
    pid = r.json()["id"]
    r = api.as_(reviewer).post(f"/api/v1/proposals/{pid}/approve", {})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "details_not_acknowledged"
    assert conflict["text"] in r.json()["error"]["details"]["lost_details"]
