"""MCP over real Streamable HTTP with the official ``mcp`` client: tools, round trips, refusals.

Each tool must give what its REST endpoint gives (same action, same presenter), under the same
key, roles, scope and audit.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import requests
from django.db import connection

from memory.models import AuditEvent, Revision
from tests.factories import add_via_api

from .conftest import ok, refused

TOOL_NAMES = {
    "remember",
    "revise",
    "forget",
    "recall",
    "context_pack",
    "propose",
    "proposal_status",
    "entry_history",
    "comment",
    "amend",
    "withdraw",
    "confirm",
    "retired_since",
}
E = "/api/v1/memories/acme/entries"


def test_tools_are_listed_with_schemas_and_annotations(mcp, agent):
    tools = mcp.as_(agent).tools()
    assert set(tools) == TOOL_NAMES
    for name in ("recall", "context_pack", "proposal_status", "entry_history"):
        assert tools[name].annotations.read_only_hint is True, name
    for name in ("remember", "revise", "forget", "propose"):
        assert tools[name].annotations.read_only_hint is False, name
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["withdraw"].annotations.destructive_hint is True
    assert tools["amend"].input_schema["required"] == ["proposal_id"]
    assert tools["comment"].input_schema["required"] == ["proposal_id", "body"]
    assert tools["remember"].annotations.destructive_hint is False

    remember = tools["remember"].input_schema
    assert remember["type"] == "object" and remember["additionalProperties"] is False
    # One entry (body and kind) or a batch (entries).
    assert remember["required"] == ["memory"]
    assert remember["anyOf"] == [{"required": ["body", "kind"]}, {"required": ["entries"]}]
    assert remember["properties"]["kind"]["enum"] == [
        "fact",
        "preference",
        "decision",
        "constraint",
        "working_note",
    ]
    assert remember["properties"]["evidence"]["type"] == "array"
    assert set(remember["properties"]["evidence"]["items"]["required"]) == {"source", "ref"}
    assert "dedupe" not in remember["properties"]
    assert tools["forget"].input_schema["required"] == ["memory", "reason", "entry_id"]
    propose = tools["propose"].input_schema
    assert set(propose["properties"]["kind"]["enum"]) == {
        "consolidation",
        "supersession",
        "promotion",
        "cleanup",
        "quarantine",
    }  # admission proposals are filed by the server only
    assert "oneOf" in propose["properties"]["successor"]
    assert "view=history" in tools["recall"].description
    assert "changes nothing until a person approves it" in tools["propose"].description


def test_a_key_limited_to_one_memory_may_leave_memory_out(mcp, api, scoped_agent):
    tools = mcp.as_(scoped_agent).tools()
    assert "required" not in tools["remember"].input_schema
    assert tools["forget"].input_schema["required"] == ["reason", "entry_id"]
    created = ok(mcp.as_(scoped_agent).call("remember", body="Staging is on eu-1", kind="fact"))
    r = api.as_(scoped_agent).get(f"{E}/{created['entry_id']}")
    assert r.status_code == 200, r.text


def test_remember_revise_recall_history_round_trip(mcp, api, agent):
    async def session(s):
        created = ok(
            await s.call_tool(
                "remember",
                {
                    "memory": "acme",
                    "body": "The deploy target is eu-2",
                    "kind": "fact",
                    "current_state": True,
                    "evidence": [{"source": "repo", "ref": "deploy/target.yaml"}],
                },
            )
        )
        revised = ok(
            await s.call_tool(
                "revise",
                {
                    "memory": "acme",
                    "entry_id": created["entry_id"],
                    "body": "The deploy target is eu-3",
                    "expected_version": 1,
                },
            )
        )
        stale = await s.call_tool(
            "revise",
            {
                "memory": "acme",
                "entry_id": created["entry_id"],
                "body": "The deploy target is eu-4",
                "expected_version": 1,
            },
        )
        current = ok(await s.call_tool("recall", {"memory": "acme", "query": "deploy target"}))
        history = ok(
            await s.call_tool("entry_history", {"memory": "acme", "entry_id": created["entry_id"]})
        )
        return created, revised, stale, current, history

    created, revised, stale, current, history = mcp.as_(agent).run(session)
    assert created["created"] is True and created["version"] == 1
    assert revised["entry_id"] == created["entry_id"] and revised["version"] == 2
    assert revised["revised"] is True and "created" not in revised
    assert refused(stale)["code"] == "version_conflict"
    [hit] = [h for h in current["hits"] if h["entry_id"] == created["entry_id"]]
    assert hit["version"] == 2 and hit["body"] == "The deploy target is eu-3"
    assert [v["body"] for v in history["items"]] == [
        "The deploy target is eu-2",
        "The deploy target is eu-3",
    ]
    assert history["items"][0]["status"] == "replaced"
    assert history["items"][1]["evidence"][0]["ref"] == "deploy/target.yaml"

    # The structured results are the REST bodies.
    a = api.as_(agent)
    assert a.get(f"{E}/{created['entry_id']}/versions").json() == history
    rest = a.post("/api/v1/memories/acme/search", {"query": "deploy target"}).json()
    assert rest == current


def test_writes_are_audited_with_the_key_and_a_server_made_request_id(mcp, agent):
    """A client's X-Request-ID never becomes the correlation id (the server makes its own)."""
    client = mcp.as_(agent, **{"X-Request-ID": "mcp-trace-0001"})
    created = ok(client.call("remember", memory="acme", body="Backups run at 03:00", kind="fact"))
    forgotten = ok(
        client.call("forget", memory="acme", entry_id=created["entry_id"], reason="Wrong hour")
    )
    assert forgotten["state"] == "inactive"
    revisions = Revision.objects.filter(number__in=[created["revision"], forgotten["revision"]])
    assert [(r.kind, r.actor_id) for r in revisions.order_by("number")] == [
        ("add", agent.actor.id),
        ("forget", agent.actor.id),
    ]
    ids = [r.correlation_id for r in revisions]
    assert all(ids) and "mcp-trace-0001" not in ids and len(set(ids)) == 2
    assert not AuditEvent.objects.filter(correlation_id="mcp-trace-0001").exists()
    events = AuditEvent.objects.filter(correlation_id__in=ids)
    assert {e.action for e in events} >= {"entry.forgotten"}
    assert {e.actor_id for e in events} == {agent.actor.id}


