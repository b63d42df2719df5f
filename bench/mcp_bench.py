"""Benchmark: an MCP tool call's latency against the same REST call, in the same run.

Builds a throw-away database (a temporary SQLite file by default, or the PostgreSQL database named
by ``--database-url`` / ``DATABASE_URL``, which is dropped and recreated), migrates it, loads the
demo Memory and issues an agent key. Then it starts the production server (gunicorn,
``config.wsgi``, one sync worker) on 127.0.0.1 and, in one loop, alternates each MCP tool call
with its REST twin so both see the same load:

- ``recall``        ↔ ``POST /api/v1/memories/{slug}/search``
- ``entry_history`` ↔ ``GET  /api/v1/memories/{slug}/entries/{id}/versions``
- ``remember``      ↔ ``POST /api/v1/memories/{slug}/entries`` (a new body each time)

The MCP side is the official ``mcp`` client over Streamable HTTP with one initialized session
(the handshake protocol most clients speak); the REST side is the same HTTP library (httpx2,
which the MCP client uses) with the same key. Two more pairs, for the record: ``recall`` sent as
one plain JSON-RPC POST to ``/mcp`` (no client SDK), which separates the server's share of the
difference from the client library's, and ``entry_history`` from the SDK's ``Client`` on the
stateless 2026-07-28 protocol. The per-key rate limit is lifted for the server (the throttle
classes still run, on both sides). Printed per pair: median and p90 latency in ms and the ratio
of medians (target ≤ 1.2), with the machine's load average before and after.

``--layers N`` instead runs N rounds in-process through Django's test client (every middleware,
the DRF view, the SDK; no socket, no client library) and prints, per tool, the median CPU time
of the MCP request and of its REST twin, how much of the MCP request the SDK took (the exchange
less the tool body), the tool body against the REST view method, and both query counts.

    .venv/bin/python bench/mcp_bench.py                     # SQLite, 300 rounds
    .venv/bin/python bench/mcp_bench.py --rounds 100 --port 8521
    .venv/bin/python bench/mcp_bench.py --layers 300        # where the difference goes
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_mcp_bench .venv/bin/python bench/mcp_bench.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_env import ROOT, setup_django

# The demo Memory reviews uncited writes, so each ``remember`` files an admission proposal and
# mails the reviewers: kept in memory (both sides pay the same), not printed over the figures.
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--port", type=int, default=8520)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--layers", type=int, default=0, metavar="N")
    return parser.parse_args()


def prepare(database_url: str) -> tuple[str, str, str, str]:
    """A migrated database with the demo Memory; returns (url, key, memory slug, entry id)."""
    if database_url.startswith("postgres"):
        import psycopg

        base, _, name = database_url.rpartition("/")
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
    else:
        database_url = f"sqlite:///{tempfile.mkdtemp(prefix='mcp-bench-')}/bench.sqlite3"
    setup_django(database_url=database_url)
    from django.core.management import call_command

    from memory.keys import issue_api_key
    from memory.models import Entry, Memory

    call_command("migrate", verbosity=0)
    call_command("load_demo", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    memory = Memory.objects.order_by("pk").first()
    assert memory is not None
    entry = Entry.objects.filter(memory=memory).order_by("pk").first()
    assert entry is not None
    _, secret = issue_api_key(name="bench-agent", role="agent")
    return database_url, secret, memory.slug, entry.uid


def start_server(database_url: str, port: int) -> subprocess.Popen[bytes]:
    # The default per-key rate (600/min) would throttle the loop: lift it. The throttle classes
    # still run on both sides; a per-second window keeps the key's request history as short as
    # an ordinary key's, so its cost does not grow with the benchmark's own request count.
    env = {**os.environ, "DATABASE_URL": database_url, "THROTTLE_KEY_RATE": "100000/s"}
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    import httpx2

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return server
        except httpx2.TransportError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not start")


async def measure(args: argparse.Namespace, secret: str, slug: str, entry: str) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    base = f"http://127.0.0.1:{args.port}"
    auth = {"Authorization": f"Bearer {secret}"}
    counter = iter(range(10**9))
    async with (
        httpx2.AsyncClient(headers=auth, timeout=30) as rest,
        httpx2.AsyncClient(headers=auth, timeout=30) as http,
        httpx2.AsyncClient(headers=auth, timeout=30) as http_2026,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
        Client(
            streamable_http_client(f"{base}/mcp", http_client=http_2026), mode="2026-07-28"
        ) as stateless,
    ):
        await session.initialize()
        await stateless.list_tools()

        async def tool(name: str, arguments: dict[str, Any]) -> None:
            result = await session.call_tool(name, arguments)
            assert not result.is_error, result.structured_content

        async def tool_2026(name: str, arguments: dict[str, Any]) -> None:
            result = await stateless.call_tool(name, arguments)
            assert not result.is_error, result.structured_content

        async def call(method: str, path: str, body: Any = None) -> None:
            r = await rest.request(method, f"{base}{path}", json=body)
            assert r.status_code < 300, r.text

        def note() -> str:
            return f"Benchmark observation number {next(counter)} about the build cache"

        async def raw(name: str, arguments: dict[str, Any]) -> None:
            # The same tools/call as one plain POST: the server's share without the client SDK.
            message = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            r = await rest.post(
                f"{base}/mcp",
                json=message,
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert r.status_code == 200 and not r.json()["result"]["isError"], r.text

        query = {"query": "deploy target", "limit": 10}
        recall = {"memory": slug, **query}
        history = {"memory": slug, "entry_id": entry}

        def search() -> Awaitable[None]:
            return call("POST", f"/api/v1/memories/{slug}/search", query)

        def versions() -> Awaitable[None]:
            return call("GET", f"/api/v1/memories/{slug}/entries/{entry}/versions")

        pairs: dict[str, tuple[Callable[[], Awaitable[None]], Callable[[], Awaitable[None]]]] = {
            "recall / search": (lambda: tool("recall", recall), search),
            "recall as plain POST / search": (lambda: raw("recall", recall), search),
            "entry_history / versions": (lambda: tool("entry_history", history), versions),
            "entry_history 2026-07-28 / versions": (
                lambda: tool_2026("entry_history", history),
                versions,
            ),
            "remember / POST entries": (
                lambda: tool("remember", {"memory": slug, "body": note(), "kind": "working_note"}),
                lambda: call(
                    "POST",
                    f"/api/v1/memories/{slug}/entries",
                    {"body": note(), "kind": "working_note"},
                ),
            ),
        }
        timings: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
        for i in range(args.warmup + args.rounds):
            for name, (mcp_call, rest_call) in pairs.items():
                # Alternate which side goes first so neither always follows the other.
                order = (
                    [(0, mcp_call), (1, rest_call)] if i % 2 else [(1, rest_call), (0, mcp_call)]
                )
                for side, fn in order:
                    started = time.perf_counter()
                    await fn()
                    elapsed = time.perf_counter() - started
                    if i >= args.warmup:
                        timings[name][side].append(elapsed * 1000)

    print(
        f"{'pair (MCP / REST)':36} {'MCP med':>8} {'p90':>7} {'REST med':>9} {'p90':>7} {'ratio':>6}"
    )
    for name, (mcp_ms, rest_ms) in timings.items():
        m, r = statistics.median(mcp_ms), statistics.median(rest_ms)
        print(f"{name:36} {m:8.2f} {p90(mcp_ms):7.2f} {r:9.2f} {p90(rest_ms):7.2f} {m / r:6.2f}")


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def layers(rounds: int, secret: str, slug: str, entry: str) -> None:
    """CPU time per layer, in-process: the MCP request, the SDK's share of it, the tool body;
    the REST request and its view method; the query count of each."""
    import json

    from django.conf import settings
    from django.db import connection
    from django.test import Client

    import agents.server
    import agents.views
    from memory.api.entries import EntryListCreateApi, EntryVersionsApi
    from memory.api.recall import SearchApi

    settings.STEWARD_THROTTLE_RATES = {**settings.STEWARD_THROTTLE_RATES, "key": "100000/s"}
    clock = time.thread_time  # the tool body runs on the request thread, so this is all of it
    spent: dict[str, list[float]] = {}

    def timed(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent.setdefault(label, []).append((clock() - started) * 1000)

        setattr(owner, name, wrapper)

    timed(agents.views, "serve", "exchange")
    timed(agents.server, "run_tool", "tool body")
    for view, method in ((SearchApi, "post"), (EntryVersionsApi, "get")):
        timed(view, method, "view method")
    timed(EntryListCreateApi, "post", "view method")

    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_HOST="127.0.0.1")
    counter = iter(range(10**9))

    def tool(name: str, arguments: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        message["params"] = {"name": name, "arguments": arguments}  # type: ignore[assignment]
        r = client.post(
            "/mcp",
            json.dumps(message),
            content_type="application/json",
            HTTP_ACCEPT="application/json, text/event-stream",
            HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
        )
        assert r.status_code == 200 and not json.loads(r.content)["result"]["isError"], r.content

    def rest(method: str, path: str, body: Any = None) -> None:
        if method == "GET":
            r = client.get(path)
        else:
            r = client.post(path, json.dumps(body), content_type="application/json")
        assert r.status_code < 300, r.content

    def note() -> str:
        return f"Benchmark observation number {next(counter)} about the build cache"

    def count_queries(fn: Callable[[], None]) -> int:
        seen = 0

        def counted(execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
            nonlocal seen
            seen += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counted):
            fn()
        return seen

    base = f"/api/v1/memories/{slug}"
    pairs = {
        "recall / search": (
            lambda: tool("recall", {"memory": slug, "query": "deploy target", "limit": 10}),
            lambda: rest("POST", f"{base}/search", {"query": "deploy target", "limit": 10}),
        ),
        "entry_history / versions": (
            lambda: tool("entry_history", {"memory": slug, "entry_id": entry}),
            lambda: rest("GET", f"{base}/entries/{entry}/versions"),
        ),
        "remember / POST entries": (
            lambda: tool("remember", {"memory": slug, "body": note(), "kind": "working_note"}),
            lambda: rest("POST", f"{base}/entries", {"body": note(), "kind": "working_note"}),
        ),
    }
    print(
        f"in-process, {rounds} rounds, median CPU ms per request; "
        "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )
    print(
        f"{'pair (MCP / REST)':26} {'MCP':>7} {'REST':>7} {'diff':>6} {'SDK':>6} "
        f"{'tool body':>9} {'REST view':>9} {'queries':>8}"
    )
    for name, (mcp_call, rest_call) in pairs.items():
        for _ in range(20):
            mcp_call()
            rest_call()
        queries = [count_queries(mcp_call), count_queries(rest_call)]
        spent.clear()
        totals: tuple[list[float], list[float]] = ([], [])
        for _ in range(rounds):
            for side, fn in ((0, mcp_call), (1, rest_call)):
                started = clock()
                fn()
                totals[side].append((clock() - started) * 1000)
        mcp_ms, rest_ms = (statistics.median(t) for t in totals)
        sdk = statistics.median(
            e - b for e, b in zip(spent["exchange"], spent["tool body"], strict=True)
        )
        print(
            f"{name:26} {mcp_ms:7.2f} {rest_ms:7.2f} {mcp_ms - rest_ms:6.2f} {sdk:6.2f} "
            f"{statistics.median(spent['tool body']):9.2f} "
            f"{statistics.median(spent['view method']):9.2f} "
            f"{queries[0]:>4} {queries[1]:>3}"
        )


def main() -> None:
    args = parse_args()
    database_url, secret, slug, entry = prepare(args.database_url)
    backend = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    if args.layers:
        print(f"backend {backend}")
        layers(args.layers, secret, slug, entry)
        return
    print(f"backend {backend}; gunicorn config.wsgi, 1 sync worker; {args.rounds} rounds")
    server = start_server(database_url, args.port)
    try:
        import anyio

        print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        anyio.run(measure, args, secret, slug, entry)
        print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
