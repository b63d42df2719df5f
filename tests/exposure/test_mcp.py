"""MCP ``recall`` and ``context_pack`` take ``run_id`` and are ledgered (official client)."""

from __future__ import annotations

from exposure import ledger
from exposure.models import Exposure
from tests.agents.conftest import Mcp, mcp, ok, refused  # noqa: F401 - the fixture
from tests.factories import remember


def test_recall_and_context_pack_take_run_id_and_are_ledgered(mcp, agent, memory):  # noqa: F811
    entry = remember(memory, agent.actor, "The deploy target is Frankfurt").entry
    client = mcp.as_(agent)
    tools = client.tools()
    for name in ("recall", "context_pack"):
        assert "run_id" in tools[name].input_schema["properties"]
    hits = ok(client.call("recall", memory="acme", query="deploy target", run_id="agent-run-1"))
    assert [h["entry_id"] for h in hits["hits"]] == [entry.uid]
    pack = ok(client.call("context_pack", memory="acme", query="deploy", run_id="agent-run-2"))
    assert [i["entry_id"] for i in pack["items"]] == [entry.uid]
    ledger.flush()
    assert sorted(Exposure.objects.values_list("run_id", "via", "key", "version")) == [
        ("agent-run-1", "mcp", agent.actor.id, 1),
        ("agent-run-2", "mcp", agent.actor.id, 1),
    ]


def test_an_invalid_run_id_is_a_tool_error(mcp, agent, memory):  # noqa: F811
    remember(memory, agent.actor, "The deploy target is Frankfurt")
    error = refused(mcp.as_(agent).call("recall", memory="acme", query="deploy", run_id="ü" * 3))
    assert error["code"] == "invalid"
    assert ledger.pending() == 0


def test_retired_since_lists_the_corrections_the_callers_runs_were_served(
    mcp,  # noqa: F811
    api,
    agent,
    other_agent,
    reviewer,
    memory,
):
    """MCP has no push here (stateless Streamable HTTP, JSON responses): an agent polls
    ``retired_since`` for the retirements its own runs were served, since a cursor."""
    from tests.review.conftest import submit

    ag, rv = api.as_(agent), api.as_(reviewer)
    old = remember(memory, agent.actor, "The deploy target is Frankfurt", current_state=True)
    new = remember(memory, agent.actor, "The deploy target is Dublin", current_state=True)
    gone = remember(memory, agent.actor, "The cache is Redis 7").entry.uid
    me, other = mcp.as_(agent), mcp.as_(other_agent)
    tools = me.tools()
    assert tools["retired_since"].annotations.read_only_hint is True
    assert {"since_revision", "run_id", "limit"} <= set(
        tools["retired_since"].input_schema["properties"]
    )
    ok(me.call("recall", memory="acme", query="Frankfurt", run_id="run-a"))
    ok(me.call("recall", memory="acme", query="Dublin", run_id="run-new-only"))
    ok(me.call("recall", memory="acme", query="Redis", run_id="run-a"))
    ok(other.call("recall", memory="acme", query="Frankfurt", run_id="run-b"))
    start = ok(me.call("retired_since", memory="acme"))
    assert start["items"] == [] and start["more"] is False
    cursor = start["cursor"]

    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved to Dublin",
            "old": {"entry_id": old.entry.uid, "version": 1},
            "successor": {"entry_id": new.entry.uid, "version": 1},
        },
    )
    lost = rv.get(f"/api/v1/proposals/{p['id']}").json()["verification"]["lost_details"]
    r = rv.post(
        f"/api/v1/proposals/{p['id']}/approve",
        {"acknowledge_lost_details": [d["text"] for d in lost]},
    )
    assert r.status_code == 200, r.text
    op = r.json()["operation"]
    r = ag.post(f"/api/v1/memories/acme/entries/{gone}/forget", {"reason": "moved to Valkey"})
    assert r.status_code == 200, r.text

    feed = ok(me.call("retired_since", memory="acme", since_revision=cursor))
    assert feed["more"] is False
    first, second = feed["items"]
    assert (first["kind"], first["operation"], first["proposal"]) == ("supersession", op, p["id"])
    assert first["versions"] == [
        {
            "entry_id": old.entry.uid,
            "old_version": 1,
            "new": {"entry_id": new.entry.uid, "version": 1},
        }
    ]
    # Only this key's runs: run-b is another key's; run-new-only was served the successor.
    assert [(x["run_id"], x["key"]) for x in first["exposed_runs"]] == [("run-a", agent.actor.id)]
    assert (second["kind"], second["operation"], second["reason"]) == (
        "forget",
        None,
        "moved to Valkey",
    )
    assert second["versions"] == [{"entry_id": gone, "old_version": 1, "new": None}]
    assert [x["run_id"] for x in second["exposed_runs"]] == ["run-a"]

    # The other key hears of the supersession, with its own run only.
    (theirs,) = ok(other.call("retired_since", memory="acme", since_revision=cursor))["items"]
    assert [x["run_id"] for x in theirs["exposed_runs"]] == ["run-b"]
    # One run, and nothing new past the cursor.
    assert ok(me.call("retired_since", memory="acme", run_id="run-z"))["items"] == []
    again = ok(me.call("retired_since", memory="acme", since_revision=feed["cursor"]))
    assert again["items"] == [] and again["cursor"] == feed["cursor"]
    # A page of one retiring revision: more to come, the cursor at that revision.
    page = ok(me.call("retired_since", memory="acme", since_revision=cursor, limit=1))
    assert page["more"] is True and page["cursor"] == first["revision"]
    assert [i["revision"] for i in page["items"]] == [first["revision"]]
    error = refused(me.call("retired_since", memory="acme", since_revision=feed["cursor"] + 5))
    assert error["code"] == "invalid" and "since_revision" in error["details"]