def test_a_proposal_posted_over_mcp_is_decided_in_review(mcp, api, agent, reviewer):
    a = api.as_(agent)
    notes = [
        add_via_api(a, "Looked at the flaky cache test", kind="working_note", dedupe=False),
        add_via_api(a, "Cache test flaked again on CI", kind="working_note", dedupe=False),
    ]
    client = mcp.as_(agent)
    cleanup = {
        "memory": "acme",
        "kind": "cleanup",
        "rationale": "Both notes are about a test that was fixed.",
        "entries": [{"entry_id": n["entry_id"], "version": n["version"]} for n in notes],
        "idempotency_key": "cleanup-cache-notes",
    }
    proposal = ok(client.call("propose", **cleanup))
    assert proposal["status"] == "pending" and proposal["created"] is True
    pending = ok(client.call("proposal_status", id=proposal["id"]))
    assert pending["status"] == "pending" and pending["comments"] == []
    # A proposal changes nothing until a person approves it.
    for n in notes:
        assert a.get(f"{E}/{n['entry_id']}").json()["state"] == "active"

    replay = ok(client.call("propose", **cleanup))  # the same request again
    assert replay["id"] == proposal["id"] and replay["created"] is False

    r = api.as_(reviewer).post(
        f"/api/v1/proposals/{proposal['id']}/approve", {"comment": "Fixed in #512"}
    )
    assert r.status_code == 200, r.text

    status = ok(client.call("proposal_status", id=proposal["id"]))
    assert status["status"] == "approved"
    assert status["decision"]["comment"] == "Fixed in #512"
    assert [(c["verdict"], c["body"]) for c in status["comments"]] == [("approve", "Fixed in #512")]
    for n in notes:
        assert a.get(f"{E}/{n['entry_id']}").json()["state"] == "inactive"
    rest = a.get(f"/api/v1/proposals/{proposal['id']}").json()
    assert {k: v for k, v in status.items() if k in rest} == rest


