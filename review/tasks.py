"""Celery tasks of the review app: thin, named, idempotent, ids only."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.request

from celery import shared_task
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from .models import Notification


def sign(body: bytes) -> str:
    secret = (getattr(settings, "WEBHOOK_SIGNING_KEY", "") or settings.SECRET_KEY).encode()
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def post_webhook(url: str, payload: dict[str, object]) -> int:
    body = json.dumps(payload, sort_keys=True).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "X-Steward-Signature": sign(body)},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


@shared_task(name="review.send_notification", bind=True, max_retries=5, default_retry_delay=30)
def send_notification(self, notification_id: int) -> str:  # type: ignore[no-untyped-def]
    """Send one queued notification once; a sent one is skipped (idempotent)."""
    with transaction.atomic():
        row = Notification.objects.select_for_update().filter(pk=notification_id).first()
        if row is None or row.sent_at is not None:
            return "skipped"
        row.attempts += 1
        try:
            if row.channel == "webhook":
                post_webhook(
                    row.recipient,
                    {"event": row.event, "proposal": row.proposal_id, "text": row.body},
                )
            else:
                send_mail(row.subject, row.body, settings.DEFAULT_FROM_EMAIL, [row.recipient])
        except Exception as exc:
            row.last_error = str(exc)[:2000]
            row.save(update_fields=["attempts", "last_error"])
            raise self.retry(exc=exc) from exc
        row.sent_at = timezone.now()
        row.save(update_fields=["attempts", "sent_at"])
    return "sent"
