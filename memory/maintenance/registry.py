"""Running the registered maintenance jobs: policy switches, the (Memory, job) lock, running
one, queueing one, and which are due.

The jobs themselves are the registry's (``memory.jobs``): each app registers its own in its
``AppConfig.ready()`` — ``memory`` the L1 jobs, ``proposals`` the passes that file proposals.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from celery import current_app
from celery.result import AsyncResult
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from lib.wording import one_of

from ..actors import Actor
from ..exceptions import JobNotAvailable, MaintenanceDisabled, MaintenanceRunning
from ..jobs import DEFAULT_EVERY_HOURS, Job, get_job, job_enabled, job_names, job_policy, jobs
from ..models import MaintenanceLock, MaintenanceRun, Memory
from .runs import lock_holder, require_maintainer

log = logging.getLogger(__name__)


#: A lock older than this is taken over (a worker that died without releasing it).
LOCK_TTL = timedelta(minutes=30)


def check_job(job: str) -> Job:
    """The registered job of that name; 422 ``invalid`` for a job no app registered."""
    spec = get_job(job)
    if spec is None:
        raise JobNotAvailable(
            f"Unknown maintenance job '{job}'.",
            details={"job": [one_of(sorted(job_names()))]},
        )
    return spec


def queue(job: Job, memory_pk: int, **options: object) -> AsyncResult:
    """Hand a run of ``job`` on a Memory to its Celery task (``memory.tasks.job_task`` made it
    when the job's app started): queued with a broker, run in-process without one. Returns the
    task's result (an ``EagerResult`` when it ran in-process)."""
    return current_app.tasks[job.task].delay(memory_pk, **options)


def require_enabled(memory: Memory, job: str) -> None:
    """A real (writing) run of ``job`` needs the job enabled in the Memory's policy (409
    ``maintenance_disabled`` otherwise, nothing written): with every option off no job changes
    anything (invariant 7). Dry runs are always allowed."""
    if not job_enabled(memory.policy or {}, job):
        raise MaintenanceDisabled(
            f"The maintenance job '{job}' is disabled for this Memory "
            f"(policy jobs.{job}.enabled is off)."
        )


def check_start(memory: Memory, job: str, *, dry_run: bool) -> Job:
    """What a request to run ``job`` checks before handing it to a worker, so the caller hears
    the refusal the run itself would meet: 422 for an unknown job, 409 ``maintenance_disabled``
    for a real run of a gated job its policy does not enable, 409 ``maintenance_running`` while
    a live lock holds the (Memory, job) pair. With a broker the run happens later, in a worker
    that checks all of it again."""
    spec = check_job(job)
    if not dry_run and spec.gated:
        require_enabled(memory, job)
    held = (
        MaintenanceLock.objects.filter(memory_id=memory.pk, job=job, expires_at__gt=timezone.now())
        .only("acquired_at")
        .first()
    )
    if held is not None:
        raise MaintenanceRunning(
            f"A '{job}' run is already in progress on this Memory.",
            details={"job": job, "since": held.acquired_at.isoformat()},
        )
    return spec


@contextmanager
def job_lock(memory: Memory, job: str, holder: str | None = None) -> Iterator[str]:
    """Hold the (Memory, job) lock for the duration of a run: two runs of one job never
    overlap on one Memory (409 ``maintenance_running`` for the second).

    The lock is a row with a unique (memory, job) key, taken in its own short transaction so it
    works on both backends. A lock whose holder is the same (a redelivered Celery task keeps
    its id) or that is older than :data:`LOCK_TTL` (a worker killed without releasing it) is
    taken over. Released when the run ends, whatever the outcome.
    """
    holder = holder or f"local:{uuid.uuid4().hex}"
    now = timezone.now()
    with transaction.atomic():
        MaintenanceLock.objects.filter(memory_id=memory.pk, job=job).filter(
            Q(holder=holder) | Q(expires_at__lte=now)
        ).delete()
        try:
            with transaction.atomic():
                MaintenanceLock.objects.create(
                    memory_id=memory.pk,
                    job=job,
                    holder=holder,
                    acquired_at=now,
                    expires_at=now + LOCK_TTL,
                )
        except IntegrityError:
            other = MaintenanceLock.objects.filter(memory_id=memory.pk, job=job).first()
            raise MaintenanceRunning(
                f"A '{job}' run is already in progress on this Memory.",
                details={"job": job, "since": other.acquired_at.isoformat() if other else None},
            ) from None
    try:
        yield holder
    finally:
        MaintenanceLock.objects.filter(memory_id=memory.pk, job=job, holder=holder).delete()


def run_job(
    memory: Memory,
    *,
    actor: Actor,
    job: str,
    dry_run: bool = True,
    holder: str | None = None,
) -> MaintenanceRun:
    """Run one registered job on one Memory under its (Memory, job) lock (see
    :func:`job_lock`). ``holder`` names the lock owner (the Celery task id in a worker)."""
    spec = check_job(job)
    memory = Memory.objects.get(pk=memory.pk)
    require_maintainer(actor, memory)
    with job_lock(memory, job, holder) as held:
        token = lock_holder.set(held)
        try:
            run = spec.runner(memory, actor=actor, dry_run=dry_run)
        finally:
            lock_holder.reset(token)
    if not isinstance(run, MaintenanceRun):
        raise TypeError(f"The runner of '{job}' returned {type(run).__name__}, not its run.")
    return run


def after_session_end(memory_pk: int) -> None:
    """Queue each job that runs when a session ends (``Job.after_session_end``: the promotion
    pass) for a Memory whose session just ended — a real run as the system actor — when its
    policy enables it. Called after commit, never under a lock; a failure to queue never fails
    the session end."""
    memory = Memory.objects.filter(pk=memory_pk).first()
    if memory is None:
        return
    for spec in jobs().values():
        if not spec.after_session_end or not job_enabled(memory.policy or {}, spec.name):
            continue
        try:
            queue(spec, memory_pk, dry_run=False)
        except Exception:
            log.exception("%s after session end not queued", spec.name)


def last_runs(memory: Memory) -> dict[str, datetime]:
    """When each job last finished a real run on ``memory`` (for the beat fan-out)."""
    rows = (
        MaintenanceRun.objects.filter(memory_id=memory.pk, dry_run=False)
        .values("job")
        .annotate(last=Max("finished_at"))
        .order_by()
    )
    return {r["job"]: r["last"] for r in rows}


def due_jobs(memory: Memory, now: datetime) -> list[str]:
    """The jobs whose policy enables them and whose ``every_hours`` (default 24) has passed
    since their last real run on ``memory``."""
    policy = memory.policy or {}
    last = last_runs(memory)
    due = []
    for name in sorted(job_names()):
        cfg = job_policy(policy, name)
        if not cfg.get("enabled", False):
            continue
        every = float(cfg.get("every_hours", DEFAULT_EVERY_HOURS))
        previous = last.get(name)
        if previous is None or now - previous >= timedelta(hours=every):
            due.append(name)
    return due
