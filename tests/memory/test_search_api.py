"""The Recall endpoints over real HTTP: search, trace visibility, history, query counts."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import Revision
from tests.factories import add_via_api

S = "/api/v1/memories/acme/search"
E = "/api/v1/memories/acme/entries"


@pytest.fixture
def a(api, agent):
    return api.as_(agent)


def test_after_a_revise_search_returns_the_new_version_and_versions_the_old(a):
    eid = add_via_api(a, "The deploy target is eu-2", current_state=True)["entry_id"]
    r = a.post(f"{E}/{eid}/revise", {"body": "The deploy target is eu-3"})
    assert r.status_code == 201, r.text
    r = a.post(S, {"query": "deploy target"})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert [(h["entry_id"], h["version"], h["body"]) for h in hits] == [
        (eid, 2, "The deploy target is eu-3")
    ]
    assert hits[0]["lifecycle"]["validity"] == "current"
    assert hits[0]["lifecycle"]["time_known"] is True
    assert hits[0]["score"] == pytest.approx(1 / 61)
    assert hits[0]["channels"] == {"lexical": 1}
    versions = a.get(f"{E}/{eid}/versions").json()["items"]
    assert [v["body"] for v in versions] == [
        "The deploy target is eu-2",
        "The deploy target is eu-3",
    ]
    history = a.post(S, {"query": "deploy target", "view": "history"}).json()["hits"]
    assert {(h["version"], h["lifecycle"]["validity"]) for h in history} == {
        (1, "replaced"),
        (2, "current"),
    }


def test_forgotten_entries_are_withheld_and_history_labels_them(a):
    eid = add_via_api(a, "Builds run on Jenkins")["entry_id"]
    a.post(f"{E}/{eid}/forget", {"reason": "moved to GitHub Actions"})
    assert a.post(S, {"query": "jenkins builds"}).json()["hits"] == []
    hist = a.post(S, {"query": "jenkins builds", "view": "history"}).json()["hits"]
    assert hist[0]["lifecycle"]["validity"] == "inactive"
    assert hist[0]["lifecycle"]["validity_reason"] == "moved to GitHub Actions"


def test_entry_get_carries_the_lifecycle_annotation(a):
    eid = add_via_api(
        a,
        "Releases are cut on Tuesdays",
        kind="decision",
        evidence=[{"source": "repo", "ref": "RELEASING.md"}],
    )["entry_id"]
    body = a.get(f"{E}/{eid}").json()
    assert body["lifecycle"]["validity"] == "current"
    assert body["lifecycle"]["importance"] == 2
    assert body["lifecycle"]["evidence_strength"] == "direct"


def test_trace_is_for_reviewers_and_auditors_only(api, agent, reviewer, auditor):
    add_via_api(api.as_(agent), "Leader election uses advisory locks")
    q = {"query": "leader election", "trace": True}
    as_agent = api.as_(agent).post(S, q)
    assert as_agent.status_code == 200, as_agent.text
    assert "trace" not in as_agent.json()
    assert len(as_agent.json()["hits"]) == 1
    for key in (reviewer, auditor):
        r = api.as_(key).post(S, q)
        assert r.status_code == 200, r.text
        trace = r.json()["trace"]
        assert trace["membership_changed"] is False
        assert trace["baseline"][0]["rank"] == 1
        assert trace["validity_filter"] == {"inactive": 0, "superseded": 0}
        assert "advisory" not in r.text.split('"trace"')[1]
    assert "trace" not in api.as_(reviewer).post(S, {"query": "leader"}).json()


def test_search_input_is_validated(a):
    assert a.post(S, {"query": "x", "limit": 0}).status_code == 400
    assert a.post(S, {"query": "x", "limit": 51}).status_code == 400
    assert a.post(S, {"query": "x", "view": "everything"}).status_code == 400
    assert a.post(S, {"query": "x", "unknown": 1}).status_code == 400
    assert a.post(S, {}).status_code == 400
    r = a.post("/api/v1/memories/nope/search", {"query": "x"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_a_key_scoped_to_another_memory_gets_404(api, agent, scoped_agent):
    r = api.as_(scoped_agent).post("/api/v1/memories/other/search", {"query": "x"})
    assert r.status_code == 404


def test_search_never_writes_a_revision(a):
    add_via_api(a, "Leader election uses advisory locks")
    before = Revision.objects.count()
    for _ in range(3):
        a.post(S, {"query": "leader election", "trace": True})
        a.post("/api/v1/memories/acme/context-pack", {"query": "leader election"})
    assert Revision.objects.count() == before


@pytest.mark.parametrize("n", [3, 40])
def test_search_and_context_pack_have_fixed_query_counts(
    a, agent, reviewer, n, django_assert_max_num_queries
):
    """Search and the Context Pack: authentication, the lexical channel (at most
    ``MAX_STATEMENTS`` queries), the hits and their provenance; the trace runs the channel once
    more."""
    from memory.search.lexical import MAX_STATEMENTS

    extra = MAX_STATEMENTS - 1  # the statements beyond the first
    for i in range(n):
        add_via_api(a, f"Leader election note {i}")
    agent_client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")
    with django_assert_max_num_queries(6 + extra):
        r = agent_client.post(
            S, {"query": "leader election", "limit": 20}, content_type="application/json"
        )
    assert r.status_code == 200 and len(r.json()["hits"]) == min(n, 20)
    with django_assert_max_num_queries(6 + extra):
        r = agent_client.post(
            "/api/v1/memories/acme/context-pack",
            {"query": "leader election"},
            content_type="application/json",
        )
    assert r.status_code == 200
    reviewer_client = Client(HTTP_AUTHORIZATION=f"Bearer {reviewer.secret}")
    with django_assert_max_num_queries(8 + 2 * extra):
        r = reviewer_client.post(
            S, {"query": "leader election", "trace": True}, content_type="application/json"
        )
    assert r.status_code == 200 and "trace" in r.json()


def test_entry_list_has_a_fixed_query_count_whatever_the_page(
    a, agent, django_assert_max_num_queries
):
    for i in range(12):
        add_via_api(a, f"Leader election note {i}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")
    with django_assert_max_num_queries(7):
        r = client.get(f"{E}?validity=current&limit=10")
    assert r.status_code == 200 and len(r.json()["items"]) == 10
