"""Admission review and quarantine over real HTTP: what an agent and a reviewer see."""

from __future__ import annotations

import pytest

from memory.models import Revision

E = "/api/v1/memories/acme/entries"
S = "/api/v1/memories/acme/search"
BODY = "The billing service retries failed webhooks five times with exponential backoff."


@pytest.fixture
def gated(api, reviewer):
    r = api.as_(reviewer).patch(
        "/api/v1/memories/acme",
        {"policy": {"admission_review": {"below_authority": "repository_attested"}}},
    )
    assert r.status_code == 200, r.text
    return api


def test_an_agent_sees_its_candidate_and_reads_the_decision(gated, agent, reviewer):
    a, rita = gated.as_(agent), gated.as_(reviewer)
    r = a.post(E, {"body": BODY, "kind": "fact", "evidence": [{"source": "chat", "ref": "m/1"}]})
    assert r.status_code == 201, r.text
    written = r.json()
    assert written["state"] == "candidate" and isinstance(written["proposal"], int)
    entry = a.get(f"{E}/{written['entry_id']}").json()
    assert entry["state"] == "candidate" and entry["lifecycle"]["validity"] == "candidate"
    assert a.post(S, {"query": "billing webhooks"}).json()["hits"] == []
    assert a.post(S, {"query": "billing webhooks", "view": "history"}).json()["hits"] == []
    refused = a.post(S, {"query": "billing webhooks", "view": "candidates"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    found = rita.post(S, {"query": "billing webhooks", "view": "candidates"}).json()["hits"]
    assert [h["entry_id"] for h in found] == [written["entry_id"]]

    pid = written["proposal"]
    r = rita.post(
        f"/api/v1/proposals/{pid}/reject",
        {"reason": "insufficient_evidence", "comment": "Cite the billing runbook."},
    )
    assert r.status_code == 200, r.text
    decided = a.get(f"/api/v1/proposals/{pid}").json()
    assert decided["status"] == "rejected"
    assert decided["decision"]["rejection_reason"] == "insufficient_evidence"
    assert decided["decision"]["comment"] == "Cite the billing runbook."
    entry = a.get(f"{E}/{written['entry_id']}").json()
    assert entry["state"] == "inactive"
    assert entry["lifecycle"]["validity_reason"] == "admission_rejected:insufficient_evidence"
    again = a.post(f"{E}/{written['entry_id']}/reactivate", {})
    assert again.status_code == 409 and again.json()["error"]["code"] == "admission_rejected"


def test_approval_over_http_admits_in_one_revision(gated, agent, reviewer):
    a, rita = gated.as_(agent), gated.as_(reviewer)
    written = a.post(E, {"body": BODY, "kind": "fact"}).json()
    before = Revision.objects.count()
    r = rita.post(f"/api/v1/proposals/{written['proposal']}/approve", {})
    assert r.status_code == 200 and r.json()["status"] == "approved", r.text
    assert Revision.objects.count() == before + 1
    hits = a.post(S, {"query": "billing webhooks"}).json()["hits"]
    assert [h["entry_id"] for h in hits] == [written["entry_id"]]


def test_an_agent_cannot_file_an_admission_proposal(gated, agent):
    a = gated.as_(agent)
    written = a.post(E, {"body": BODY, "kind": "fact"}).json()
    r = a.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "admission",
            "rationale": "admit me",
            "entry": {"entry_id": written["entry_id"], "version": 1},
        },
    )
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "admission"},
        {"kind": "admission", "memory": "acme", "rationale": "admit me", "entries": []},
    ],
    ids=["fields-missing", "fields-of-another-kind"],
)
def test_an_agent_filing_an_admission_proposal_is_refused_before_its_shape(gated, agent, body):
    r = gated.as_(agent).post("/api/v1/proposals", body)
    assert r.status_code == 403, r.text
    assert r.json()["error"] == {
        "code": "forbidden",
        "message": "'admission' proposals are filed by the server only.",
        "details": {},
    }


