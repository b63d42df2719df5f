"""Benchmark: streaming the audit export of 100,000 events in bounded memory.

Creates a throw-away database (a temporary SQLite file by default, or ``test_<name>`` on the
PostgreSQL server named by ``--database-url`` / ``DATABASE_URL``), inserts N audit events with
``bulk_create``, then streams ``GET /api/v1/audit/export`` in CSV and JSON Lines through the real
view (Django's test client, an auditor API key) and reports, per format:

- wall time and events per second (measured without tracemalloc, which slows Python down);
- peak Python memory while streaming (``tracemalloc``, measured in a second run);
- for contrast, the peak of materializing the same rows at once (``list(qs.values())``).

The output must stay flat in N: the export walks the table in keyset batches.

    .venv/bin/python bench/audit_export_bench.py                      # SQLite, 100,000 events
    .venv/bin/python bench/audit_export_bench.py --events 20000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_bench .venv/bin/python bench/audit_export_bench.py
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench_env import setup_django


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--formats", nargs="+", default=["csv", "jsonl"])
    parser.add_argument("--batch", type=int, default=None, help="override EXPORT_BATCH")
    return parser.parse_args()


def setup_database(database_url: str) -> str:
    tmp = ""
    if not database_url.startswith("postgres"):
        tmp = tempfile.mkdtemp(prefix="audit-bench-")
        database_url = f"sqlite:///{tmp}/bench.sqlite3"
    setup_django(database_url=database_url)
    from django.db import connection

    if tmp:
        connection.settings_dict["TEST"]["NAME"] = f"{tmp}/test_bench.sqlite3"
    return tmp


def populate(n: int) -> Any:
    from django.contrib.auth.models import User

    from memory import actions
    from memory.actors import Actor
    from memory.audit import ACTIONS
    from memory.keys import issue_api_key
    from memory.models import AuditEvent

    founder = User.objects.create_user("bench-founder", is_staff=True)
    actor = Actor.for_user(founder)
    memory = actions.create_memory(actor=actor, slug="bench", name="Benchmark memory")
    _, secret = issue_api_key(name="bench-auditor", role="auditor")
    names = sorted(ACTIONS)
    started = time.perf_counter()
    batch: list[AuditEvent] = []
    for i in range(n):
        batch.append(
            AuditEvent(
                action=names[i % len(names)],
                actor_type="agent",
                actor_id=f"key:bench{i % 7}",
                actor_label=f"agent-{i % 7}",
                correlation_id=f"{i // 3:032x}",
                memory_id=memory.pk,
                memory_label=memory.slug,
                label=f"The deploy target of service {i} is the eu-{i % 5} cluster, per ADR-{i % 97}",
                revision_number=i + 1,
                entry_ids=[f"e_{i:016x}"] + ([f"e_{i + 1:016x}"] if i % 4 == 0 else []),
                payload={"version": 1 + i % 3, "reason": "benchmark", "n": i},
            )
        )
        if len(batch) == 5000:
            AuditEvent.objects.bulk_create(batch)
            batch = []
    if batch:
        AuditEvent.objects.bulk_create(batch)
    return secret, time.perf_counter() - started


def stream(secret: str, fmt: str, query: str = "") -> tuple[int, int]:
    from django.test import Client

    response = Client().get(
        f"/api/v1/audit/export?format={fmt}{query}", headers={"Authorization": f"Bearer {secret}"}
    )
    assert response.status_code == 200, response.content
    assert response.streaming
    size = lines = 0
    for chunk in response.streaming_content:  # type: ignore[attr-defined]
        size += len(chunk)
        lines += chunk.count(b"\n")
    response.close()
    return size, lines


def materialized_peak() -> float:
    from audit.api import EVENT_COLUMNS
    from memory.models import AuditEvent

    tracemalloc.start()
    rows = list(AuditEvent.objects.order_by("pk").values(*EVENT_COLUMNS))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del rows
    return peak / 2**20


def main() -> None:
    args = parse_args()
    tmp = setup_database(args.database_url)
    from django.db import connection
    from django.test.utils import setup_test_environment

    from audit import api as audit_api

    if args.batch:
        audit_api.EXPORT_BATCH = args.batch
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        secret, insert_seconds = populate(args.events)
        from memory.models import AuditEvent

        total = AuditEvent.objects.count()  # the N events plus the Memory's and key's own
        print(
            f"backend={connection.vendor} events={args.events:,} "
            f"batch={audit_api.EXPORT_BATCH} chunk={audit_api.EXPORT_CHUNK} "
            f"(bulk insert {insert_seconds:.1f}s)"
        )
        stream(secret, "csv", "&correlation=warm-up")  # imports and URL resolution, once
        print(
            f"{'format':<7}{'bytes':>14}{'lines':>10}{'seconds':>9}{'events/s':>11}{'peak MiB':>10}"
        )
        for fmt in args.formats:
            started = time.perf_counter()
            size, lines = stream(secret, fmt)
            seconds = time.perf_counter() - started
            tracemalloc.start()
            stream(secret, fmt)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            expected = total + (1 if fmt == "csv" else 0)
            assert lines == expected, (fmt, lines, expected)
            print(
                f"{fmt:<7}{size:>14,}{lines:>10,}{seconds:>9.2f}"
                f"{total / seconds:>11,.0f}{peak / 2**20:>10.1f}"
            )
        print(
            f"for contrast, list(qs.values()) of every row peaks at {materialized_peak():.1f} MiB"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        if tmp:
            for f in Path(tmp).glob("*"):
                f.unlink()
            Path(tmp).rmdir()


if __name__ == "__main__":
    main()
