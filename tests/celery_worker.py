"""A real Celery worker (Redis broker) for the tests that need one, on the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.parse
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app as celery_app


def _broker_url() -> str:
    """The Redis database the Celery tests use, 8 to 15 (0 to 7 stay free for a real broker),
    chosen by the configured database's name: the suites of checkouts running at once on one
    machine, each on a database of its own, mostly get different ones, so one suite's worker
    does not take another's tasks nor its flush empty another's queue (with a single shared
    database they did). ``TEST_CELERY_BROKER_URL`` overrides it."""
    name = str(settings.DATABASES["default"]["NAME"])
    return f"redis://127.0.0.1:6379/{8 + zlib.crc32(name.encode()) % 8}"


REDIS_URL = os.environ.get("TEST_CELERY_BROKER_URL") or _broker_url()


def redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        return True
    except OSError:
        return False


def reset_connections() -> None:
    """Drop pooled broker connections so the next publish uses the current broker_url. kombu
    keeps producer pools in a process-wide registry too: reset it, or a later test would reuse
    a producer pool whose connections were closed here ("Acquire on closed pool")."""
    from kombu import pools

    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    pools.reset()


def database_url() -> str:
    """The test database as a URL a worker process can open (TCP or unix socket)."""
    db = connection.settings_dict
    host = db["HOST"] or "127.0.0.1"
    if host.startswith("/"):
        return f"postgres://{db['USER']}@{urllib.parse.quote(host, safe='')}/{db['NAME']}"
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def running_worker(**env_extra: str) -> Iterator[None]:
    """A ``--pool solo`` worker on the test database; this process publishes to it."""
    if not redis_up():
        pytest.fail("Redis is not reachable on 127.0.0.1:6379; the Celery tests need it.")
    env = {**os.environ, "DATABASE_URL": database_url(), "CELERY_BROKER_URL": REDIS_URL}
    env.update(env_extra)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "warning",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        env=env,
        cwd=Path(__file__).resolve().parents[1],
    )
    saved = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=REDIS_URL, task_always_eager=False)
    reset_connections()
    try:
        yield
    finally:
        celery_app.conf.update(**saved)
        reset_connections()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
