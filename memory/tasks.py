"""Celery tasks of the memory core: thin, named, primitive arguments, idempotent.

- ``memory.l1_decay_scan(memory_id, dry_run=True, actor=None)`` → the run id. Without an actor
  (beat) it runs as the system actor. A real run on a Memory whose policy has ``l1_enabled``
  off raises ``MaintenanceDisabled`` (nothing written); a second run retires nothing new.
- ``memory.rebuild_projection(memory_id, dry_run=True, actor=None)`` → the run id.
- ``memory.schedule_maintenance()`` — beat: fans out per Memory by its policy ``jobs``.
- ``memory.index_vectors(version_ids)`` — the vectors of new versions, after their revision
  commits (``memory.vectors``).

Every job task runs ``maintenance.run_job`` under the (Memory, job) lock. A person's request to
run one (the REST endpoint, the maintenance page) goes through :func:`start_job`, the one place
that checks it and either queues it or has it run in-process.

``actor`` is :func:`actor_to_primitive` of the caller, so a worker records who asked. Without
``CELERY_BROKER_URL`` tasks run eagerly in-process and the run exists when ``delay`` returns.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from celery import shared_task
from celery.result import EagerResult

from lib.correlation import correlation_scope, current_correlation_id

from . import maintenance
from .actors import Actor
from .exceptions import MaintenanceDisabled, MaintenanceRunning
from .jobs import Job
from .models import MaintenanceRun, Memory

log = logging.getLogger(__name__)


def actor_to_primitive(actor: Actor) -> dict[str, Any]:
    return {
        "type": actor.type,
        "id": actor.id,
        "label": actor.label,
        "role": actor.role,
        "clearance": actor.clearance,
        "memory_ids": sorted(actor.memory_ids) if actor.memory_ids is not None else None,
        "on_behalf_of": actor.on_behalf_of,
    }


def actor_from_primitive(raw: dict[str, Any] | None, label: str) -> Actor:
    if raw is None:
        return Actor.system(label)
    ids = raw.get("memory_ids")
    return Actor(
        type=raw["type"],
        id=raw["id"],
        label=raw["label"],
        role=raw["role"],
        clearance=raw["clearance"],
        memory_ids=frozenset(ids) if ids is not None else None,
        on_behalf_of=raw.get("on_behalf_of", ""),
    )


def run_task(
    task: Any,
    job: str,
    memory_id: int,
    *,
    dry_run: bool,
    actor: dict[str, Any] | None,
    correlation_id: str | None,
) -> int:
    """The body every maintenance task shares: one call of ``maintenance.run_job`` under the
    job lock, held by the task id (a redelivered task takes its own lock back). Returns the
    run id; a Memory deleted since the task was queued is nothing to do (0)."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        return 0
    with correlation_scope(correlation_id):
        try:
            run = maintenance.run_job(
                memory,
                actor=actor_from_primitive(actor, job),
                job=job,
                dry_run=dry_run,
                holder=getattr(task.request, "id", None),
            )
        except MaintenanceRunning:
            if actor is not None and _in_process(task):
                raise
            # A scheduled run while another one of the same job is still going: nothing to do.
            # A requested one was checked when it was queued (``maintenance.check_start``); in
            # a worker nobody waits for the 409, so it is a line in the log, not a traceback.
            log.log(
                logging.INFO if actor is None else logging.WARNING,
                "%s on memory %s is already running; skipped",
                job,
                memory_id,
            )
            _record_skip(task, memory, job, actor, dry_run=dry_run, reason="already_running")
            return 0
        except MaintenanceDisabled:
            if _in_process(task):
                raise
            # The policy turned the job off after the run was queued.
            log.warning("%s on memory %s is disabled by its policy; skipped", job, memory_id)
            _record_skip(task, memory, job, actor, dry_run=dry_run, reason="disabled")
            return 0
    return run.pk


def _record_skip(
    task: Any,
    memory: Memory,
    job: str,
    actor: dict[str, Any] | None,
    *,
    dry_run: bool,
    reason: str,
) -> None:
    """A requested run the worker skipped is recorded for the person who asked (its queued-run
    page says so and why); a scheduled one is only the log line."""
    task_id = getattr(task.request, "id", None)
    if actor is None or not task_id:
        return
    maintenance.record_skipped(
        memory,
        actor=actor_from_primitive(actor, job),
        job=job,
        task_id=task_id,
        dry_run=dry_run,
        reason=reason,
    )


@dataclass(frozen=True)
class Started:
    """A requested run: ``run`` is the finished run when it ran in-process, None when it was
    queued for a worker, which records it with ``parameters.lock_holder`` = ``task_id``."""

    job: str
    dry_run: bool
    task_id: str
    run: MaintenanceRun | None


