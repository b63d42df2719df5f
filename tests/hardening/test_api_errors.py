"""Every /api/ response is JSON in the envelope, and correlation ids are the server's own."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from audit.events import KINDS
from tests.audit.conftest import logged_in
from tests.factories import add_via_api


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@pytest.mark.parametrize(
    "path", ["/api/v1/nope", "/api/v1/memories/acme/nope/", "/api/nope", "/api/"]
)
def test_an_unknown_api_path_is_a_json_404_for_any_method(api, agent, method, path):
    r = api.as_(agent).request(method, path, json={"x": 1})
    assert r.status_code == 404, (method, path, r.status_code, r.text[:200])
    assert r.json()["error"]["code"] == "not_found"


def test_an_api_path_no_route_can_match_is_a_json_404(api, agent):
    r = api.as_(agent).post("/api/v1/memories/acme/entries/a%0Ab/revise", json={"body": "x"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text[:200]


def test_an_unknown_api_path_is_a_json_404_for_a_browser_session_without_csrf(reviewer):
    client: Client = logged_in("rita")
    client.handler.enforce_csrf_checks = True
    r = client.post("/api/v1/does-not-exist", data="{}", content_type="application/json")
    assert r.status_code == 404, r.content[:200]
    assert r.json()["error"]["code"] == "not_found"


def test_an_unknown_format_is_a_400_in_the_envelope(api, auditor):
    for path in ("/api/v1/audit/events?format=xml", "/api/v1/memories/acme?format=yaml"):
        r = api.as_(auditor).get(path)
        assert r.status_code == 400, (path, r.status_code, r.text[:200])
        body = r.json()["error"]
        assert body["code"] == "invalid" and "format" in body["details"], r.text


def test_the_json_format_still_works(api, auditor):
    assert api.as_(auditor).get("/api/v1/memories/acme?format=json").status_code == 200


def test_a_client_request_id_never_becomes_the_correlation_id(api, agent, auditor):
    from memory.models import AuditEvent

    r = api.as_(agent).post(
        "/api/v1/memories/acme/entries",
        {"body": "Who made this request?", "kind": "fact"},
        headers={"X-Request-ID": "someone-elses-request"},
    )
    assert r.status_code == 201, r.text
    server_id = r.headers["X-Request-ID"]
    assert server_id != "someone-elses-request"
    assert r.headers["X-Client-Request-ID"] == "someone-elses-request"
    ids = set(AuditEvent.objects.values_list("correlation_id", flat=True))
    assert "someone-elses-request" not in ids
    assert server_id in ids


def test_every_request_gets_its_own_correlation_id(api, agent):
    add_via_api(api.as_(agent), "one")
    a = api.as_(agent).get("/api/v1/memories/acme", headers={"X-Request-ID": "same"})
    b = api.as_(agent).get("/api/v1/memories/acme", headers={"X-Request-ID": "same"})
    assert a.headers["X-Request-ID"] != b.headers["X-Request-ID"]


def test_every_invalid_input_answer_reads_the_same(api, agent):
    """A 400 ``invalid`` says the same thing whether the body, the query string, a cursor or an
    action's own check refused it; only the details differ."""
    client = api.as_(agent)
    refusals = {
        "body field": client.post("/api/v1/memories/acme/entries", {"body": "x", "kind": "?"}),
        "entry list filter": client.get("/api/v1/memories/acme/entries?state=bogus"),
        "revision list query": client.get("/api/v1/memories/acme/revisions?since_revision=-1"),
        "page limit": client.get("/api/v1/memories/acme/entries?limit=0"),
        "cursor": client.get("/api/v1/proposals?cursor=not-a-cursor"),
        "evidence list": client.post(
            "/api/v1/memories/acme/entries", {"body": "x", "kind": "fact", "evidence": {}}
        ),
    }
    for what, r in refusals.items():
        assert r.status_code == 400, (what, r.text)
        error = r.json()["error"]
        assert error["code"] == "invalid" and error["details"], (what, r.text)
        assert error["message"] == "The request has invalid fields.", (what, r.text)


def test_a_well_formed_but_impossible_date_is_an_invalid_field_not_a_500(api, agent):
    """``2025-13-45T00:00:00`` has the shape of ISO 8601 but names no day."""
    client = api.as_(agent)
    impossible = "2025-13-45T00:00:00"
    effective = client.post(
        "/api/v1/memories/acme/entries",
        {"body": "The nightly job runs at 02:00", "kind": "fact", "effective_at": impossible},
    )
    observed = client.post(
        "/api/v1/memories/acme/entries",
        {
            "body": "The nightly job runs at 03:00",
            "kind": "fact",
            "evidence": [{"source": "repo", "ref": "cron.yaml", "observed_at": impossible}],
        },
    )
    assert effective.status_code == 400, effective.text
    assert effective.json()["error"]["details"] == {"effective_at": ["Not an ISO 8601 datetime."]}
    assert observed.status_code == 400, observed.text
    assert observed.json()["error"]["details"] == {
        "evidence[0].observed_at": ["Not an ISO datetime."]
    }


