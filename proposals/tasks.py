"""Celery tasks of proposal intake: thin, named, idempotent.

``proposals.purge_idempotency_keys`` deletes idempotency records past their expiry (they are
honoured at least 24 h). Schedule it with beat (e.g. hourly); running it twice is harmless.

The maintenance passes (``proposals.<pass>`` for each of ``passes.JOBS``; arguments
``memory_id, dry_run=True, actor=None, correlation_id=None``) each run one pass through
``memory.maintenance.run_job`` under the (Memory, job) lock and return the run id. acks_late: a
worker killed mid-run has the run redelivered; the passes are idempotent.
"""

from __future__ import annotations

from celery import shared_task

from memory.tasks import job_task

from . import actions, passes


@shared_task(name="proposals.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return actions.purge_idempotency_keys()


#: One task per pass (``proposals.<pass>``), made from its job.
TASKS = {job.name: job_task(job) for job in passes.JOBS}
