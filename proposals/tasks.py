"""Celery tasks of proposal intake: thin, named, idempotent.

``proposals.purge_idempotency_keys`` deletes idempotency records past their expiry (they are
honoured at least 24 h). Schedule it with beat (e.g. hourly); running it twice is harmless.

The maintenance passes (``proposals.near_duplicates``, ``proposals.contradictions``,
``proposals.promotion``, ``proposals.capacity``, ``proposals.injection_scan``; arguments
``memory_id, dry_run=True, actor=None, correlation_id=None``) each run one pass through
``memory.maintenance.run_job`` under the (Memory, job) lock and return the run id. acks_late: a
worker killed mid-run has the run redelivered; the passes are idempotent.
"""

from __future__ import annotations

from celery import shared_task

from memory.tasks import job_task

from . import actions


@shared_task(name="proposals.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return actions.purge_idempotency_keys()


near_duplicates = job_task("proposals.near_duplicates", "near_duplicates")
contradictions = job_task("proposals.contradictions", "contradictions")
promotion = job_task("proposals.promotion", "promotion")
capacity = job_task("proposals.capacity", "capacity")
injection_scan = job_task("proposals.injection_scan", "injection_scan")


TASKS = {
    "near_duplicates": near_duplicates,
    "contradictions": contradictions,
    "promotion": promotion,
    "capacity": capacity,
    "injection_scan": injection_scan,
}
