"""What sharing the throttle counters costs per request: the same read (``GET
/api/v1/memories/{slug}``, one key) through gunicorn (2 workers) with the counters in the database
(the default without ``CACHE_URL``) and in Redis (``CACHE_URL``), and the 200s one key gets at a
stated limit over both workers.

    .venv/bin/python bench/throttle_store_bench.py [--database-url postgres://…/steward_bench] [--redis URL]

SQLite by default (a fresh file under /tmp); with ``--database-url`` that PostgreSQL database
is dropped and created afresh. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_env import ROOT, setup_django, staff_with_memories

sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/10")
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    fresh = Path(tempfile.gettempdir()) / "steward_throttle_bench.sqlite3"
    if args.database_url:  # a fresh database of that name (history tables refuse a flush)
        import psycopg

        admin_url, name = args.database_url.rsplit("/", 1)
        with psycopg.connect(f"{admin_url}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
    setup_django(database_url=args.database_url, fresh_sqlite=fresh, broker=False)
    import requests
    from django.core.management import call_command
    from django.db import connection

    from memory.keys import issue_api_key
    from tests.servers import gunicorn, shared_database_url

    call_command("migrate", verbosity=0)
    staff_with_memories("bench-admin", ("bench", "Bench"))
    url = shared_database_url()
    result: dict[str, object] = {"backend": connection.vendor, "requests": args.requests}
    for store, env in (("database", {}), ("redis", {"CACHE_URL": args.redis})):
        secret = issue_api_key(name=f"bench-{store}", role="agent")[1]
        headers = {"Authorization": f"Bearer {secret}"}
        with gunicorn(url, workers=2, env={**env, "THROTTLE_KEY_RATE": "100000/min"}) as base:
            session = requests.Session()
            for _ in range(20):  # warm both workers
                session.get(f"{base}/api/v1/memories/bench", headers=headers)
            times = []
            for _ in range(args.requests):
                start = time.perf_counter()
                r = session.get(f"{base}/api/v1/memories/bench", headers=headers)
                times.append((time.perf_counter() - start) * 1000)
                assert r.status_code == 200, r.text
        times.sort()
        result[store] = {
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(len(times) * 0.95)], 2),
        }
        limited = issue_api_key(name=f"bench-{store}-limit", role="agent")[1]
        with gunicorn(url, workers=2, env={**env, "THROTTLE_KEY_RATE": "60/min"}) as base:
            codes = [
                requests.get(
                    f"{base}/api/v1/memories/bench", headers={"Authorization": f"Bearer {limited}"}
                ).status_code
                for _ in range(150)
            ]
        result[store]["ok_of_150_at_60_per_min"] = codes.count(200)  # type: ignore[index]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