def test_a_role_that_may_never_make_an_entry_write_is_refused_before_its_body(api, agent, auditor):
    """403 ``forbidden`` names the role, not the fields a request it may never make lacks."""
    uid = api.as_(agent).post(E, {"body": BODY, "kind": "fact"}).json()["entry_id"]
    refusals = [
        (auditor, E, "Your role may not write entries."),
        (auditor, f"{E}/{uid}/forget", "Your role may not write entries."),
        (auditor, f"{E}/{uid}/reactivate", "Your role may not write entries."),
        (agent, f"{E}/{uid}/pin", "Only reviewers may pin entries."),
        (agent, f"{E}/{uid}/quarantine", "Only reviewers may quarantine entries."),
        (agent, f"{E}/{uid}/release", "Only reviewers may release entries."),
    ]
    for key, path, message in refusals:
        r = api.as_(key).post(path, {"colour": "blue"})
        assert r.status_code == 403, (path, r.text)
        assert r.json()["error"] == {"code": "forbidden", "message": message, "details": {}}


def test_quarantine_and_release_over_http(api, agent, reviewer):
    a, rita = api.as_(agent), api.as_(reviewer)
    written = a.post(E, {"body": BODY, "kind": "fact"}).json()
    uid = written["entry_id"]
    assert a.post(f"{E}/{uid}/quarantine", {"reason": "mine"}).status_code == 403
    missing = rita.post(f"{E}/{uid}/quarantine", {})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid"
    r = rita.post(f"{E}/{uid}/quarantine", {"reason": "Copied from an untrusted web page."})
    assert r.status_code == 200 and r.json()["state"] == "quarantined", r.text
    assert a.post(S, {"query": "billing webhooks", "view": "history"}).json()["hits"] == []
    pack = a.post("/api/v1/memories/acme/context-pack", {"query": "billing webhooks"}).json()
    assert pack["items"] == []
    # Still readable, exactly, for audit.
    versions = a.get(f"{E}/{uid}/versions").json()
    assert versions["state"] == "quarantined" and versions["items"][0]["body"] == BODY
    revise = a.post(f"{E}/{uid}/revise", {"body": "Something else entirely now."})
    assert revise.status_code == 409 and revise.json()["error"]["code"] == "entry_quarantined"
    twice = rita.post(f"{E}/{uid}/quarantine", {"reason": "again"})
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "entry_quarantined"
    r = rita.post(f"{E}/{uid}/release", {"reason": "Checked against the runbook."})
    assert r.status_code == 200 and r.json()["state"] == "active", r.text
    assert rita.post(f"{E}/{uid}/release", {"reason": "x"}).status_code == 409
    hits = a.post(S, {"query": "billing webhooks"}).json()["hits"]
    assert [h["entry_id"] for h in hits] == [uid]


def test_the_inventory_and_entry_list_show_the_new_states(gated, agent, reviewer):
    a, rita = gated.as_(agent), gated.as_(reviewer)
    cand = a.post(E, {"body": BODY, "kind": "fact"}).json()
    other = a.post(
        E,
        {
            "body": "Deploys run on Tuesdays.",
            "kind": "fact",
            "evidence": [{"source": "repo", "ref": "x"}],
        },
    ).json()
    rita.post(f"{E}/{other['entry_id']}/quarantine", {"reason": "odd"})
    inv = a.get("/api/v1/memories/acme/inventory").json()
    assert (inv["candidate_count"], inv["quarantined_count"]) == (1, 1)
    listed = a.get(f"{E}?state=candidate").json()
    assert [e["entry_id"] for e in listed["items"]] == [cand["entry_id"]]
    bad = a.get(f"{E}?state=limbo")
    assert bad.status_code == 400


def test_a_malformed_admission_policy_is_a_clear_400(api, reviewer):
    r = api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"admission_review": {"below_authority": "high"}}}
    )
    assert r.status_code == 400
    body = r.json()["error"]
    assert body["code"] == "invalid" and "policy.admission_review" in body["details"]