def start_job(memory: Memory, *, actor: Actor, job: str, dry_run: bool) -> Started:
    """Start ``job`` on ``memory`` as a person asked: refused first, exactly as the run itself
    would refuse it (``maintenance.check_start``: 422 unknown job, 409 ``maintenance_disabled``,
    409 ``maintenance_running``), so nobody is told "queued" about a run a worker will skip;
    then handed to the job's task. With a broker the task is queued and this returns at once;
    without one (``CELERY_TASK_ALWAYS_EAGER``) it runs in-process and its refusals are raised
    here."""
    maintenance.require_maintainer(actor, memory)
    spec = maintenance.check_start(memory, job, dry_run=dry_run)
    result = maintenance.queue(
        spec,
        memory.pk,
        dry_run=dry_run,
        actor=actor_to_primitive(actor),
        correlation_id=current_correlation_id(),
    )
    # No result backend is configured, so a queued task's result is never asked for (``ready()``
    # would raise); in the embedded mode it has finished.
    if not isinstance(result, EagerResult):
        return Started(job, dry_run, result.id, None)
    run = MaintenanceRun.objects.select_related("memory").get(pk=result.get())
    return Started(job, dry_run, result.id, run)


def _in_process(task: Any) -> bool:
    """Whether the task runs eagerly, inside the caller, who hears its exceptions."""
    return bool(getattr(task.request, "is_eager", False))


# acks_late + reject_on_worker_lost: a worker killed mid-run leaves its message unacknowledged,
# so the run is redelivered and recorded; every job is idempotent, so the rerun files nothing
# twice.
TASK_OPTIONS: dict[str, Any] = {"bind": True, "acks_late": True, "reject_on_worker_lost": True}


def job_task(job: Job) -> Any:
    """The thin Celery task named ``job.task`` that runs ``job`` through :func:`run_task` (made
    once, when the module declaring the job is loaded by its app; the same task again after).

    Arguments stay primitive: ``memory_id, dry_run=True, actor=None, correlation_id=None``.
    """
    name = job.name

    def task(
        self: Any,
        memory_id: int,
        dry_run: bool = True,
        actor: dict[str, Any] | None = None,
        correlation_id: str | None = None,
    ) -> int:
        return run_task(
            self, name, memory_id, dry_run=dry_run, actor=actor, correlation_id=correlation_id
        )

    task.__name__ = task.__qualname__ = job.task.rsplit(".", 1)[-1]
    return shared_task(name=job.task, **TASK_OPTIONS)(task)


l1_decay_scan = job_task(maintenance.decay.JOB)
rebuild_projection = job_task(maintenance.rebuild.JOB)
revalidation = job_task(maintenance.revalidation.JOB)


@shared_task(name="memory.schedule_maintenance")
def schedule_maintenance() -> list[list[Any]]:
    """The beat entry point: for every Memory, queue each job its policy enables and whose
    ``every_hours`` has passed (a real run, as the system actor). Returns ``[[slug, job], …]``
    queued. Overlap is impossible: each job run takes its (Memory, job) lock."""
    from django.utils import timezone

    now = timezone.now()
    queued: list[list[Any]] = []
    for memory in Memory.objects.order_by("pk").iterator(chunk_size=200):
        for job in maintenance.due_jobs(memory, now):
            maintenance.queue(maintenance.check_job(job), memory.pk, dry_run=False)
            queued.append([memory.slug, job])
    return queued


def queue_vectors(version_pks: Sequence[int]) -> None:
    """``memory.effects.versions_written`` listener (after the revision committed): have the
    vectors of the new versions made. A failure to queue never undoes the write: the backfill
    makes what is missing."""
    from .embeddings import get_provider

    if get_provider() is None or not version_pks:
        return
    pks = [int(pk) for pk in version_pks]
    try:
        index_vectors.delay(pks)
    except Exception:
        log.exception("indexing vectors of versions %s failed", pks)


@shared_task(name="memory.index_vectors", acks_late=True, reject_on_worker_lost=True)
def index_vectors(version_ids: list[int]) -> int:
    """Embed and index the vectors of new versions (queued after their revision commits;
    idempotent, so a redelivery stores nothing twice). Returns how many have a vector."""
    from . import vectors

    return vectors.index_versions([int(pk) for pk in version_ids])


@shared_task(name="memory.fold_recall_events")
def fold_recall_events(events: list[list[Any]]) -> int:
    """Fold recall events (``[memory_id, entry, actor_id, iso_time]``) into the projection;
    throttled per entry × actor, so a redelivery counts nothing twice within the window."""
    from . import recall_events

    return recall_events.fold(events)
