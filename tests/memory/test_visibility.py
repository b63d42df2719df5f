"""Entries above a reader's clearance are never named to it, and nothing leaks via ids."""

from __future__ import annotations

from django.contrib.auth.models import User

from lib.pagination import encode_cursor
from memory import actions
from memory.actors import Actor
from proposals.requests import submit_request
from review import actions as review
from tests.conftest import make_key

E = "/api/v1/memories/acme/entries"


# 1. Invariant 4: exact-duplicate add is not a no-op when an invisible twin exists.
def test_exact_duplicate_add_is_noop_even_when_an_invisible_twin_exists(memory, agent):
    high = make_key("high", "agent", clearance="restricted")
    memory2 = memory
    r1 = actions.add_entry(
        memory2,
        actor=high.actor,
        body="The cache TTL is 300s",
        kind="fact",
        sensitivity="restricted",
        dedupe=False,
    )
    r2 = actions.add_entry(
        memory2, actor=agent.actor, body="The cache TTL is 300s", kind="fact", dedupe=False
    )  # invisible twin -> new entry (ok)
    assert r2.created and r2.entry.pk != r1.entry.pk
    r3 = actions.add_entry(
        memory2, actor=agent.actor, body="The cache TTL is 300s", kind="fact", dedupe=False
    )  # visible active twin r2 exists
    assert not r3.created, "invariant 4: equal to an active (visible) entry must be a no-op"


def _restricted_cleanup(memory):
    high = make_key("high", "agent", clearance="restricted")
    e = actions.add_entry(
        memory,
        actor=high.actor,
        body="Payroll export runs from host pr-7",
        kind="working_note",
        sensitivity="restricted",
        dedupe=False,
    )
    p = submit_request(
        actor=high.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "low value",
            "entries": [{"entry_id": e.entry.uid, "version": 1}],
        },
    ).proposal
    boss = Actor.for_user(User.objects.get(username="ravi"))
    res = review.approve_proposal(p.pk, actor=boss)
    return e.entry.uid, p, res


# Operations ignore clearance: an internal agent reads an operation on a restricted entry
# (its proposal is a 404 for the same key).
def test_operation_on_restricted_entries_is_404_for_internal_agent(
    api, memory, agent, other_reviewer
):
    _uid, p, res = _restricted_cleanup(memory)
    ag = api.as_(agent)
    assert ag.get(f"/api/v1/proposals/{p.pk}").status_code == 404
    r = ag.get(f"/api/v1/operations/{res.operation.pk}")
    assert r.status_code == 404, r.text


# Revision log ignores clearance: entry ids, states and reasons of restricted entries.
def test_revision_log_hides_restricted_entries(api, memory, agent):
    high = make_key("high", "agent", clearance="restricted")
    e = actions.add_entry(
        memory,
        actor=high.actor,
        body="M&A target is Foo Corp",
        kind="fact",
        sensitivity="restricted",
        dedupe=False,
    )
    actions.forget_entry(
        memory, actor=high.actor, entry_uid=e.entry.uid, reason="deal with Foo Corp cancelled"
    )
    r = api.as_(agent).get("/api/v1/memories/acme/revisions?since_revision=0")
    assert r.status_code == 200
    assert e.entry.uid not in r.text and "Foo Corp" not in r.text, r.text


# Projection annotations name entries above the reader's clearance.
def test_entry_lifecycle_does_not_name_restricted_entries(api, memory, agent):
    high = make_key("high", "agent", clearance="restricted")
    low = actions.add_entry(
        memory, actor=agent.actor, body="Region is eu-2", kind="fact", dedupe=False
    )
    hidden = actions.add_entry(
        memory,
        actor=high.actor,
        body="Region moves to eu-9 (secret)",
        kind="fact",
        sensitivity="restricted",
        dedupe=False,
    )
    actions.record_conflict(
        memory, actor=high.actor, from_entry=hidden.entry.uid, to_entry=low.entry.uid
    )
    r = api.as_(agent).get(f"{E}/{low.entry.uid}")
    assert r.status_code == 200
    assert hidden.entry.uid not in r.text, r.json()["lifecycle"]


# A forged cursor is a 500, not 400 invalid.
def test_bad_cursor_is_400(api, memory, agent):
    r = api.as_(agent).get(f"{E}?cursor={encode_cursor('abc')}")
    assert r.status_code == 400, (r.status_code, r.text[:200])