def test_an_audit_filter_refusal_reads_like_every_other_list(api, auditor):
    """The audit list and export check their query like every other list: a bad value or an
    unknown parameter is the same 400 ``invalid``, and an unknown parameter reads as an unknown
    field does elsewhere."""
    client = api.as_(auditor)
    for path in ("/api/v1/audit/events?", "/api/v1/audit/export?format=csv&"):
        r = client.get(f"{path}kind=nope&colour=red")
        assert r.status_code == 400, (path, r.text)
        error = r.json()["error"]
        assert error["message"] == "The request has invalid fields.", (path, r.text)
        assert error["details"]["colour"] == ["Unknown field."], (path, r.text)
        assert error["details"]["kind"] == [f"One of {', '.join(KINDS)}."], (path, r.text)


def test_refusals_name_accepted_values_plainly_not_as_python_lists(api, agent, reviewer, auditor):
    """A message names values as the pages do (``One of a, b.``), never as a Python repr
    (``['a', 'b']``), over the whole API."""
    rv, ag = api.as_(reviewer), api.as_(agent)

    def details(r) -> dict:
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "invalid", r.text
        return r.json()["error"]["details"]

    def policy(value: dict) -> dict:
        return details(rv.patch("/api/v1/memories/acme", {"policy": value}))

    assert policy({"bogus": 1, "other": 2}) == {"policy": ["Unknown key(s): bogus, other."]}
    assert policy({"jobs": {"nope": {"enabled": True}}}) == {
        "policy.jobs.nope": [
            "Unknown job; one of l1, rebuild, near_duplicates, contradictions, promotion, "
            "capacity, injection_scan, revalidation."
        ]
    }
    assert policy({"tau_same": {"jaccard": 0.9}}) == {
        "policy.tau_same.jaccard": ["Unknown method; one of cosine, lexical."]
    }
    assert policy({"admission_review": {"below_authority": "nobody"}}) == {
        "policy.admission_review": [
            "{below_authority?: untrusted|user_asserted|repository_attested|system_attested, "
            "injection_scan?: true|false}."
        ]
    }
    assert policy({"personal_data": {"refuse": ["shoe_size"]}}) == {
        "policy.personal_data": [
            "{refuse: [...]} with kinds from card, government_id, email, phone."
        ]
    }
    entry = add_via_api(ag, "The deploy target is eu-2")
    r = rv.post(
        f"/api/v1/memories/acme/entries/{entry['entry_id']}/pin", {"pinned": True, "reason": "r"}
    )
    assert details(r) == {"category": ["One of safety_policy, legal_constraint, durable_decision."]}
    r = api.as_(auditor).get("/api/v1/audit/export?format=xml")
    assert details(r) == {"format": ["One of csv, jsonl."]}
    r = api.as_(auditor).get("/api/v1/memories/acme?format=yaml")
    assert details(r) == {"format": ["Unknown format 'yaml': one of json."]}


def test_checks_behind_the_api_name_their_choices_plainly(memory, agent, reviewer):
    """The same wording from the checks the API's own serializers stand in front of (the
    recall pipeline, key issuing, email preferences, evidence as actions receive it): never a
    Python list."""
    from lib.errors import ValidationFailed
    from memory.actions import clean_evidence
    from memory.keys import issue_api_key
    from memory.search.pipeline import check_request
    from review.notifications import set_email_mode

    refusals = {
        "view": lambda: check_request(view="everything", intent=None, limit=5),
        "intent": lambda: check_request(view="current", intent="maybe", limit=5),
        "role": lambda: issue_api_key(name="k", role="admin"),
        "clearance": lambda: issue_api_key(name="k", role="agent", clearance="top"),
        "email": lambda: set_email_mode(reviewer.actor, mode="hourly"),
    }
    for field, refuse in refusals.items():
        with pytest.raises(ValidationFailed) as exc:
            refuse()
        (message,) = exc.value.details[field]
        assert message.startswith("One of ") and "[" not in message and "'" not in message, (
            field,
            message,
        )
    evidence: list[Any] = [{"source": "repo", "ref": "a.md", "colour": "red", "size": 2}]
    with pytest.raises(ValidationFailed) as exc:
        clean_evidence(evidence)
    assert exc.value.details == {"evidence[0]": ["Unknown field(s): colour, size."]}
