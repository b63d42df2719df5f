"""End to end with real Redis, a real ``celery worker`` and a real ``celery beat`` (PostgreSQL:
the worker is another process and must see the same committed database).

Beat fans out per Memory by its policy; the worker runs the near-duplicate pass and files its
proposals. The worker is SIGKILLed while a run holds its lock; a new worker gets the
unacknowledged task redelivered (the task keeps its id, so it takes its own lock back), and the
run completes: the killed run's record exists and no proposal is filed twice.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from memory import actions
from memory.actors import Actor
from memory.models import MaintenanceLock, MaintenanceRun
from proposals.models import Proposal
from tests.celery_worker import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.celery,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the worker needs a shared DB"),
    pytest.mark.django_db(transaction=True),
]

TOPICS = [
    "build cache",
    "release notes",
    "payments service",
    "feature flags",
    "nightly backup",
    "error budget",
    "style guide",
    "integration tests",
]


def _redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        return True
    except OSError:
        return False


def _env() -> dict[str, str]:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    return {
        **os.environ,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "STEWARD_MAINTENANCE_BEAT_SECONDS": "1",
    }


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", *args, "--loglevel", "warning"],
        env=_env(),
        cwd=ROOT,
        start_new_session=True,
    )


def _worker() -> subprocess.Popen[bytes]:
    return _start(
        "worker", "--pool", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def _flush_broker() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


# Waits out the broker's redelivery of the killed worker's task: about 110 s on an idle machine.
@pytest.mark.timeout(900)
def test_scheduled_pass_survives_a_killed_worker(memory, agent, tmp_path):
    if not _redis_up():
        pytest.fail("Redis is not reachable on 127.0.0.1:6379; the Celery tests need it.")
    _flush_broker()
    # Enough entries that one run takes a few seconds; a near-duplicate pair per topic.
    for i, topic in enumerate(TOPICS):
        for body in (
            f"The {topic} runbook is kept in docs/{i}/runbook.md and reviewed monthly",
            f"The {topic} runbook is kept in docs/{i}/runbook.md",
        ):
            actions.add_entry(memory, actor=agent.actor, body=body, kind="fact", dedupe=False)
    for n in range(300):
        actions.add_entry(
            memory,
            actor=agent.actor,
            body=f"Filler fact {n} about subsystem s{n} with owner o{n % 37} and port {2000 + n}",
            kind="fact",
            dedupe=False,
        )
    founder = Actor.for_user(_founder())
    actions.update_memory_policy(
        memory,
        actor=founder,
        policy={"jobs": {"near_duplicates": {"enabled": True, "every_hours": 24}}},
    )
    beat = _start("beat", "--schedule", str(tmp_path / "beat-schedule"))
    worker = _worker()
    second = None
    try:
        lock = _wait(
            lambda: MaintenanceLock.objects.filter(memory=memory, job="near_duplicates").first(),
            90,
            "the scheduled run to start",
        )
        assert not MaintenanceRun.objects.filter(job="near_duplicates").exists()
        os.killpg(worker.pid, signal.SIGKILL)  # mid-run: the lock is held, no run recorded
        worker.wait(timeout=10)
        killed_task = lock.holder
        assert not MaintenanceRun.objects.filter(job="near_duplicates").exists()
        second = _worker()
        run = _wait(
            lambda: MaintenanceRun.objects.filter(
                job="near_duplicates", parameters__lock_holder=killed_task
            ).first(),
            120,
            "the redelivered run to be recorded",
        )
        assert not run.dry_run and run.actor_type == "system"
        assert len(run.counts["proposals"]) == len(TOPICS)
    finally:
        _stop(beat)
        _stop(worker)
        if second is not None:
            _stop(second)
        _flush_broker()
    proposals = Proposal.objects.filter(memory=memory, kind="consolidation")
    assert proposals.count() == len(TOPICS)
    assert len(set(proposals.values_list("affected_key", flat=True))) == len(TOPICS)
    assert not MaintenanceLock.objects.exists()


def _founder() -> Any:
    from django.contrib.auth.models import User

    return User.objects.get(username="founder")