def test_a_rejection_reason_and_comment_reach_the_agent(mcp, api, agent, reviewer):
    a = api.as_(agent)
    note = add_via_api(a, "Maybe switch queues to RabbitMQ", kind="working_note", dedupe=False)
    proposal = ok(
        mcp.as_(agent).call(
            "propose",
            memory="acme",
            kind="cleanup",
            rationale="Not needed any more.",
            entries=[{"entry_id": note["entry_id"], "version": note["version"]}],
        )
    )
    r = api.as_(reviewer).post(
        f"/api/v1/proposals/{proposal['id']}/reject",
        {"reason": "wrong", "comment": "Still being evaluated"},
    )
    assert r.status_code == 200, r.text
    status = ok(mcp.as_(agent).call("proposal_status", id=proposal["id"]))
    assert status["status"] == "rejected" and status["reason"] == "wrong"
    assert status["comments"][0]["body"] == "Still being evaluated"


def test_an_auditors_writes_are_refused_with_the_rest_code(mcp, api, agent, auditor):
    entry = add_via_api(api.as_(agent), "The on-call rota is in PagerDuty")
    client = mcp.as_(auditor)
    assert refused(client.call("remember", memory="acme", body="x y z", kind="fact")) == {
        "code": "forbidden",
        "message": "Your role may not write entries.",
        "details": {},
    }
    assert refused(client.call("forget", memory="acme", entry_id=entry["entry_id"], reason="no"))[
        "code"
    ] == ("forbidden")
    r = api.as_(auditor).post(E, {"body": "x y z", "kind": "fact"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    # Reads are allowed.
    assert ok(client.call("entry_history", memory="acme", entry_id=entry["entry_id"]))["items"]
    assert api.as_(agent).get(f"{E}/{entry['entry_id']}").json()["state"] == "active"


def test_an_admission_proposal_is_refused_before_its_shape_as_over_rest(mcp, api, agent):
    """``admission`` is filed by the server only: an agent is told so (403 ``forbidden``)
    whatever arguments it sent, not which fields that kind would need."""
    refusal = {
        "code": "forbidden",
        "message": "'admission' proposals are filed by the server only.",
        "details": {},
    }
    for args in [
        {"memory": "acme", "kind": "admission", "rationale": "admit it"},
        {"memory": "acme", "kind": "admission", "rationale": "admit it", "entries": []},
    ]:
        assert refused(mcp.as_(agent).call("propose", **args)) == refusal, args
        r = api.as_(agent).post("/api/v1/proposals", args)
        assert r.status_code == 403 and r.json()["error"] == refusal, r.text


def test_an_unknown_kind_is_answered_with_the_kinds_the_caller_may_file(mcp, api, agent):
    """The kinds offered are the ones an agent may file: never ``admission``, which it would
    be refused (403); over REST and MCP alike. A kind that is not text is refused as text."""
    args = {"memory": "acme", "kind": "merge", "rationale": "one is enough"}
    expected = {"kind": ["One of consolidation, supersession, promotion, cleanup, quarantine."]}
    error = refused(mcp.as_(agent).call("propose", **args))
    assert (error["code"], error["details"]) == ("invalid", expected), error
    r = api.as_(agent).post("/api/v1/proposals", args)
    assert r.status_code == 400 and r.json()["error"]["details"] == expected, r.text
    not_text = {"kind": ["Not a valid string."]}
    assert refused(mcp.as_(agent).call("propose", **args | {"kind": 5}))["details"] == not_text
    r = api.as_(agent).post("/api/v1/proposals", args | {"kind": 5})
    assert r.status_code == 400 and r.json()["error"]["details"] == not_text, r.text


def test_an_auditors_writes_are_refused_before_their_arguments(mcp, auditor):
    forbidden = {"code": "forbidden", "message": "Your role may not write entries.", "details": {}}
    client = mcp.as_(auditor)
    for name, args in [
        ("remember", {"memory": "acme"}),
        ("revise", {"memory": "acme", "colour": "blue"}),
        ("forget", {"memory": "acme", "entry_id": "e_unknown"}),
    ]:
        assert refused(client.call(name, **args)) == forbidden, name
    # A Memory outside the key's scope is still not found first, as over REST.
    assert refused(client.call("remember", memory="nope"))["code"] == "not_found"


def test_no_key_or_a_bad_key_is_refused_before_any_tool_runs(mcp, live_server):
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    r = requests.post(f"{live_server.url}/mcp", json=message, headers=headers, timeout=30)
    assert r.status_code == 401, r.text
    assert r.headers["WWW-Authenticate"] == "Bearer"
    assert r.json()["error"]["code"] == "not_authenticated"
    r = requests.post(
        f"{live_server.url}/mcp",
        json=message,
        headers={**headers, "Authorization": "Bearer nope.nope"},
        timeout=30,
    )
    assert r.status_code == 401 and r.json()["error"]["code"] == "not_authenticated"

    failed = None
    try:
        mcp.as_(None).tools()
    except BaseException as exc:
        failed = exc
    assert failed is not None, "the MCP client connected without a key"


def test_a_key_scoped_to_another_memory_gets_not_found(mcp, api, scoped_agent, agent):
    theirs = add_via_api(api.as_(agent), "Other team's runbook lives in Notion", slug="other")
    client = mcp.as_(scoped_agent)
    for name, args in [
        ("recall", {"memory": "other", "query": "runbook"}),
        ("remember", {"memory": "other", "body": "Sneaky", "kind": "fact"}),
        ("entry_history", {"memory": "other", "entry_id": theirs["entry_id"]}),
        ("entry_history", {"memory": "acme", "entry_id": theirs["entry_id"]}),
    ]:
        assert refused(client.call(name, **args))["code"] == "not_found", name


def test_invalid_arguments_name_the_field(mcp, agent):
    client = mcp.as_(agent)
    error = refused(client.call("remember", memory="acme", body="Hi there", kind="rumour"))
    assert error["code"] == "invalid" and "kind" in error["details"]
    error = refused(client.call("recall", memory="acme", query="x", colour="blue"))
    assert error["details"] == {"colour": ["Unknown field."]}
    error = refused(client.call("recall", query="x"))
    assert error["code"] == "invalid" and "memory" in error["details"]
    error = refused(client.call("remember", memory="acme", body=123, kind="fact"))
    assert error["code"] == "invalid" and error["details"] == {"body": ["Not a valid string."]}
    error = refused(client.call("remember", memory="acme", body="Hi there", kind=5))
    assert error["code"] == "invalid" and error["details"] == {"kind": ["Not a valid string."]}
    # The idempotency key is an argument over MCP (the Idempotency-Key header over REST).
    cleanup = {"memory": "acme", "kind": "cleanup", "rationale": "x", "entries": []}
    error = refused(client.call("propose", **cleanup, idempotency_key="k" * 129))
    assert error["code"] == "invalid" and list(error["details"]) == ["idempotency_key"]


def test_results_carry_text_for_clients_without_structured_content(mcp, agent):
    result = mcp.as_(agent).call("context_pack", memory="acme", query="deploy")
    body = ok(result)
    assert json.loads(result.content[0].text) == body
    assert set(body) == {"text", "items", "bytes"}


def test_a_browser_origin_must_be_listed(live_server, agent, transactional_db):
    r = requests.post(
        f"{live_server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {agent.secret}",
            "Origin": "https://evil.example",
        },
        timeout=30,
    )
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


def test_a_get_is_refused_at_once_rather_than_held_open_as_a_stream(
    live_server, agent, transactional_db
):
    r = requests.get(
        f"{live_server.url}/mcp",
        headers={"Accept": "text/event-stream", "Authorization": f"Bearer {agent.secret}"},
        timeout=10,
    )
    assert r.status_code == 405
    assert "GET" not in r.headers["Allow"] and "POST" in r.headers["Allow"]
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_the_2026_stateless_protocol_is_served_too(live_server, agent, transactional_db):
    import anyio
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> tuple[str | None, list[str], Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {agent.secret}"}, timeout=30)
        transport = streamable_http_client(f"{live_server.url}/mcp", http_client=http)
        async with http, Client(transport, mode="2026-07-28") as client:
            tools = await client.list_tools()
            made = await client.call_tool(
                "remember", {"memory": "acme", "body": "Logs are kept 30 days", "kind": "fact"}
            )
            return client.session.protocol_version, [t.name for t in tools.tools], made

    version, names, made = anyio.run(main)
    assert version == "2026-07-28"
    assert set(names) == TOOL_NAMES
    assert ok(made)["created"] is True


def test_mcp_has_the_rest_throttles():
    from agents.views import McpApi
    from memory.api.entries import EntryListCreateApi
    from memory.api.recall import SearchApi

    assert McpApi.throttle_classes == EntryListCreateApi.throttle_classes
    assert McpApi.throttle_classes == SearchApi.throttle_classes


def test_a_throttled_key_gets_429_in_the_envelope(mcp, agent, monkeypatch, live_server):
    from django.core.cache import cache
    from rest_framework.throttling import SimpleRateThrottle

    from agents.views import McpApi

    class TwoPerMinute(SimpleRateThrottle):
        rate = "2/min"

        def get_cache_key(self, request, view):
            return f"test-mcp-throttle-{request.auth.prefix}"

    cache.clear()
    monkeypatch.setattr(McpApi, "throttle_classes", [TwoPerMinute])
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {agent.secret}",
    }
    codes = [
        requests.post(f"{live_server.url}/mcp", json=message, headers=headers, timeout=30)
        for _ in range(3)
    ]
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert codes[2].json()["error"]["code"] == "throttled"
    assert int(codes[2].headers["Retry-After"]) > 0


def test_recall_over_mcp_counts_as_a_recall_like_rest(mcp, agent, memory):
    from django.contrib.auth.models import User

    from memory import actions, recall_events
    from memory.actors import Actor
    from memory.models import LifecycleProjection
    from tests.factories import remember

    recall_events.flush()
    entry = remember(memory, agent.actor, "The deploy target is eu-2").entry
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(memory, actor=founder, policy={"recall_events": True})
    ok(mcp.as_(agent).call("recall", memory="acme", query="deploy target"))
    recall_events.flush()
    assert LifecycleProjection.objects.get(entry=entry).recall_count == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs a connection per thread")
def test_concurrent_sessions_on_a_threaded_server(mcp, agent):
    """The live server answers every request on a thread of its own: concurrent exchanges each
    run on an event loop of the process's pool, and each tool body writes through its own
    request's connection and transaction, with its own correlation id."""
    client = mcp.as_(agent)
    n = 4
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def call(i: int) -> None:
        try:
            barrier.wait()
            results[i] = client.call(
                "remember", memory="acme", body=f"Concurrent note {i} on the build", kind="fact"
            )
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    created = [ok(r) for r in results]
    assert len({c["entry_id"] for c in created}) == n
    revisions = Revision.objects.filter(number__in=[c["revision"] for c in created])
    assert len({r.correlation_id for r in revisions}) == n
    hits = ok(client.call("recall", memory="acme", query="concurrent note build", limit=10))
    assert {c["entry_id"] for c in created} <= {h["entry_id"] for h in hits["hits"]}


def _cleanup_proposal(api: Any, mcp: Any, agent: Any, text: str) -> dict[str, Any]:
    note = add_via_api(api.as_(agent), text, kind="working_note", dedupe=False)
    return ok(
        mcp.as_(agent).call(
            "propose",
            memory="acme",
            kind="cleanup",
            rationale="The note is about a test that was fixed.",
            entries=[{"entry_id": note["entry_id"], "version": note["version"]}],
        )
    )


def test_an_agent_answers_a_change_request_comments_amends_and_withdraws_over_mcp(
    mcp, api, agent, other_agent, reviewer
):
    proposal = _cleanup_proposal(api, mcp, agent, "Looked at the flaky cache test")
    pid = proposal["id"]
    r = api.as_(reviewer).post(f"/api/v1/proposals/{pid}/request-changes", {"comment": "Why?"})
    assert r.status_code == 200, r.text
    client = mcp.as_(agent)

    said = ok(client.call("comment", proposal_id=pid, body="The test was fixed in #512."))
    assert said["body"] == "The test was fixed in #512." and said["id"]
    amended = ok(
        client.call(
            "amend",
            proposal_id=pid,
            rationale="The cache test was fixed in #512; the note is obsolete.",
            comment="Said why.",
        )
    )
    assert amended["status"] == "pending" and amended["revision"] == 2
    rest = api.as_(agent).get(f"/api/v1/proposals/{pid}").json()
    assert {k: v for k, v in amended.items() if k in rest} == rest
    assert [c["body"] for c in rest["comments"] if c["type"] == "comment"] == [
        "The test was fixed in #512."
    ]

    # Another agent may neither comment nor amend nor withdraw it: the REST codes.
    other = mcp.as_(other_agent)
    assert refused(other.call("comment", proposal_id=pid, body="me too"))["code"] == "forbidden"
    assert refused(other.call("withdraw", proposal_id=pid))["code"] == "forbidden"
    assert refused(client.call("amend", proposal_id=pid))["code"] == "invalid"

    withdrawn = ok(client.call("withdraw", proposal_id=pid, reason="Not needed after all."))
    assert withdrawn["status"] == "withdrawn"
    assert refused(client.call("withdraw", proposal_id=pid))["code"] == "already_decided"


def test_an_agent_comments_on_a_passage_and_resolves_over_mcp(mcp, api, agent, reviewer):
    a = api.as_(agent)
    x = add_via_api(a, "Deploy runs at 02:00 UTC via deploy.sh", dedupe=False)
    y = add_via_api(a, "Deploys run nightly at 02:00 UTC", dedupe=False)
    client = mcp.as_(agent)
    proposal = ok(
        client.call(
            "propose",
            memory="acme",
            kind="consolidation",
            rationale="The same schedule twice.",
            target={"entry_id": x["entry_id"], "version": 1},
            redundant=[{"entry_id": y["entry_id"], "version": 1}],
            body="Deploys run nightly at 02:00 UTC via deploy.sh",
        )
    )
    pid = proposal["id"]
    schema = client.tools()["comment"].input_schema
    assert {"anchor", "resolves"} <= set(schema["properties"])
    assert schema["required"] == ["proposal_id", "body"]

    mine = ok(
        client.call(
            "comment", proposal_id=pid, body="Is it deploy.sh?", anchor={"quote": "via deploy.sh"}
        )
    )
    assert mine["anchor"]["quote"] == "via deploy.sh" and mine["resolved_by"] is None
    r = api.as_(reviewer).post(f"/api/v1/proposals/{pid}/comments", {"body": "Cite the runbook"})
    theirs = r.json()["id"]

    # A reviewer's point is not the submitter's to close: the REST code, nothing written.
    assert refused(client.call("comment", proposal_id=pid, body="Done", resolves=theirs)) == {
        "code": "forbidden",
        "message": "Only the comment's author or a reviewer may resolve it.",
        "details": {},
    }
    ok(client.call("comment", proposal_id=pid, body="Yes, checked the repo.", resolves=mine["id"]))
    again = refused(client.call("comment", proposal_id=pid, body="x", resolves=mine["id"]))
    assert again["code"] == "already_resolved"
    outside = refused(client.call("comment", proposal_id=pid, body="x", anchor={"quote": "hourly"}))
    assert outside["code"] == "invalid" and "anchor.quote" in outside["details"]

    status = ok(client.call("proposal_status", id=pid))
    by_id = {c["id"]: c for c in status["comments"]}
    assert by_id[mine["id"]]["resolved_by"] == "agent-1"
    assert by_id[theirs]["resolved_by"] is None
    assert [c["body"] for c in status["comments"]] == [
        "Is it deploy.sh?",
        "Cite the runbook",
        "Yes, checked the repo.",
    ]
