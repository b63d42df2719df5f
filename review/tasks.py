"""Celery tasks of the review app: thin, named, idempotent, ids only.

The sending of one queued notification lives here; the tasks that queue notifications live
beside what they queue (``review.notifications.send_digests``,
``review.exposed.send_exposure_notice``, ``review.exposed.send_revision_exposure_notice``), so
the modules that queue import this one and never the other way round."""

from __future__ import annotations

import hashlib
import hmac
import json

from celery import shared_task
from django.conf import settings
from django.core.mail import send_mail
from django.db.models import F
from django.utils import timezone

from lib.outbound import post_json

from .models import Notification

#: The webhook event whose stored body is its JSON payload (``review.exposed``).
EXPOSED = "operation.exposed"


def sign(body: bytes) -> str:
    secret = (getattr(settings, "WEBHOOK_SIGNING_KEY", "") or settings.SECRET_KEY).encode()
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def post_webhook(url: str, payload: dict[str, object]) -> int:
    """POST the signed payload; refuses (``lib.outbound.UnsafeDestination``) unless the URL is
    https and its host resolves, now, to public addresses only."""
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {"Content-Type": "application/json", "X-Steward-Signature": sign(body)}
    return post_json(url, body, headers, timeout=10)


@shared_task(name="review.send_notification", bind=True, max_retries=5, default_retry_delay=30)
def send_notification(self, notification_id: int) -> str:  # type: ignore[no-untyped-def]
    """Send one queued notification once (idempotent).

    The row is claimed with a compare-and-set on ``attempts`` (two workers never both send),
    the network I/O runs outside any transaction (no database lock is held while waiting on a
    mail server or webhook), and the outcome is recorded in its own short update.
    """
    row = Notification.objects.filter(pk=notification_id, sent_at__isnull=True).first()
    if row is None:
        return "skipped"
    claimed = Notification.objects.filter(
        pk=row.pk, sent_at__isnull=True, attempts=row.attempts
    ).update(attempts=F("attempts") + 1)
    if not claimed:
        return "skipped"
    try:
        if row.channel == "webhook" and row.event == EXPOSED:
            post_webhook(row.recipient, json.loads(row.body))  # stored as the payload
        elif row.channel == "webhook":
            post_webhook(
                row.recipient, {"event": row.event, "proposal": row.proposal_id, "text": row.body}
            )
        else:
            send_mail(row.subject, row.body, settings.DEFAULT_FROM_EMAIL, [row.recipient])
    except Exception as exc:  # recorded, then retried by Celery
        Notification.objects.filter(pk=row.pk).update(last_error=str(exc)[:2000])
        raise self.retry(exc=exc) from exc
    Notification.objects.filter(pk=row.pk).update(sent_at=timezone.now(), last_error="")
    return "sent"
