"""Hostile input gets a 4xx in the error envelope, never a 500: deep nesting, NUL characters.

Runs on both databases; on PostgreSQL a NUL reaching a query would fail in the driver (500).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.factories import add_via_api

DEPTH = 950  # the probe's depth; well under 2 KB


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def schema_writes(api, key) -> list[tuple[str, str]]:
    schema = api.as_(key).get("/api/v1/schema/?format=json").json()
    out = []
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if method in ("post", "put", "patch") and "requestBody" in op:
                out.append((method, path))
    return out


def filled(path: str, entry_id: str) -> str:
    values = {"slug": "acme", "entry_id": entry_id, "name": "repo", "session_id": "s-1"}
    return re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), "1"), path)


def assert_envelope(r: Any, status: int, code: str) -> None:
    assert r.status_code == status, (r.request.method, r.url, r.status_code, r.text[:300])
    assert r.headers["Content-Type"].startswith("application/json"), r.headers
    assert r.json()["error"]["code"] == code, r.text


def test_deeply_nested_json_is_refused_on_every_json_endpoint(api, agent, reviewer):
    entry = add_via_api(api.as_(agent), "A target for nested bodies")
    writes = schema_writes(api, reviewer)
    assert len(writes) >= 15
    for body in (nested(DEPTH), nested_object(DEPTH), nested(40)):
        assert len(body) < 8 * 1024
        parsed = 0
        for method, path in writes:
            # Each endpoint is sent the body by a key whose role may make the request (a role that
            # may never make it is refused 403 before its body is read): the reviewer's, else the
            # agent's.
            for key in (reviewer, agent):
                r = api.as_(key).request(
                    method.upper(),
                    filled(path, entry["entry_id"]),
                    data=body,
                    headers={"Content-Type": "application/json", "Idempotency-Key": "deep"},
                )
                if r.status_code != 403:
                    break
            if r.status_code in (403, 404):  # refused before the body was read: fine too
                assert r.json()["error"]["code"] in ("forbidden", "not_found"), r.text
                continue
            assert_envelope(r, 400, "invalid")
            assert "deeper" in r.json()["error"]["message"], r.text
            parsed += 1
        assert parsed >= len(writes) - 4, (parsed, len(writes))


def test_json_at_ordinary_depth_still_parses(api, agent):
    r = api.as_(agent).post(
        "/api/v1/memories/acme/entries",
        {
            "body": "Evidence nests three levels",
            "kind": "fact",
            "evidence": [{"source": "repo", "ref": "a.py"}],
        },
    )
    assert r.status_code == 201, r.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/memories/acme/entries/e_%00",
        "/api/v1/memories/acme/entries/e_%00/versions",
        "/api/v1/sources/re%00po",
        "/api/v1/memories/ac%00me",
        "/api/v1/proposals/1%00",
    ],
)
def test_nul_in_a_path_is_a_json_404(api, agent, path):
    for method in ("GET", "POST"):
        assert_envelope(api.as_(agent).request(method, path, json={}), 404, "not_found")


def test_nul_in_a_session_path_is_a_json_404_and_retires_nothing(api, agent):
    add_via_api(
        api.as_(agent), "A scratch note", kind="working_note", tier="session", session_id="s"
    )
    r = api.as_(agent).post("/api/v1/memories/acme/sessions/s%00x/end")
    assert_envelope(r, 404, "not_found")
    r = api.as_(agent).get("/api/v1/memories/acme/entries?tier=session")
    assert r.status_code == 200 and len(r.json()["items"]) == 1, r.text


@pytest.mark.parametrize(
    "query",
    [
        "/api/v1/audit/events?actor=a%00b",
        "/api/v1/audit/events?memory=acme%00",
        "/api/v1/memories/acme/entries?kind=fa%00ct",
        "/api/v1/proposals?q=x%00",
        "/api/v1/memories/acme/revisions?since_revision=1%00",
    ],
)
def test_nul_in_a_query_is_a_json_400(api, auditor, query):
    assert_envelope(api.as_(auditor).get(query), 400, "invalid")


def test_nul_on_a_page_is_refused_without_a_500(api, reviewer):
    r = api.get("/memories/acme/entries/e_%00/")
    assert r.status_code == 404
    r = api.get("/audit/?actor=a%00b")
    assert r.status_code == 400


def test_nul_inside_a_json_string_is_refused(api, agent):
    for body in (
        {"body": "a\u0000b", "kind": "fact"},
        {"body": "fine", "kind": "fact", "evidence": [{"source": "repo", "ref": "x\u0000"}]},
        {"body": "fine", "kind": "fact", "session_id": "s\u0000"},
    ):
        r = api.as_(agent).post("/api/v1/memories/acme/entries", body)
        assert_envelope(r, 400, "invalid")
    r = api.as_(agent).get("/api/v1/memories/acme/entries")
    assert r.json()["items"] == []
