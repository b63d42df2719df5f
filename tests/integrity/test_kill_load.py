"""The short variant of ``bench/kill_load.py`` (PostgreSQL, Redis, gunicorn, a Celery worker):
agents write and propose, reviewers approve, maintenance runs, while web and worker are killed
with SIGKILL and restarted; afterwards no acknowledged write is missing and verify_integrity
passes (the script exits 1 otherwise)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.celery,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="web and worker share PostgreSQL"),
]


def test_no_acknowledged_write_is_lost_when_web_and_worker_are_killed():
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        pytest.fail("Redis is not reachable on 127.0.0.1:6379; this test needs it.")
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    url = (
        f"postgres://{db['USER'] or 'postgres'}{password}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}_load"
    )
    broker = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/8")
    done = subprocess.run(
        [
            sys.executable,
            "bench/kill_load.py",
            "--json",
            "--seconds",
            "14",
            "--kill-every",
            "6",
            "--agents",
            "2",
            "--reviewers",
            "1",
            "--drain-seconds",
            "5",
            "--port",
            str(_free_port()),
            "--database-url",
            url,
            "--broker",
            broker,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    _drop(url)
    assert done.stdout.strip(), done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, summary
    assert summary["processes_killed"] >= 2
    assert summary["acknowledged"]["entries"] > 0
    assert summary["lost"] == {"lost_entries": 0, "lost_proposals": 0, "lost_approvals": 0}
    assert summary["errors"] == 0 and summary["integrity_exit"] == 0


def _free_port() -> int:
    # A port nothing listens on now, so a stray server elsewhere cannot make this run fail.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _drop(url: str) -> None:
    import psycopg

    admin, name = url.rsplit("/", 1)
    with psycopg.connect(f"{admin}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
