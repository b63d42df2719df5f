"""Rebasing a stale proposal over REST (API.md "Proposals": ``POST …/rebase``): its references
point at the current heads, verification reruns on the current texts, earlier approvals are
void; an input that moved on is named in a 409 and nothing changes."""

from __future__ import annotations

import pytest

from memory.models import Head, Revision
from proposals.models import Proposal, ProposalTarget
from tests.conftest import make_key

pytestmark = pytest.mark.django_db(transaction=True)

E = "/api/v1/memories/acme/entries"


def rebase(client, pid, **body):
    return client.post(f"/api/v1/proposals/{pid}/rebase", body)


def test_the_submitter_rebases_a_stale_proposal_and_a_reviewer_approves_it(
    ag, rv, rv2, consolidation
):
    pid = consolidation["proposal"]["id"]
    b = consolidation["b"]
    rv.patch("/api/v1/memories/acme", {"policy": {"approvals_required": {"consolidation": 2}}})
    assert rv2.post(f"/api/v1/proposals/{pid}/approve", {}).json()["approvals"] == 1
    revised = ag.post(f"{E}/{b}/revise", {"body": "Deploys run nightly at 02:30 UTC on Mondays"})
    assert revised.ok, revised.text
    assert rv.get(f"/api/v1/proposals/{pid}").json()["status"] == "stale"

    r = rebase(ag, pid)
    assert r.status_code == 200, r.text
    p = r.json()
    assert p["status"] == "pending" and p["revision"] == 2
    assert p["stale_revision"] is None and p["status_reason"].startswith("rebased onto revision")
    by_entry = {t["entry_id"]: t for t in p["targets"]}
    assert by_entry[b]["pre_state"]["version"] == 2
    assert by_entry[b]["body"] == "Deploys run nightly at 02:30 UTC on Mondays"
    assert p["payload"]["redundant"] == [{"entry_id": b, "version": 2}]
    # Verification ran again on the current text: the merged body drops what b now says.
    lost = {d["text"] for d in p["verification"]["lost_details"]}
    assert "02:30" in lost and "Mondays" in lost
    assert p["amendments"][-1]["revision"] == 2
    # The targets of the first base stay on record; approval reads the current ones.
    assert ProposalTarget.every_base.filter(proposal_id=pid).count() == 4
    assert ProposalTarget.objects.filter(proposal_id=pid).count() == 2

    # ravi's approval was of revision 1: void, so two fresh approvals are needed.
    body = {"acknowledge_lost_details": sorted(lost)}
    first = rv2.post(f"/api/v1/proposals/{pid}/approve", body)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "pending" and first.json()["approvals"] == 1
    second = rv.post(f"/api/v1/proposals/{pid}/approve", body)
    assert second.status_code == 200, second.text
    assert second.json()["status"] == "approved"
    head_b = Head.objects.get(entry__uid=b)
    assert head_b.state == "inactive" and head_b.version.number == 2
    assert Revision.objects.filter(proposal_id=pid).count() == 1


def test_a_reviewer_may_rebase_and_then_counts_as_its_author(ag, rv, rv2, consolidation):
    pid = consolidation["proposal"]["id"]
    ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 02:00 UTC sharp"})
    r = rebase(rv, pid)
    assert r.status_code == 200, r.text
    own = rv.post(f"/api/v1/proposals/{pid}/approve", {})
    assert own.status_code == 403 and own.json()["error"]["code"] == "self_approval"


def test_an_input_that_moved_on_is_named_and_nothing_changes(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    b = consolidation["b"]
    ag.post(f"{E}/{b}/forget", {"reason": "obsolete"})
    before = Proposal.objects.get(pk=pid)
    r = rebase(ag, pid)
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "stale_proposal"
    assert error["details"]["moved_on"][b]["state"] == "inactive"
    assert b in error["message"]
    after = Proposal.objects.get(pk=pid)
    assert (after.status, after.revision, after.target_base) == ("stale", 1, 1)
    assert before.payload == after.payload


def test_a_superseded_input_is_named_with_its_successor(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    b = consolidation["b"]
    sup = ag.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "supersession",
            "rationale": "Moved to 03:00",
            "old": {"entry_id": b, "version": 1},
            "successor": {"body": "Deploys run nightly at 03:00 UTC", "kind": "fact"},
        },
        headers={"Idempotency-Key": "sup-1"},
    ).json()
    ack = [d["text"] for d in sup["verification"]["lost_details"]]
    done = rv.post(f"/api/v1/proposals/{sup['id']}/approve", {"acknowledge_lost_details": ack})
    assert done.status_code == 200, done.text
    r = rebase(rv, pid)
    assert r.status_code == 409, r.text
    moved = r.json()["error"]["details"]["moved_on"][b]
    assert moved["state"] == "inactive" or moved["superseded_by"]


def test_only_a_stale_proposal_is_rebased(ag, consolidation):
    r = rebase(ag, consolidation["proposal"]["id"])
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "already_decided"


def test_auditors_and_other_agents_may_not_rebase(api, ag, auditor, other_agent, consolidation):
    pid = consolidation["proposal"]["id"]
    ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 02:30 UTC"})
    for key in (auditor, other_agent):
        r = rebase(api.as_(key), pid)
        assert r.status_code == 403, r.text
    assert Proposal.objects.get(pk=pid).status == "stale"


def test_a_key_outside_the_memory_gets_404(api, ag, other_memory, consolidation):
    pid = consolidation["proposal"]["id"]
    elsewhere = make_key("elsewhere", "reviewer", memories=("other",))
    assert rebase(api.as_(elsewhere), pid).status_code == 404


def test_a_newer_open_proposal_on_the_same_entries_refuses_the_rebase(ag, consolidation):
    pid = consolidation["proposal"]["id"]
    a, b = consolidation["a"], consolidation["b"]
    ag.post(f"{E}/{b}/revise", {"body": "Deploys run nightly at 02:00 UTC daily"})
    newer = ag.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "Again, from the current versions",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 2}],
            "body": "Deploys run nightly at 02:00 UTC daily via deploy.sh",
        },
        headers={"Idempotency-Key": "again-1"},
    )
    assert newer.status_code == 201, newer.text
    r = rebase(ag, pid)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "duplicate_proposal"
    assert r.json()["error"]["details"]["proposal"] == newer.json()["id"]
