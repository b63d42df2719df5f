"""Search p95 with recall events on vs off, in the same run (not a test).

    .venv/bin/python bench/recall_events_bench.py                  # SQLite: /tmp/steward_recall_bench.sqlite3
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_recall_bench .venv/bin/python bench/recall_events_bench.py

On PostgreSQL the database named by ``DATABASE_URL`` is emptied first (its ``public`` schema is
dropped and made again): give it one of its own.

Writes N entries (default 2,000) through the real add action into a fresh database (ending with
``ANALYZE`` on PostgreSQL, ``memory.db_stats.analyze``), then sends
the same search requests through the whole Django stack (test client: middleware, key
authentication, the search API view) with the Memory's ``recall_events`` off and on, in
alternating rounds so drift hits both sides equally. With events on, each request only enqueues
(the embedded fold runs in a timer thread after the response). Prints p50/p95 of each side and
the on/off p95 ratio, with the backend, the embedding provider and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench_env import setup_django

setup_django(fresh_sqlite=Path("/tmp/steward_recall_bench.sqlite3"), broker=False)

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from memory import actions, db_stats, recall_events  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.embeddings import get_provider  # noqa: E402
from memory.keys import issue_api_key  # noqa: E402

WORDS = [
    "deploy",
    "target",
    "cache",
    "queue",
    "region",
    "build",
    "release",
    "service",
    "database",
    "lock",
    "config",
]
QUERIES = ["deploy target", "cache region", "release service database", "queue lock", "build"]


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=40)
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = ["*"]
    # The per-key rate limit (600/min) would answer 429 once a side runs faster than that.
    settings.STEWARD_THROTTLE_RATES = {**settings.STEWARD_THROTTLE_RATES, "key": "1000000/min"}
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)
    staff = Actor.for_user(User.objects.create_user("bench", password="x", is_staff=True))
    memory = actions.create_memory(actor=staff, slug="bench", name="Recall bench")
    agent = Actor(type="agent", id="key:bench", label="bench", role="agent")
    for i in range(args.entries):
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(4))
        actions.add_entry(
            memory,
            actor=agent,
            body=f"Entry {i}: the {words} note {i % 97}",
            kind="fact",
            dedupe=False,
        )
    db_stats.analyze(db_stats.MEMORY_TABLES)  # a bulk load: PostgreSQL plans from statistics
    _, secret = issue_api_key(
        name="bench", role="agent", memory_slugs=(), clearance="internal", owner_username=None
    )
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    timings: dict[bool, list[float]] = {False: [], True: []}

    def go(on: bool) -> None:
        actions.update_memory_policy(memory, actor=staff, policy={"recall_events": on})
        for n in range(args.per_round):
            q = QUERIES[n % len(QUERIES)]
            t0 = time.perf_counter()
            r = client.post(
                "/api/v1/memories/bench/search", {"query": q}, content_type="application/json"
            )
            timings[on].append((time.perf_counter() - t0) * 1000)
            assert r.status_code == 200, r.content
        recall_events.flush()  # what the timer thread does after the responses

    go(False)  # warm-up, discarded
    timings[False].clear()
    for i in range(args.rounds):
        for side in (False, True) if i % 2 == 0 else (True, False):
            go(side)
    off, on = timings[False], timings[True]
    p95_off, p95_on = percentile(off, 95), percentile(on, 95)
    provider = get_provider()
    load = os.getloadavg()
    print(
        f"backend: {connection.vendor}; entries: {args.entries}; requests per side: {len(off)}; "
        f"embeddings: {provider.key if provider else 'none'}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"recall_events off: p50 {statistics.median(off):.2f} ms, p95 {p95_off:.2f} ms")
    print(f"recall_events on:  p50 {statistics.median(on):.2f} ms, p95 {p95_on:.2f} ms")
    print(f"p95 on/off: {p95_on / p95_off:.3f}")


if __name__ == "__main__":
    main()
