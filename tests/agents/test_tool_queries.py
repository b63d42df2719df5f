"""Tool bodies run a fixed number of queries, however long the history or the hit list."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.server import Caller, run_tool
from agents.tools import BY_NAME
from memory import actions
from tests.factories import remember


def count(spec: str, caller: Caller, **arguments) -> int:
    with CaptureQueriesContext(connection) as ctx:
        result = run_tool(BY_NAME[spec], caller, arguments)
    assert not result.is_error, result.structured_content
    return len(ctx.captured_queries)


def test_entry_history_and_recall_query_counts_do_not_grow(memory, agent):
    caller = Caller(agent.actor, "queries")
    short = remember(memory, agent.actor, "Cache keys expire after an hour").entry
    long = remember(memory, agent.actor, "Cache warmup runs at boot, version 1").entry
    for n in range(2, 7):
        actions.revise_entry(
            memory, actor=agent.actor, entry_uid=long.uid, body=f"Cache warmup at boot, v{n}"
        )
    one = count("entry_history", caller, memory="acme", entry_id=short.uid)
    six = count("entry_history", caller, memory="acme", entry_id=long.uid)
    assert one == six <= 8

    # PostgreSQL's lexeme statistics are read at most every few minutes per process
    # (memory.search.lexical.STATS_TTL): read them before counting.
    count("recall", caller, memory="acme", query="cache", limit=2)
    few = count("recall", caller, memory="acme", query="cache", limit=2)
    for n in range(10):
        remember(memory, agent.actor, f"Cache shard {n} lives on node {n}")
    many = count("recall", caller, memory="acme", query="cache", limit=10)
    assert many == few <= 12
