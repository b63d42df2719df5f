"""The OpenAPI document is as strict as the server (issue 38, "looser than the server"): every
request body object the server reads strictly says ``additionalProperties: false`` — and the
server does refuse an unknown field of each body-taking operation —, every bound the server
enforces on a query parameter is in the document, and the server refuses just outside it and
accepts the bound itself. Probed over real HTTP against the served document."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.audit.test_auditor_refused import world  # noqa: F401  (fixture)
from tests.hardening.test_fuzz_schema import real_path

UNKNOWN = "zz_not_a_field"


def components(raw: dict[str, Any]) -> dict[str, Any]:
    return dict(raw["components"]["schemas"])


def refs(schema: Any) -> list[str]:
    text = json.dumps(schema)
    return [part.split('"', 1)[0] for part in text.split('"#/components/schemas/')[1:]]


def request_objects(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every object schema reachable from a request body, by component name."""
    schemas = components(raw)
    todo = [
        r
        for ops in raw["paths"].values()
        for op in ops.values()
        if isinstance(op, dict) and op.get("requestBody")
        for r in refs(op["requestBody"])
    ]
    found: dict[str, dict[str, Any]] = {}
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found[name] = schemas[name]
        todo.extend(refs(schemas[name]))
    return {n: s for n, s in found.items() if s.get("type") == "object"}


@pytest.fixture
def served(api, reviewer) -> dict[str, Any]:
    return dict(api.as_(reviewer).get("/api/v1/schema/?format=json").json())


def test_every_request_body_object_is_strict(served):
    objects = request_objects(served)
    assert len(objects) >= 30
    loose = sorted(n for n, s in objects.items() if s.get("additionalProperties") is not False)
    assert loose == []


def test_the_server_refuses_an_unknown_field_in_every_body(
    api,
    world,  # noqa: F811
    reviewer,
    agent,
    capsys,
):
    client = api.as_(reviewer)
    refused, other = [], {}
    for path, ops in served_paths(client).items():
        for method, op in ops.items():
            if not isinstance(op, dict) or not op.get("requestBody"):
                continue
            values = real_path(_Operation(path), world)
            url = path.format(**values)
            # A proposal's kind picks its body first (the document's discriminator too).
            body = {"kind": "cleanup", UNKNOWN: 1} if path == "/api/v1/proposals" else {UNKNOWN: 1}
            r = client.request(method.upper(), url, json=body)
            if r.status_code == 403:  # an agent's write: ask as the agent
                r = api.as_(agent).request(method.upper(), url, json=body)
            if r.status_code == 400:
                assert r.json()["error"]["code"] == "invalid", (path, r.text)
                assert UNKNOWN in json.dumps(r.json()["error"]["details"]), (method, path, r.text)
                refused.append(f"{method} {path}")
            else:
                other[f"{method} {path}"] = r.status_code
    with capsys.disabled():
        print(
            f"\nunknown body field: {len(refused)} operations refuse it (400); before the body: {other}"
        )
    # Only a refusal that comes before the body is read may answer otherwise (a role, an
    # object in a state where the body does not matter).
    assert other == {}
    assert len(refused) >= 26


def test_every_query_bound_is_enforced_and_documented(
    api,
    world,  # noqa: F811
    reviewer,
):
    client = api.as_(reviewer)
    probed = 0
    for path, ops in served_paths(client).items():
        get = ops.get("get")
        if not isinstance(get, dict):
            continue
        url = path.format(**real_path(_Operation(path), world))
        for parameter in get.get("parameters", []):
            schema, name = parameter.get("schema", {}), parameter["name"]
            if parameter["in"] != "query" or schema.get("type") != "integer":
                continue
            assert "minimum" in schema, (path, name, "an integer parameter without its bound")
            low = client.get(url, params={name: schema["minimum"] - 1})
            assert low.status_code == 400 and name in low.json()["error"]["details"], (path, name)
            at = client.get(url, params={name: schema["minimum"]})
            assert at.status_code == 200, (path, name, at.text)
            if name == "limit":
                assert "maximum" in schema, (path, "limit without its maximum")
            if "maximum" in schema:
                high = client.get(url, params={name: schema["maximum"] + 1})
                assert high.status_code == 400 and name in high.json()["error"]["details"], (
                    path,
                    name,
                    high.text,
                )
                assert client.get(url, params={name: schema["maximum"]}).status_code == 200
            probed += 1
    assert probed >= 6


def test_a_boolean_filter_refuses_null(api, reviewer):
    r = api.as_(reviewer).get("/api/v1/proposals", params={"has_lost_details": "null"})
    assert r.status_code == 400 and "has_lost_details" in r.json()["error"]["details"]
    ok = api.as_(reviewer).get("/api/v1/proposals", params={"has_lost_details": "false"})
    assert ok.status_code == 200


class _Operation:
    """Just enough of a schemathesis operation for ``real_path``: its path parameters."""

    def __init__(self, path: str):
        names = [part.split("}")[0] for part in path.split("{")[1:]]
        self.path_parameters = [type("P", (), {"name": n})() for n in names]


def served_paths(client: Any) -> dict[str, Any]:
    return dict(client.get("/api/v1/schema/?format=json").json()["paths"])
