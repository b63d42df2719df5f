"""L1 maintenance (DESIGN §8): the decay scan, the projection rebuild job, and the job registry.

Everything here is off by default and dry-run first:

- :func:`retention_score` is a pure function of stored timestamps (never a stored value decayed
  over and over). It orders decay candidates: the lowest score is retired first.
- :func:`decay_candidates` selects the entries the decay scan may retire — *all* of: head active
  and validity current; importance ≤ ``importance_floor`` (default 0); the retention window for
  the entry's tier and kind has passed since ``interval_started_at`` with known time; not pinned
  or protected; not session tier; no live inbound authoritative relation; no pending proposal
  touching it (asked through ``memory.hooks``: memory never imports proposals). It walks the
  projection table in keyset batches and keeps only the best ``l1_max_per_run`` (default 100).
- :func:`run_decay_scan` is the action. A dry run (the default) changes nothing and writes only
  its :class:`~memory.models.MaintenanceRun` (and the ``maintenance.run`` audit event). A real
  run needs the Memory's policy ``l1_enabled`` (default off): otherwise it raises
  :class:`~memory.exceptions.MaintenanceDisabled` (HTTP 409) and writes nothing at all — so with
  every option off no job mutates anything (invariant 7). A real run retires candidates in
  batches: per batch it takes the Memory lock, re-checks every candidate under the lock
  (compare-and-set on the head version and state, the same rules re-evaluated, pending proposals
  asked again) and writes one ``forget`` revision whose changes carry ``auto_decay:v1``; the
  projection then shows ``auto_action_reason = auto_decay:v1`` and ``reactivate`` undoes it.
  Running it again retires nothing new (retired entries are no longer active).
- :func:`rebuild_projection` walks a Memory's heads in batches under its lock (each batch
  derived and compared by ``lifecycle.rebuild_batch``), brings the vectors up to date and records
  what it wrote; :func:`run_projection_rebuild` runs it as a job (dry run = ``--check``). It only
  ever rewrites *derived* rows that differ from their rebuild.
- The inventory (a Memory's health figures) lives in :mod:`memory.inventory`.

A run row is written once, when the job has finished (see ``MaintenanceRun``): the revisions a
real run commits are the authoritative record, the run summarizes them.

One module per domain: :mod:`.retention` (the score and the policy numbers), :mod:`.decay` (the
decay scan), :mod:`.rebuild` (the rebuild job), :mod:`.runs` (run rows, progress, reading a run),
:mod:`.registry` (policy switches, the job lock, running and queueing one, due jobs). The jobs
themselves are registered in ``memory.jobs``; :data:`JOBS` are this package's.
"""

from ..jobs import Job, get_job, job_enabled, job_names, job_policy, jobs, register_job
from . import decay, rebuild, revalidation
from .decay import (
    SCAN_COLUMNS,
    SCORE_COLUMNS,
    Candidate,
    Scan,
    decay_candidates,
    run_decay_scan,
    score_row,
)
from .decay import _run_decay as _run_decay
from .decay import _still_eligible as _still_eligible
from .rebuild import RebuildReport, rebuild_projection, run_projection_rebuild
from .registry import (
    LOCK_TTL,
    after_session_end,
    check_job,
    check_start,
    due_jobs,
    job_lock,
    last_runs,
    queue,
    require_enabled,
    run_job,
)
from .retention import (
    AUTO_DECAY_REASON,
    DEFAULT_HALF_LIFE_DAYS,
    DEFAULT_IMPORTANCE_FLOOR,
    DEFAULT_MAX_PER_RUN,
    LAMBDA,
    MU,
    RETIRE_BATCH,
    SCAN_BATCH,
    SEED_RETENTION_DAYS,
    SIGMA,
    importance_floor,
    max_per_run,
    retention_days,
    retention_half_life,
    retention_score,
)
from .revalidation import run_revalidation
from .runs import (
    get_run,
    progress_scope,
    record_run,
    record_skipped,
    report_progress,
    require_maintainer,
    task_state,
)

#: The L1 jobs of the memory core, registered by ``MemoryConfig.ready``.
JOBS = (decay.JOB, rebuild.JOB, revalidation.JOB)

__all__ = [
    "AUTO_DECAY_REASON",
    "DEFAULT_HALF_LIFE_DAYS",
    "DEFAULT_IMPORTANCE_FLOOR",
    "DEFAULT_MAX_PER_RUN",
    "JOBS",
    "LAMBDA",
    "LOCK_TTL",
    "MU",
    "RETIRE_BATCH",
    "SCAN_BATCH",
    "SCAN_COLUMNS",
    "SCORE_COLUMNS",
    "SEED_RETENTION_DAYS",
    "SIGMA",
    "Candidate",
    "Job",
    "RebuildReport",
    "Scan",
    "after_session_end",
    "check_job",
    "check_start",
    "decay_candidates",
    "due_jobs",
    "get_job",
    "get_run",
    "importance_floor",
    "job_enabled",
    "job_lock",
    "job_names",
    "job_policy",
    "jobs",
    "last_runs",
    "max_per_run",
    "progress_scope",
    "queue",
    "rebuild_projection",
    "record_run",
    "record_skipped",
    "register_job",
    "report_progress",
    "require_enabled",
    "require_maintainer",
    "retention_days",
    "retention_half_life",
    "retention_score",
    "run_decay_scan",
    "run_job",
    "run_projection_rebuild",
    "run_revalidation",
    "score_row",
    "task_state",
]
