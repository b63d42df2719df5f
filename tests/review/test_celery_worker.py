"""Notifications through a real Celery worker and Redis (PostgreSQL: the worker is another
process and must see the same committed database)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from config.celery import app as celery_app
from review.models import Notification

REDIS_URL = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")

pytestmark = [
    pytest.mark.celery,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the worker needs a shared DB"),
    pytest.mark.django_db(transaction=True),
]


def _redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        return True
    except OSError:
        return False


def _reset_connections() -> None:
    """Drop pooled broker connections so the next publish uses the current broker_url."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def worker(tmp_path: Path):
    if not _redis_up():
        pytest.fail("Redis is not reachable on 127.0.0.1:6379; the Celery tests need it.")
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    mail_dir = tmp_path / "mail"
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": REDIS_URL,
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mail_dir),
    }
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
        cwd=Path(__file__).resolve().parents[2],
    )
    saved = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=REDIS_URL, task_always_eager=False)
    _reset_connections()
    try:
        yield mail_dir
    finally:
        celery_app.conf.update(**saved)
        _reset_connections()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_decision_notification_is_sent_by_a_real_worker(api, rv, memory, worker):
    from django.contrib.auth.models import User

    from tests.conftest import make_key
    from tests.factories import add_via_api
    from tests.review.conftest import submit

    User.objects.create_user("owner", email="owner@example.com", password="pw-owner-123")
    robot = api.as_(make_key("owned-robot", "agent", owner="owner"))
    a = add_via_api(robot, "The build cache lives in s3://acme-cache", dedupe=False)["entry_id"]
    b = add_via_api(robot, "Build cache bucket is s3://acme-cache", dedupe=False)["entry_id"]
    p = submit(
        robot,
        {
            "kind": "consolidation",
            "rationale": "dup",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "The build cache lives in s3://acme-cache",
        },
    )
    r = rv.post(
        f"/api/v1/proposals/{p['id']}/reject", {"reason": "wrong", "comment": "Two buckets"}
    )
    assert r.status_code == 200, r.text
    row = Notification.objects.get(proposal_id=p["id"], recipient="owner@example.com")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row.refresh_from_db()
        if row.sent_at is not None:
            break
        time.sleep(0.25)
    assert row.sent_at is not None, (
        f"worker did not send the notification (error: {row.last_error})"
    )
    mails = list(worker.glob("*.log"))
    assert mails, "no email file written by the worker"
    text = mails[0].read_text()
    assert "owner@example.com" in text and "Two buckets" in text
