"""The review workflow over HTTP: comments, request changes → amend → approve, reviewer
amendments, assignment, bulk decisions and the list's search and filters."""

from __future__ import annotations

from memory.models import AuditEvent, Revision
from proposals.models import Proposal, ProposalAmendment
from review.models import Decision
from tests.factories import add_via_api
from tests.review.conftest import submit

P = "/api/v1/proposals"
E = "/api/v1/memories/acme/entries"


def detail(api, pid: int) -> dict:
    r = api.get(f"{P}/{pid}")
    assert r.status_code == 200, r.text
    return r.json()


def test_reviewers_and_the_submitter_discuss_auditors_read(
    api, ag, rv, consolidation, auditor, other_agent
):
    pid = consolidation["proposal"]["id"]
    r = ag.post(f"{P}/{pid}/comments", {"body": "Both say 02:00; the second adds nightly."})
    assert r.status_code == 201, r.text
    assert r.json()["author"] == "agent-1" and r.json()["revision"] == 1
    assert rv.post(f"{P}/{pid}/comments", {"body": "Is deploy.sh still used?"}).status_code == 201
    refused = api.as_(auditor).post(f"{P}/{pid}/comments", {"body": "I only read"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    other = api.as_(other_agent).post(f"{P}/{pid}/comments", {"body": "Not mine"})
    assert other.status_code == 403
    empty = rv.post(f"{P}/{pid}/comments", {"body": "   "})
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "invalid"
    assert rv.post(f"{P}/{pid}/approve", {"comment": "Yes, still used"}).status_code == 200

    thread = detail(api.as_(auditor), pid)["comments"]
    assert [(c["type"], c["author"], c["verdict"], c["body"]) for c in thread] == [
        ("comment", "agent-1", None, "Both say 02:00; the second adds nightly."),
        ("comment", "rita-key", None, "Is deploy.sh still used?"),
        ("decision", "rita-key", "approve", "Yes, still used"),
    ]
    # A decided proposal can still be discussed.
    assert ag.post(f"{P}/{pid}/comments", {"body": "Thanks"}).status_code == 201
    assert AuditEvent.objects.filter(action="proposal.commented", proposal_id=pid).count() == 3


def test_request_changes_then_amend_then_approve(ag, rv, lossy):
    pid = lossy["proposal"]["id"]
    assert lossy["proposal"]["verification"]["lost_details"]
    r = rv.post(f"{P}/{pid}/request-changes", {"comment": "Keep 02:00 UTC and deploy.sh"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "changes_requested"
    blocked = rv.post(f"{P}/{pid}/approve", {})
    assert blocked.status_code == 409 and blocked.json()["error"]["code"] == "already_decided"
    assert "waits for an amendment" in blocked.json()["error"]["message"]

    amended = ag.post(
        f"{P}/{pid}/amend",
        {"body": "Deploys run nightly at 02:00 UTC via deploy.sh", "comment": "Kept every detail"},
    )
    assert amended.status_code == 200, amended.text
    out = amended.json()
    assert out["status"] == "pending" and out["revision"] == 2
    assert out["verification"]["lost_details"] == []  # verification reran on the new body
    (amendment,) = out["amendments"]
    assert amendment["revision"] == 2 and amendment["comment"] == "Kept every detail"
    assert amendment["changed"]["payload"]["before"]["body"] == "Deploys run nightly"
    assert amendment["changed"]["payload"]["after"]["body"] == (
        "Deploys run nightly at 02:00 UTC via deploy.sh"
    )
    assert [c["verdict"] for c in out["comments"]] == ["request_changes"]

    approved = rv.post(f"{P}/{pid}/approve", {})
    assert approved.status_code == 200, approved.text
    target = ag.get(f"{E}/{lossy['b']}").json()
    assert target["body"] == "Deploys run nightly at 02:00 UTC via deploy.sh"
    # The reason of an earlier status does not outlive it: "amended" explained why the
    # proposal was pending again, not why it is approved.
    assert out["status_reason"] == "amended"
    assert detail(ag, pid)["status_reason"] is None
    again = rv.post(f"{P}/{pid}/approve", {})
    assert again.status_code == 409 and again.json()["error"]["details"]["reason"] is None


def test_an_amendment_voids_earlier_approvals(ag, rv, rv2, consolidation):
    assert (
        rv.patch(
            "/api/v1/memories/acme", {"policy": {"approvals_required": {"consolidation": 2}}}
        ).status_code
        == 200
    )
    pid = consolidation["proposal"]["id"]
    first = rv.post(f"{P}/{pid}/approve", {}).json()
    assert (first["status"], first["approvals"]) == ("pending", 1)
    r = ag.post(f"{P}/{pid}/amend", {"rationale": "Same schedule, stated twice"})
    assert r.status_code == 200, r.text
    # rita's approval was for revision 1: she may (and must) approve revision 2 again.
    again = rv.post(f"{P}/{pid}/approve", {}).json()
    assert (again["status"], again["approvals"]) == ("pending", 1)
    done = rv2.post(f"{P}/{pid}/approve", {}).json()
    assert done["status"] == "approved" and done["revision"] is not None
    assert Revision.objects.filter(proposal_id=pid).count() == 1


def test_an_approval_names_the_revision_it_was_read_at(ag, rv, consolidation):
    """A reviewer who read revision 1 cannot approve revision 2 by accident: 409
    proposal_amended, nothing decided; approving the revision read goes through."""
    pid = consolidation["proposal"]["id"]
    amended = ag.post(f"{P}/{pid}/amend", {"rationale": "Same schedule, stated twice"})
    assert amended.status_code == 200, amended.text
    refused = rv.post(f"{P}/{pid}/approve", {"revision": 1})
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "proposal_amended"
    assert refused.json()["error"]["details"] == {"proposal": pid, "revision": 2, "read": 1}
    assert not Decision.objects.filter(proposal_id=pid).exists()
    # A revision the proposal never had was not read: 400 invalid, not "amended since".
    future = rv.post(f"{P}/{pid}/approve", {"revision": 3})
    assert future.status_code == 400 and future.json()["error"]["code"] == "invalid", future.text
    assert list(future.json()["error"]["details"]) == ["revision"]
    assert not Decision.objects.filter(proposal_id=pid).exists()
    done = rv.post(f"{P}/{pid}/approve", {"revision": 2})
    assert done.status_code == 200 and done.json()["status"] == "approved", done.text


def test_a_reviewer_who_amends_counts_as_self(ag, rv, rv2, consolidation):
    pid = consolidation["proposal"]["id"]
    text = "Deploys run nightly at 02:00 UTC (deploy.sh)"
    r = rv.post(f"{P}/{pid}/amend", {"body": text})
    assert r.status_code == 200, r.text
    assert r.json()["amendments"][0]["author"] == "rita-key"
    refused = rv.post(f"{P}/{pid}/approve", {})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "self_approval"
    assert rv.post(f"{P}/{pid}/request-changes", {"comment": "x"}).status_code == 403
    assert rv2.post(f"{P}/{pid}/approve", {}).status_code == 200
    assert ag.get(f"{E}/{consolidation['a']}").json()["body"] == text
    # Only the submitter withdraws: amending did not make rita the submitter.
    assert ProposalAmendment.objects.filter(proposal_id=pid).count() == 1


def test_amendments_are_checked_like_submissions(api, ag, rv, consolidation, other_agent):
    pid = consolidation["proposal"]["id"]
    unknown = ag.post(f"{P}/{pid}/amend", {"entries": []})
    assert unknown.status_code == 400
    nothing = ag.post(f"{P}/{pid}/amend", {})
    assert nothing.status_code == 400 and nothing.json()["error"]["code"] == "invalid"
    noop = ag.post(f"{P}/{pid}/amend", {"body": consolidation["proposal"]["payload"]["body"]})
    assert noop.status_code == 422 and noop.json()["error"]["code"] == "noop_rewrite"
    secret = ag.post(f"{P}/{pid}/amend", {"body": "token ghp_" + "a1B2" * 9})
    assert secret.status_code == 422 and secret.json()["error"]["code"] == "secret_detected"
    assert api.as_(other_agent).post(f"{P}/{pid}/amend", {"rationale": "mine"}).status_code == 403
    cleanup = submit(
        ag,
        {
            "kind": "cleanup",
            "rationale": "Old note",
            "entries": [
                {"entry_id": add_via_api(ag, "Scratch", dedupe=False)["entry_id"], "version": 1}
            ],
        },
    )
    refused = ag.post(f"{P}/{cleanup['id']}/amend", {"body": "x"})
    assert refused.status_code == 400 and "body" in refused.json()["error"]["details"]
    assert Proposal.objects.get(pk=pid).revision == 1  # nothing was written by a refusal
    assert rv.post(f"{P}/{pid}/approve", {}).status_code == 200
    late = ag.post(f"{P}/{pid}/amend", {"rationale": "too late"})
    assert late.status_code == 409 and late.json()["error"]["code"] == "already_decided"


def test_a_proposal_waiting_for_changes_still_goes_stale_and_blocks_a_duplicate(
    ag, rv, consolidation
):
    pid = consolidation["proposal"]["id"]
    rv.post(f"{P}/{pid}/request-changes", {"comment": "Reword"})
    dup = ag.post(
        P,
        {
            "memory": "acme",
            **{k: consolidation["proposal"]["payload"][k] for k in ("target", "redundant")},
            "kind": "consolidation",
            "rationale": "again",
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    assert dup.status_code == 409 and dup.json()["error"]["details"]["proposal"] == pid
    r = ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 03:00 UTC"})
    assert r.status_code == 201, r.text
    assert detail(ag, pid)["status"] == "stale"


def test_assignment_and_the_list_filters(api, ag, rv, rv2, consolidation, lossy, auditor):
    pid, other = consolidation["proposal"]["id"], lossy["proposal"]["id"]
    r = rv.post(f"{P}/{pid}/assign", {"reviewer": "ravi"})
    assert r.status_code == 200 and r.json()["assigned_to"] == "ravi"
    bad = rv.post(f"{P}/{pid}/assign", {"reviewer": "ada"})
    assert bad.status_code == 400 and "reviewer" in bad.json()["error"]["details"]
    assert ag.post(f"{P}/{pid}/assign", {"reviewer": "ravi"}).status_code == 403

    def ids(api_, query: str) -> list[int]:
        r = api_.get(f"{P}?{query}")
        assert r.status_code == 200, r.text
        return [p["id"] for p in r.json()["items"]]

    assert ids(rv2, "assigned=me") == [pid]
    assert ids(rv, "assigned=me") == []
    assert ids(rv, "has_lost_details=true") == [other]
    assert ids(rv, "has_lost_details=false") == [pid]
    # In the proposed text of one, in an affected entry's text of the other.
    assert sorted(ids(rv, "q=deploy.sh")) == sorted([pid, other])
    assert ids(rv, "q=nightly at 02:00") == [pid]  # in the proposed text only
    assert ids(rv, "q=shorter") == [other]  # in the rationale
    assert ids(rv, f"q={lossy['a']}") == [other]  # an affected entry id
    assert ids(rv, f"entry={consolidation['b']}") == [pid]
    assert sorted(ids(rv, "submitter=agent-1")) == sorted([pid, other])
    assert ids(api.as_(auditor), "submitter=me") == []
    assert rv.post(f"{P}/{pid}/assign", {"reviewer": None}).json()["assigned_to"] is None


def test_bulk_decisions_report_each_outcome(ag, rv, consolidation, lossy):
    pid = consolidation["proposal"]["id"]
    c = add_via_api(ag, "Lint runs on every push", dedupe=False)
    d = add_via_api(ag, "Lint runs on each push to main", dedupe=False)
    third = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Same lint rule",
            "target": {"entry_id": d["entry_id"], "version": 1},
            "redundant": [{"entry_id": c["entry_id"], "version": 1}],
            "body": "Lint runs on every push to main",
        },
    )["id"]
    ag.post(f"{E}/{d['entry_id']}/revise", {"body": "Lint runs on every push to any branch"})
    r = rv.post(
        f"{P}/bulk",
        {"action": "approve", "ids": [pid, lossy["proposal"]["id"], third, 99999, pid]},
    )
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [(x["id"], x["status"]) for x in results] == [
        (pid, "approved"),
        (lossy["proposal"]["id"], "pending"),
        (third, "stale"),
        (99999, "not_found"),
    ]
    assert "error" not in results[0]
    assert results[1]["error"]["code"] == "details_not_acknowledged"
    assert results[2]["error"]["code"] == "stale_proposal"
    assert results[3]["error"]["code"] == "not_found"
    bad = rv.post(f"{P}/bulk", {"action": "reject", "ids": [lossy["proposal"]["id"]]})
    assert bad.status_code == 400 and {"reason", "comment"} <= set(bad.json()["error"]["details"])
    rejected = rv.post(
        f"{P}/bulk",
        {
            "action": "reject",
            "ids": [lossy["proposal"]["id"]],
            "reason": "loses_detail",
            "comment": "Drops 02:00",
        },
    ).json()["results"]
    assert rejected == [{"id": lossy["proposal"]["id"], "status": "rejected"}]


def test_amending_a_new_successors_text_keeps_its_kind_and_evidence(ag, rv):
    old = add_via_api(ag, "The on-call rotation changes every Monday", current_state=True)
    p = submit(
        ag,
        {
            "kind": "supersession",
            "old": {"entry_id": old["entry_id"], "version": 1},
            "successor": {
                "body": "The on-call rotation changes every Wednesday",
                "kind": "decision",
                "evidence": [{"source": "chat", "ref": "msg-22305"}],
            },
            "rationale": "Rotation day moved",
        },
    )
    reworded = "The on-call rotation changes every Wednesday at 09:00 UTC"
    r = ag.post(f"{P}/{p['id']}/amend", {"successor": {"body": reworded}})
    assert r.status_code == 200, r.text
    successor = detail(rv, p["id"])["payload"]["successor"]
    assert successor["body"] == reworded and successor["kind"] == "decision"
    assert [e["ref"] for e in successor["evidence"]] == ["msg-22305"]
    # A key given is replaced: evidence named empty is dropped, on purpose.
    r = ag.post(f"{P}/{p['id']}/amend", {"successor": {"evidence": []}})
    assert r.status_code == 200, r.text
    successor = detail(rv, p["id"])["payload"]["successor"]
    assert successor["body"] == reworded and successor["evidence"] == []


def test_a_reviewer_who_requested_changes_may_reject_directly_bulk_included(
    ag, rv, consolidation, lossy
):
    # Same reviewer, same proposal revision: the request for changes and the rejection are two
    # verdicts of one person (one verdict of each kind per revision), never a constraint clash.
    pid = lossy["proposal"]["id"]
    assert rv.post(f"{P}/{pid}/request-changes", {"comment": "Keep 02:00"}).status_code == 200
    r = rv.post(f"{P}/{pid}/reject", {"reason": "loses_detail", "comment": "Not amended"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "rejected"
    assert [d.verdict for d in Decision.objects.filter(proposal_id=pid)] == [
        "request_changes",
        "reject",
    ]
    # Through the bulk endpoint: each id decided on its own, none fails the call.
    other = consolidation["proposal"]["id"]
    assert rv.post(f"{P}/{other}/request-changes", {"comment": "Why?"}).status_code == 200
    bulk = rv.post(
        f"{P}/bulk", {"action": "reject", "ids": [other], "reason": "wrong", "comment": "No"}
    )
    assert bulk.status_code == 200, bulk.text
    assert bulk.json()["results"] == [{"id": other, "status": "rejected"}]
    # Still one verdict of a kind per person and revision: a second rejection is refused.
    again = rv.post(f"{P}/{pid}/reject", {"reason": "wrong", "comment": "Again"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"
