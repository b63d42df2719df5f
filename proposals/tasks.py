"""Celery tasks of proposal intake: thin, named, idempotent.

``proposals.purge_idempotency_keys`` deletes idempotency records past their expiry (they are
honoured at least 24 h). Schedule it with beat (e.g. hourly); running it twice is harmless.

The maintenance passes (``proposals.near_duplicates``, ``proposals.contradictions``,
``proposals.promotion``, ``proposals.capacity``; arguments ``memory_id, dry_run=True,
actor=None, correlation_id=None``) each run one pass through ``memory.maintenance.run_job``
under the (Memory, job) lock and return the run id. acks_late: a worker killed mid-run has
the run redelivered; the passes are idempotent.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from memory.tasks import TASK_OPTIONS, run_task

from . import actions


@shared_task(name="proposals.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return actions.purge_idempotency_keys()


@shared_task(name="proposals.near_duplicates", **TASK_OPTIONS)
def near_duplicates(
    self: Any,
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    return run_task(
        self,
        "near_duplicates",
        memory_id,
        dry_run=dry_run,
        actor=actor,
        correlation_id=correlation_id,
    )


@shared_task(name="proposals.contradictions", **TASK_OPTIONS)
def contradictions(
    self: Any,
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    return run_task(
        self,
        "contradictions",
        memory_id,
        dry_run=dry_run,
        actor=actor,
        correlation_id=correlation_id,
    )


@shared_task(name="proposals.promotion", **TASK_OPTIONS)
def promotion(
    self: Any,
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    return run_task(
        self, "promotion", memory_id, dry_run=dry_run, actor=actor, correlation_id=correlation_id
    )


@shared_task(name="proposals.capacity", **TASK_OPTIONS)
def capacity(
    self: Any,
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    return run_task(
        self, "capacity", memory_id, dry_run=dry_run, actor=actor, correlation_id=correlation_id
    )


TASKS = {
    "near_duplicates": near_duplicates,
    "contradictions": contradictions,
    "promotion": promotion,
    "capacity": capacity,
}
