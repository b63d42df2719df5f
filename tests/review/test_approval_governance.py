"""Entries an approval writes get governance fields (docs/revalidation.md, "Entries an approval
writes"): a supersession's new successor takes the old entry's owner and confidence and the
review date the policy gives it at approval; a consolidation's merged target takes the first
owner, the lowest confidence, the policy's date else the earliest of its inputs' — and its
compensation puts the target's fields back; a promotion's new entry follows the consolidation
rule. The fields are carried by the revision, so a replay reproduces them."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from memory.models import Head, RevisionChange
from tests.factories import add_via_api
from tests.review.conftest import submit

E = "/api/v1/memories/acme/entries"


def approve(rv, pk: int) -> int:
    lost = rv.get(f"/api/v1/proposals/{pk}").json()["verification"]["lost_details"]
    r = rv.post(
        f"/api/v1/proposals/{pk}/approve",
        {"acknowledge_lost_details": [d["text"] for d in lost]},
    )
    assert r.status_code == 200, r.text
    return int(r.json()["operation"])


def at(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def test_a_new_successor_inherits_owner_and_confidence_and_takes_the_policys_date(ag, rv):
    r = rv.patch("/api/v1/memories/acme", {"policy": {"revalidation": {"current_state": 14}}})
    assert r.status_code == 200, r.text
    old = add_via_api(
        ag,
        "The deploy target is Frankfurt",
        current_state=True,
        owner="platform-team",
        confidence=0.8,
        review_at="2026-01-01",
    )["entry_id"]
    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved to Dublin",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "The deploy target is Dublin", "kind": "fact"},
        },
    )
    before = timezone.now()
    op = approve(rv, p["id"])
    (new,) = ag.get(f"/api/v1/operations/{op}").json()["produced"]["created_entries"]
    entry = ag.get(f"{E}/{new}").json()
    assert entry["owner"] == "platform-team" and entry["confidence"] == 0.8
    # The policy's 14 days from the approval; the old, overdue date is not carried over.
    review_at = at(entry["review_at"])
    assert review_at is not None
    assert before + timedelta(days=14) <= review_at <= timezone.now() + timedelta(days=14)
    assert entry["review_due"] is False
    change = RevisionChange.objects.get(entry__uid=new)
    assert change.attributes["owner"] == "platform-team"  # on the revision: a replay has it


def test_without_a_policy_rule_a_new_successor_has_no_review_date(ag, rv):
    old = add_via_api(ag, "The region is eu-2", owner="sre", review_at="2026-01-01")["entry_id"]
    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "The region is eu-3", "kind": "fact"},
        },
    )
    op = approve(rv, p["id"])
    (new,) = ag.get(f"/api/v1/operations/{op}").json()["produced"]["created_entries"]
    entry = ag.get(f"{E}/{new}").json()
    assert (entry["owner"], entry["confidence"], entry["review_at"]) == ("sre", None, None)


def test_a_consolidation_merges_the_governance_fields_and_compensation_restores_them(ag, rv):
    a = add_via_api(
        ag,
        "Deploys run at 02:00 UTC via deploy.sh",
        dedupe=False,
        confidence=0.9,
        review_at="2099-06-01",
    )["entry_id"]
    b = add_via_api(
        ag,
        "Deploys run nightly at 02:00 UTC",
        dedupe=False,
        owner="release-team",
        confidence=0.6,
        review_at="2099-03-01",
    )["entry_id"]
    p = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Same schedule twice",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    op = approve(rv, p["id"])
    merged = ag.get(f"{E}/{a}").json()
    assert merged["version"] == 2
    # No policy rule: the earliest review date of the inputs; the lowest confidence; the
    # target has no owner, so the redundant entry's.
    assert merged["owner"] == "release-team" and merged["confidence"] == 0.6
    assert at(merged["review_at"]) == at("2099-03-01T00:00:00Z")

    c = rv.post(f"/api/v1/operations/{op}/compensate", {"comment": "merged too eagerly"})
    assert c.status_code == 200, c.text
    back = ag.get(f"{E}/{a}").json()
    assert back["version"] == 1
    assert (back["owner"], back["confidence"]) == (None, 0.9)
    assert at(back["review_at"]) == at("2099-06-01T00:00:00Z")


def test_a_consolidation_takes_the_policys_date_when_a_rule_applies(ag, rv):
    r = rv.patch("/api/v1/memories/acme", {"policy": {"revalidation": {"fact": 30}}})
    assert r.status_code == 200, r.text
    a = add_via_api(ag, "Builds use Python 3.11 on Linux", dedupe=False, review_at="2026-01-01")
    b = add_via_api(ag, "Builds run Python 3.11", dedupe=False)
    p = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Same fact twice",
            "target": {"entry_id": a["entry_id"], "version": 1},
            "redundant": [{"entry_id": b["entry_id"], "version": 1}],
            "body": "Builds run Python 3.11 on Linux",
        },
    )
    approve(rv, p["id"])
    head = Head.objects.get(entry__uid=a["entry_id"])
    assert head.review_at is not None
    assert head.review_at > timezone.now() + timedelta(days=29)


def test_a_promoted_entry_follows_the_consolidation_rule(ag, rv):
    notes = [
        add_via_api(
            ag,
            body,
            kind="working_note",
            tier="session",
            session_id=session,
            dedupe=False,
            **extra,
        )["entry_id"]
        for body, session, extra in (
            ("Working note: scheduler lease is 30s", "s1", {"confidence": 0.7}),
            (
                "Working note: the scheduler lease of 30s keeps expiring",
                "s2",
                {"owner": "infra", "confidence": 0.5, "review_at": "2099-02-01"},
            ),
        )
    ]
    p = submit(
        ag,
        {
            "kind": "promotion",
            "rationale": "Seen in two sessions",
            "notes": [{"entry_id": n, "version": 1} for n in notes],
            "target_kind": "fact",
            "body": "The scheduler lease is 30s and keeps expiring under load; working note from sessions",
        },
    )
    op = approve(rv, p["id"])
    (new,) = ag.get(f"/api/v1/operations/{op}").json()["produced"]["created_entries"]
    entry = ag.get(f"{E}/{new}").json()
    assert (entry["owner"], entry["confidence"]) == ("infra", 0.5)
    assert at(entry["review_at"]) == at("2099-02-01T00:00:00Z")
