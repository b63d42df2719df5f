"""Maintenance runs: who may start one, the run row each writes, progress reports, and reading
a run back.

A run row is written once, when the job has finished (see ``MaintenanceRun``): the revisions a
real run commits are the authoritative record, the run summarizes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, NamedTuple

from django.db import transaction
from django.utils import timezone

from lib.correlation import current_correlation_id

from .. import audit
from ..actors import SYSTEM, Actor
from ..exceptions import Forbidden, NotFound
from ..models import AuditEvent, MaintenanceLock, MaintenanceRun, Memory

#: The lock holder of the current run (the Celery task id in a worker), kept on its run row.
lock_holder: ContextVar[str | None] = ContextVar("holder", default=None)


def require_maintainer(actor: Actor, memory: Memory) -> None:
    if not (actor.is_reviewer or actor.role == SYSTEM):
        raise Forbidden("Only reviewers and staff may run maintenance.")
    if not actor.sees_memory(memory.pk):
        raise Forbidden("This key may not run maintenance on that Memory.")


def record_run(
    memory: Memory,
    *,
    actor: Actor,
    job: str,
    dry_run: bool,
    parameters: dict[str, Any],
    counts: dict[str, Any],
    items: Sequence[dict[str, Any]],
    started_at: datetime,
    entry_ids: Sequence[str] = (),
) -> MaintenanceRun:
    """Append the run row and its ``maintenance.run`` audit event in one transaction.

    ``items`` are the receipts: one dict per candidate with ``entry_id`` (and ``entries`` when
    it concerns several), ``action`` and, for the passes, ``reason`` and ``inputs``. Only the
    first ``MaintenanceRun.MAX_ITEMS`` are kept; the counts cover everything."""
    holder = lock_holder.get()
    if holder is not None:
        parameters = {**parameters, "lock_holder": holder}
    with transaction.atomic(durable=True):
        run = MaintenanceRun.objects.create(
            memory=memory,
            job=job,
            dry_run=dry_run,
            parameters=parameters,
            counts=counts,
            items=list(items[: MaintenanceRun.MAX_ITEMS]),
            items_truncated=len(items) > MaintenanceRun.MAX_ITEMS,
            **actor.columns(on_behalf=False),
            correlation_id=current_correlation_id(),
            started_at=started_at,
            finished_at=max(timezone.now(), started_at),
        )
        audit.record(
            "maintenance.run",
            actor=actor,
            memory=memory,
            label=f"{job} ({'dry run' if dry_run else 'real'})",
            run_id=run.pk,
            entry_ids=list(entry_ids)[: MaintenanceRun.MAX_ITEMS],
            payload={"job": job, "dry_run": dry_run, "counts": counts},
        )
    return run


#: The progress callback of the current run, ``fn(done, total)`` (the command's progress bar).
_progress: ContextVar[Callable[[int, int], None] | None] = ContextVar("progress", default=None)


@contextmanager
def progress_scope(fn: Callable[[int, int], None]) -> Iterator[None]:
    """Report the progress of runs started inside this block to ``fn(done, total)``."""
    token = _progress.set(fn)
    try:
        yield
    finally:
        _progress.reset(token)


def report_progress(done: int, total: int) -> None:
    """Called by a job after each batch it scanned."""
    fn = _progress.get()
    if fn is not None:
        fn(done, total)


def get_run(actor: Actor, run_id: int) -> MaintenanceRun:
    """A run the actor may read (its Memory in scope); 404 otherwise. One query."""
    if not actor.can_read:
        raise Forbidden("Your role may not read maintenance runs.")
    run = (
        MaintenanceRun.objects.visible_to(actor).select_related("memory").filter(pk=run_id).first()
    )
    if run is None:
        raise NotFound(f"No maintenance run {run_id}.")
    return run


#: Why a worker skipped a requested run (``maintenance.skipped`` events' ``payload.reason``).
SKIP_REASONS = {
    "already_running": "the same job was already running on this Memory when a worker took it",
    "disabled": "the Memory's policy turned the job off after it was queued",
}


def record_skipped(
    memory: Memory, *, actor: Actor, job: str, task_id: str, dry_run: bool, reason: str
) -> None:
    """The worker skipped a run someone asked for (``reason``, a key of :data:`SKIP_REASONS`):
    an audit event naming the task, which its queued-run page reads."""
    audit.record(
        "maintenance.skipped",
        actor=actor,
        memory=memory,
        label=f"{job} ({'dry run' if dry_run else 'real run'}): {SKIP_REASONS[reason]}",
        payload={"job": job, "task_id": task_id, "dry_run": dry_run, "reason": reason},
    )


class TaskState(NamedTuple):
    """``state`` is queued, running, finished (``run`` is its row) or skipped (``reason`` says
    why, a phrase of :data:`SKIP_REASONS`)."""

    state: str
    run: MaintenanceRun | None = None
    reason: str = ""


def task_state(memory: Memory, job: str, task_id: str) -> TaskState:
    """Where a run handed to a worker as task ``task_id`` stands: running while the task holds
    the (Memory, job) lock, finished once its run row exists (the row names the task as
    ``parameters.lock_holder``), skipped once the worker recorded that it skipped it (a
    ``maintenance.skipped`` audit event naming the task), queued before any of these. The lock
    is read first: a run's row is written before its lock is released, so a finished run is
    never taken for a queued one. Three queries at most; a task lost with its worker stays
    queued."""
    held = MaintenanceLock.objects.filter(
        memory_id=memory.pk, job=job, holder=task_id, expires_at__gt=timezone.now()
    ).exists()
    if held:
        return TaskState("running")
    run = (
        MaintenanceRun.objects.for_memory(memory)
        .filter(job=job, parameters__lock_holder=task_id)
        .select_related("memory")
        .first()
    )
    if run is not None:
        return TaskState("finished", run)
    reason = (
        AuditEvent.objects.filter(
            action="maintenance.skipped",
            memory_id=memory.pk,
            payload__job=job,
            payload__task_id=task_id,
        )
        .values_list("payload__reason", flat=True)
        .first()
    )
    if reason is None:
        return TaskState("queued")
    return TaskState("skipped", reason=SKIP_REASONS.get(str(reason), str(reason)))
