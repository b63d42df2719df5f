"""Search and Context Pack p95 with the exposure ledger on vs off, side by side (not a test).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_exposure_bench \
        .venv/bin/python bench/exposure_bench.py --entries 100000
    .venv/bin/python bench/exposure_bench.py --entries 10000     # SQLite: /tmp/steward_bench.sqlite3

Builds (once per database) a Memory of N entries with ``search_bench.build`` (bulk rows exactly
as the actions write them; ``COPY`` on PostgreSQL), then sends the same requests through the
whole Django stack (test client: middleware, key authentication, the API views) to
``POST …/search`` and ``POST …/context-pack`` with a ``run_id``, the Memory's
``policy.exposure.enabled`` off and on in alternating rounds (the order flips every round, so
drift hits both sides equally). With the ledger on, a request only queues its rows; the
embedded writer (a timer thread) inserts them after the responses, as in production without a
broker. Prints p50/p95 per endpoint and side, the on/off p95 ratio, the rows written per call
and, on PostgreSQL, the bytes per row of the ledger table with its indexes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench_env import setup_django

setup_django(default_database="sqlite:////tmp/steward_bench.sqlite3", broker=False)

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from search_bench import build, queries  # noqa: E402

from exposure import ledger  # noqa: E402
from exposure.models import Exposure  # noqa: E402
from memory.keys import issue_api_key  # noqa: E402
from memory.models import Memory  # noqa: E402

ENDPOINTS = ("search", "context-pack")


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100)[int(p) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--per-round", type=int, default=50)
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = ["*"]
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    settings.STEWARD_THROTTLE_RATES = {**settings.STEWARD_THROTTLE_RATES, "key": "1000000/min"}
    call_command("migrate", verbosity=0)
    memory = build(f"bench-{args.entries}", args.entries, seed=args.entries)
    Exposure.objects.filter(memory=memory).delete()
    _, secret = issue_api_key(
        name=f"exposure-bench-{time.time_ns()}",
        role="agent",
        memory_slugs=(),
        clearance="internal",
        owner_username=None,
    )
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    qs = queries(seed=7, count=args.per_round)
    timings: dict[tuple[str, bool], list[float]] = {
        (e, s): [] for e in ENDPOINTS for s in (False, True)
    }
    calls_on = 0

    def go(on: bool, keep: bool = True) -> None:
        nonlocal calls_on
        Memory.objects.filter(pk=memory.pk).update(policy={"exposure": {"enabled": on}})
        for n, q in enumerate(qs):
            for endpoint in ENDPOINTS:
                body = {"query": q, "run_id": f"bench-run-{n % 7}"}
                t0 = time.perf_counter()
                r = client.post(
                    f"/api/v1/memories/{memory.slug}/{endpoint}",
                    body,
                    content_type="application/json",
                )
                elapsed = (time.perf_counter() - t0) * 1000
                assert r.status_code == 200, r.content
                if keep:
                    timings[(endpoint, on)].append(elapsed)
                    calls_on += int(on)
        ledger.flush()  # whatever the timer thread has not written yet

    go(False, keep=False)  # warm-up, discarded
    go(True, keep=False)
    Exposure.objects.filter(memory=memory).delete()
    for i in range(args.rounds):
        for side in (False, True) if i % 2 == 0 else (True, False):
            go(side)
    rows = Exposure.objects.filter(memory=memory).count()
    load = os.getloadavg()
    print(
        f"backend: {connection.vendor}; entries: {args.entries}; requests per endpoint and "
        f"side: {len(timings[('search', False)])}; load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}"
    )
    for endpoint in ENDPOINTS:
        off, on = timings[(endpoint, False)], timings[(endpoint, True)]
        print(
            f"{endpoint:>12}: off p50 {statistics.median(off):.2f} ms p95 {pct(off, 95):.2f} ms"
            f" | on p50 {statistics.median(on):.2f} ms p95 {pct(on, 95):.2f} ms"
            f" | p95 on/off {pct(on, 95) / pct(off, 95):.3f}"
        )
    print(f"ledger rows: {rows} from {calls_on} calls ({rows / max(calls_on, 1):.2f} per call)")
    if connection.vendor == "postgresql" and rows:
        with connection.cursor() as c:
            c.execute(
                "SELECT pg_relation_size('exposure_exposure'), "
                "pg_indexes_size('exposure_exposure'), "
                "pg_total_relation_size('exposure_exposure')"
            )
            heap, indexes, total = c.fetchone()
        print(
            f"ledger bytes per row: {heap / rows:.0f} heap + {indexes / rows:.0f} indexes = "
            f"{total / rows:.0f} total ({rows} rows)"
        )


if __name__ == "__main__":
    main()
