"""Celery tasks of proposal intake: thin, named, idempotent.

``proposals.purge_idempotency_keys`` deletes idempotency records past their expiry (they are
honoured at least 24 h). Schedule it with beat (e.g. hourly); running it twice is harmless.
"""

from __future__ import annotations

from celery import shared_task

from . import actions


@shared_task(name="proposals.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return actions.purge_idempotency_keys()
