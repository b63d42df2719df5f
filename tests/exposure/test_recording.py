"""Every search and Context Pack records, off the request path, which entry versions it served,
to which key and run, via which surface; ``run_id`` is validated; the policy switches it off."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from exposure import ledger
from exposure.models import Exposure
from memory import actions
from memory.actors import Actor
from tests.factories import add_via_api

S = "/api/v1/memories/acme/search"
P = "/api/v1/memories/acme/context-pack"


def rows():
    return sorted(
        (e.entry.uid, e.version, e.key, e.run_id, e.via)
        for e in Exposure.objects.select_related("entry")
    )


@pytest.fixture
def a(api, agent):
    return api.as_(agent)


def test_a_search_is_ledgered_after_the_response_not_on_it(a, agent, monkeypatch):
    monkeypatch.setattr(ledger.queue, "delay", 60.0)  # the timer must not race the assertion
    eid = add_via_api(a, "The deploy target is Frankfurt")["entry_id"]
    r = a.post(S, {"query": "deploy target", "run_id": "run-42"})
    assert r.status_code == 200, r.text
    assert [h["entry_id"] for h in r.json()["hits"]] == [eid]
    assert Exposure.objects.count() == 0  # nothing written on the request path
    assert ledger.pending() == 1
    assert ledger.flush() == 1
    assert rows() == [(eid, 1, agent.actor.id, "run-42", "search")]


def test_the_embedded_timer_writes_shortly_after(a, monkeypatch):
    import time

    monkeypatch.setattr(ledger.queue, "delay", 0.2)
    add_via_api(a, "The deploy target is Frankfurt")
    assert a.post(S, {"query": "Frankfurt"}).status_code == 200
    deadline = time.monotonic() + 10
    while Exposure.objects.count() == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert Exposure.objects.get().run_id == ""


def test_the_run_header_names_the_run_and_the_pack_is_ledgered(a, agent):
    eid = add_via_api(a, "The deploy target is Frankfurt")["entry_id"]
    r = a.post(P, {"query": "deploy target"}, headers={"X-Steward-Run": "conv-7"})
    assert r.status_code == 200, r.text
    same = a.post(P, {"query": "deploy", "run_id": "conv-7"}, headers={"X-Steward-Run": "conv-7"})
    assert same.status_code == 200, same.text
    ledger.flush()
    assert rows() == [(eid, 1, agent.actor.id, "conv-7", "context_pack")] * 2


@pytest.mark.parametrize(
    ("body", "headers", "field"),
    [
        ({"run_id": "x" * 129}, {}, "run_id"),
        ({"run_id": "läuft"}, {}, "run_id"),
        ({"run_id": ""}, {}, "run_id"),
        ({"run_id": 7}, {}, "run_id"),
        ({"run_id": "line\nbreak"}, {}, "run_id"),
        ({}, {"X-Steward-Run": "y" * 129}, "X-Steward-Run"),
        ({"run_id": "a"}, {"X-Steward-Run": "b"}, "run_id"),
    ],
)
@pytest.mark.parametrize("path", [S, P])
def test_an_invalid_run_id_is_400_and_nothing_is_ledgered(a, path, body, headers, field):
    add_via_api(a, "The deploy target is Frankfurt")
    r = a.post(path, {"query": "deploy", **body}, headers=headers)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid" and field in error["details"]
    assert ledger.pending() == 0


def test_the_policy_turns_the_ledger_off(a, memory):
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(memory, actor=founder, policy={"exposure": {"enabled": False}})
    add_via_api(a, "The deploy target is Frankfurt")
    assert a.post(S, {"query": "deploy", "run_id": "r"}).status_code == 200
    assert ledger.pending() == 0 and ledger.flush() == 0


@pytest.mark.parametrize(
    "exposure",
    [
        {"enabled": "yes"},
        {"retention_days": 0},
        {"retention_days": 3651},
        {"retention_days": 1.5},
        {"keep": True},
        [],
    ],
)
def test_the_exposure_policy_is_validated(api, reviewer, exposure):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"exposure": exposure}})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid"
    assert any(k.startswith("policy.exposure") for k in r.json()["error"]["details"])


def test_a_valid_exposure_policy_is_kept(api, reviewer):
    policy = {"exposure": {"enabled": True, "retention_days": 7}}
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": policy})
    assert r.status_code == 200, r.text
    assert r.json()["policy"]["exposure"] == {"enabled": True, "retention_days": 7}


def test_the_schema_documents_run_id_and_the_header(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    search = schema["paths"]["/api/v1/memories/{slug}/search"]["post"]
    assert any(p["name"] == "X-Steward-Run" for p in search["parameters"])
    assert "/api/v1/memories/{slug}/exposures" in schema["paths"]
