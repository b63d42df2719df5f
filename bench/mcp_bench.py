"""Benchmark: an MCP tool call's latency against the same REST call, in the same run.

Builds a throw-away database (a temporary SQLite file by default, or the PostgreSQL database named
by ``--database-url`` / ``DATABASE_URL``, which is dropped and recreated), migrates it, loads the
demo Memory and issues an agent key. Then it starts the production server (gunicorn,
``config.wsgi``, one sync worker) on 127.0.0.1 and, in one loop, alternates each MCP tool call
with its REST twin so both see the same load:

- ``recall``        ↔ ``POST /api/v1/memories/{slug}/search``
- ``entry_history`` ↔ ``GET  /api/v1/memories/{slug}/entries/{id}/versions``
- ``remember``      ↔ ``POST /api/v1/memories/{slug}/entries`` (a new body each time)

The MCP side is the official ``mcp`` client over Streamable HTTP with one initialized session;
the REST side is the same HTTP library (httpx2, which the MCP client uses) with the same key.
A fourth pair sends ``recall`` as one plain JSON-RPC POST to ``/mcp`` (no client SDK), which
separates the server's share of the difference from the client library's.
Printed per pair: median and p90 latency in ms and the ratio of medians (target ≤ 1.2).

    .venv/bin/python bench/mcp_bench.py                     # SQLite, 300 rounds
    .venv/bin/python bench/mcp_bench.py --rounds 100 --port 8521
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--port", type=int, default=8520)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
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
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
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
    env = {**os.environ, "DATABASE_URL": database_url}
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
    from mcp.client.streamable_http import streamable_http_client

    base = f"http://127.0.0.1:{args.port}"
    auth = {"Authorization": f"Bearer {secret}"}
    counter = iter(range(10**9))
    async with (
        httpx2.AsyncClient(headers=auth, timeout=30) as rest,
        httpx2.AsyncClient(headers=auth, timeout=30) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def tool(name: str, arguments: dict[str, Any]) -> None:
            result = await session.call_tool(name, arguments)
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

        pairs: dict[str, tuple[Callable[[], Awaitable[None]], Callable[[], Awaitable[None]]]] = {
            "recall / search": (
                lambda: tool("recall", {"memory": slug, "query": "deploy target", "limit": 10}),
                lambda: call(
                    "POST",
                    f"/api/v1/memories/{slug}/search",
                    {"query": "deploy target", "limit": 10},
                ),
            ),
            "recall as plain POST / search": (
                lambda: raw("recall", {"memory": slug, "query": "deploy target", "limit": 10}),
                lambda: call(
                    "POST",
                    f"/api/v1/memories/{slug}/search",
                    {"query": "deploy target", "limit": 10},
                ),
            ),
            "entry_history / versions": (
                lambda: tool("entry_history", {"memory": slug, "entry_id": entry}),
                lambda: call("GET", f"/api/v1/memories/{slug}/entries/{entry}/versions"),
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
        f"{'pair (MCP / REST)':32} {'MCP med':>8} {'p90':>7} {'REST med':>9} {'p90':>7} {'ratio':>6}"
    )
    for name, (mcp_ms, rest_ms) in timings.items():
        m, r = statistics.median(mcp_ms), statistics.median(rest_ms)
        print(f"{name:32} {m:8.2f} {p90(mcp_ms):7.2f} {r:9.2f} {p90(rest_ms):7.2f} {m / r:6.2f}")


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> None:
    args = parse_args()
    database_url, secret, slug, entry = prepare(args.database_url)
    backend = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
    print(f"backend {backend}; gunicorn config.wsgi, 1 sync worker; {args.rounds} rounds")
    server = start_server(database_url, args.port)
    try:
        import anyio

        anyio.run(measure, args, secret, slug, entry)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
