"""The OpenAPI document describes the API and the docs page is served."""

from __future__ import annotations

import pytest


def test_openapi_schema_lists_the_entry_endpoints(api, agent):
    r = api.as_(agent).get("/api/v1/schema/?format=json")
    assert r.status_code == 200, r.text[:300]
    paths = r.json()["paths"]
    for path in [
        "/api/v1/memories",
        "/api/v1/memories/{slug}/entries",
        "/api/v1/memories/{slug}/entries/{entry_id}/revise",
        "/api/v1/memories/{slug}/entries/{entry_id}/versions/{number}",
        "/api/v1/memories/{slug}/revisions",
        "/api/v1/sources/{name}/declarations",
    ]:
        assert path in paths, path
    assert "requestBody" in paths["/api/v1/memories/{slug}/entries"]["post"]


def test_docs_page_is_served(api, agent):
    r = api.as_(agent).get("/api/v1/docs/")
    assert r.status_code == 200
    assert "swagger" in r.text.lower()


def test_docs_page_loads_no_third_party_assets(api, agent):
    html = api.as_(agent).get("/api/v1/docs/").text
    assert "cdn." not in html and "unpkg" not in html


@pytest.mark.django_db  # the throttle counters are in the database (the default cache)
def test_the_api_docs_follow_a_new_users_journey_and_start_with_getting_started(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    names = [t["name"] for t in schema["tags"]]
    assert names[:3] == ["entries", "recall", "proposals"] and names[-1] == "audit"
    used = {t for ops in schema["paths"].values() for o in ops.values() for t in o.get("tags", [])}
    assert used <= set(names), used - set(names)
    assert "## Getting started" in schema["info"]["description"]
