"""Real server processes for tests that need more than the in-thread live server: gunicorn on the
test database (or on one that cannot be reached), with its own environment."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import requests
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def shared_database_url() -> str:
    """The test database as a ``DATABASE_URL`` another process can open (SQLite: a file)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return (
        f"postgres://{db['USER'] or 'postgres'}{password}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )


@contextmanager
def gunicorn(
    database_url: str, *, workers: int = 1, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``gunicorn config.wsgi`` on a free port (sync workers, lexical only, no broker); yields
    its base URL once it answers, and stops the process group afterwards."""
    port = free_port()
    environment = {
        # The test run's own database and cache settings are not the server's.
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL")},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "STEWARD_EMBEDDINGS_PROVIDER": "none",
        "CELERY_BROKER_URL": "",
        "LOG_LEVEL": "CRITICAL",
        **(env or {}),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--timeout",
            "60",
            "--log-level",
            "critical",
        ],
        cwd=ROOT,
        env=environment,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                requests.get(f"{base}/healthz", timeout=2)
                break
            except requests.RequestException:
                if process.poll() is not None or time.monotonic() > deadline:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                    raise RuntimeError(f"gunicorn did not come up:\n{stderr[-3000:]}") from None
                time.sleep(0.2)
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process.stderr:
            process.stderr.close()
