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
