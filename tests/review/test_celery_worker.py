"""Notifications through a real Celery worker and Redis (PostgreSQL: the worker is another
process and must see the same committed database)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.db import connection

from review.models import Notification
from tests.celery_worker import running_worker

pytestmark = [
    pytest.mark.celery,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the worker needs a shared DB"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def worker(tmp_path: Path):
    mail_dir = tmp_path / "mail"
    with running_worker(
        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
        EMAIL_FILE_PATH=str(mail_dir),
    ):
        yield mail_dir


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
