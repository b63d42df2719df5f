"""L1 maintenance (DESIGN §8): the decay scan, the projection rebuild job, and the inventory.

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
- :func:`run_projection_rebuild` wraps ``lifecycle.rebuild_projection`` as a job (dry run =
  ``--check``). It only ever rewrites *derived* rows that differ from their rebuild.
- The inventory (a Memory's health figures) lives in :mod:`memory.inventory`.

A run row is written once, when the job has finished (see ``MaintenanceRun``): the revisions a
real run commits are the authoritative record, the run summarizes them.
"""

from __future__ import annotations

import heapq
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from lib.correlation import current_correlation_id

from . import audit, hooks, lifecycle
from .actions import Change, lock_memory, write_revision
from .actors import SYSTEM, Actor
from .exceptions import (
    Forbidden,
    JobNotAvailable,
    MaintenanceDisabled,
    MaintenanceRunning,
    NotFound,
)
from .jobs import JOB_NAMES
from .models import (
    Entry,
    EntryVersion,
    Head,
    HeadState,
    Kind,
    LifecycleProjection,
    MaintenanceLock,
    MaintenanceRun,
    Memory,
    Relation,
    RevisionKind,
    Tier,
    Validity,
)

AUTO_DECAY_REASON = "auto_decay:v1"

#: Retention windows in days when the policy says nothing (DESIGN §8 seeds).
SEED_RETENTION_DAYS = {Tier.LONG: 180, Tier.SHORT: 30}
DEFAULT_IMPORTANCE_FLOOR = 0
DEFAULT_MAX_PER_RUN = 100
#: Entries read per keyset batch while scanning, and retired per revision.
SCAN_BATCH = 500
RETIRE_BATCH = 50

#: Retention score constants (per day). Half-lives: 90 days for age, 30 days since a recall.
LAMBDA = math.log(2) / 90
SIGMA = 0.5
MU = math.log(2) / 30

# Every job name the API knows is ``memory.jobs.JOB_NAMES``. A job is available once an app
# registered it (:func:`register_job`): ``memory`` registers ``l1`` and ``rebuild``,
# ``proposals`` the passes that file proposals.
#: A lock older than this is taken over (a worker that died without releasing it).
LOCK_TTL = timedelta(minutes=30)

#: The lock holder of the current run (the Celery task id in a worker), kept on its run row.
_holder: ContextVar[str | None] = ContextVar("holder", default=None)


# --- The retention score ----------------------------------------------------------------------


def retention_score(
    *,
    importance: int,
    interval_started_at: datetime | None,
    time_known: bool,
    recall_count: int,
    last_recalled_at: datetime | None,
    now: datetime,
    half_life_days: float | None = None,
) -> float:
    """salience·e^(−λ·age) + σ·ln(1+recalls)·e^(−μ·since_recall), from stored timestamps only.

    λ = ln 2 / ``half_life_days`` (default 90; per tier and kind from the policy, see
    :func:`retention_half_life`).

    ``salience`` is ``(importance + 1) / 4`` (0.25..1). Age is days since the interval started.
    Unknown time never counts as old: with ``time_known`` false or no start, age is 0. Without a
    recorded recall time the recall term uses no decay only if there were no recalls (it is 0
    then anyway); timestamps in the future count as age 0.
    """
    salience = (max(0, min(3, importance)) + 1) / 4
    age = 0.0
    if time_known and interval_started_at is not None:
        age = max(0.0, (now - interval_started_at).total_seconds() / 86400)
    lam = LAMBDA if not half_life_days else math.log(2) / half_life_days
    score = salience * math.exp(-lam * age)
    if recall_count > 0:
        since = 0.0
        if last_recalled_at is not None:
            since = max(0.0, (now - last_recalled_at).total_seconds() / 86400)
        score += SIGMA * math.log1p(recall_count) * math.exp(-MU * since)
    return score


# --- Candidate selection ------------------------------------------------------------------------


def retention_days(policy: dict[str, Any], tier: str, kind: str) -> int:
    """The retention window of (tier, kind): ``policy.retention_days[tier]`` (seed 180 long,
    30 short); a per-kind value ``retention_days[kind]`` can only shorten it (short tier stays
    shorter than long)."""
    cfg = policy.get("retention_days") or {}
    days = int(cfg.get(tier, SEED_RETENTION_DAYS[Tier(tier)]))
    if kind in cfg:
        days = min(days, int(cfg[kind]))
    return max(0, days)


DEFAULT_HALF_LIFE_DAYS = 90


def retention_half_life(policy: dict[str, Any], tier: str, kind: str) -> float:
    """The retention score's half-life for (tier, kind): ``policy.half_life_days[kind]``, else
    ``[tier]``, else 90 days."""
    cfg = policy.get("half_life_days") or {}
    return float(cfg.get(kind, cfg.get(tier, DEFAULT_HALF_LIFE_DAYS)))


def importance_floor(policy: dict[str, Any]) -> int:
    return int(policy.get("importance_floor", DEFAULT_IMPORTANCE_FLOOR))


def max_per_run(policy: dict[str, Any]) -> int:
    return max(0, int(policy.get("l1_max_per_run", DEFAULT_MAX_PER_RUN)))


@dataclass(frozen=True, order=True)
class Candidate:
    score: float
    entry_pk: int
    entry_uid: str = field(compare=False)
    version_pk: int = field(compare=False)
    version_number: int = field(compare=False)

    def item(self, action: str) -> dict[str, Any]:
        return {
            "entry_id": self.entry_uid,
            "version": self.version_number,
            "score": round(self.score, 6),
            "action": action,
        }


@dataclass
class Scan:
    candidates: list[Candidate]
    eligible: int = 0
    skipped_pending_proposal: int = 0


def _eligible(memory: Memory, now: datetime, policy: dict[str, Any]) -> Any:
    """The projection rows the rules allow (everything but the pending-proposal rule)."""
    windows = Q()
    for tier in (Tier.SHORT, Tier.LONG):
        for kind in Kind.values:
            cutoff = now - timedelta(days=retention_days(policy, tier, kind))
            windows |= Q(tier=tier, kind=kind, interval_started_at__lte=cutoff)
    inbound = Relation.objects.filter(
        to_entry_id=OuterRef("entry_id"), authoritative=True, retired_by__isnull=True
    )
    return (
        LifecycleProjection.objects.filter(
            memory_id=memory.pk,
            state=HeadState.ACTIVE,
            validity=Validity.CURRENT,
            importance__lte=importance_floor(policy),
            pinned=False,
            protected=False,
            time_known=True,
            interval_started_at__isnull=False,
        )
        .exclude(tier=Tier.SESSION)
        .filter(windows)
        .filter(~Exists(inbound))
    )


def decay_candidates(
    memory: Memory,
    now: datetime,
    policy: dict[str, Any] | None = None,
    *,
    batch_size: int = SCAN_BATCH,
) -> Scan:
    """Entries the decay scan may retire, lowest retention score first, at most
    ``l1_max_per_run``. Writes nothing.

    The rules are one SQL filter on the projection (:func:`_eligible`), walked in keyset batches
    of plain columns of that one table (no join per row, never a whole Memory at once); per
    batch, one question for pending proposals, the scores, and the best candidates so far. The
    public ids and version numbers of the survivors are read once at the end."""
    policy = memory.policy if policy is None else policy
    limit = max_per_run(policy)
    scan = Scan(candidates=[])
    if limit == 0:
        return scan
    qs = _eligible(memory, now, policy)
    half_lives: dict[tuple[str, str], float] = {}

    def half_life(tier: str, kind: str) -> float:
        if (tier, kind) not in half_lives:
            half_lives[tier, kind] = retention_half_life(policy, tier, kind)
        return half_lives[tier, kind]

    best: list[tuple[float, int, int]] = []
    last = 0
    while True:
        rows = list(
            qs.filter(entry_id__gt=last)
            .order_by("entry_id")
            .values_list(
                "entry_id",
                "version_id",
                "importance",
                "interval_started_at",
                "time_known",
                "recall_count",
                "last_recalled_at",
                "tier",
                "kind",
            )[:batch_size]
        )
        if not rows:
            break
        last = rows[-1][0]
        pending = hooks.entries_with_pending_proposals(memory, [r[0] for r in rows])
        scan.eligible += len(rows)
        scan.skipped_pending_proposal += len(pending)
        batch = [
            (
                retention_score(
                    importance=importance,
                    interval_started_at=started,
                    time_known=known,
                    recall_count=recalls,
                    last_recalled_at=recalled,
                    now=now,
                    half_life_days=half_life(tier, kind),
                ),
                pk,
                version_pk,
            )
            for pk, version_pk, importance, started, known, recalls, recalled, tier, kind in rows
            if pk not in pending
        ]
        # (score, entry pk) orders exactly as Candidate does (pks are unique).
        best = heapq.nsmallest(limit, best + batch)
    if best:
        names = {
            pk: (entry_uid, number)
            for pk, entry_uid, number in EntryVersion.objects.filter(
                pk__in=[v for _, _, v in best]
            ).values_list("pk", "entry__uid", "number")
        }
        scan.candidates = [
            Candidate(score, pk, names[v][0], v, names[v][1]) for score, pk, v in best
        ]
    return scan


# --- Actions ---------------------------------------------------------------------------------


def _require_maintainer(actor: Actor, memory: Memory) -> None:
    if not (actor.is_reviewer or actor.role == SYSTEM):
        raise Forbidden("Only reviewers and staff may run maintenance.")
    if not actor.sees_memory(memory.pk):
        raise Forbidden("This key may not run maintenance on that Memory.")


@dataclass(frozen=True)
class Job:
    """A registered maintenance job: ``run(memory, *, actor, dry_run)`` is its action and
    ``task`` the Celery task calling it (``task.delay(memory_id, dry_run=, actor=,
    correlation_id=)``)."""

    name: str
    run: Callable[..., MaintenanceRun]
    task: Any


_JOBS: dict[str, Job] = {}


def register_job(name: str, run: Callable[..., MaintenanceRun], task: Any) -> None:
    """Make a job available (called from an ``AppConfig.ready``)."""
    _JOBS[name] = Job(name, run, task)


def jobs() -> dict[str, Job]:
    return dict(_JOBS)


def check_job(job: str) -> Job:
    """The registered job of that name; 422 ``invalid`` for a job this build cannot run."""
    if job in _JOBS:
        return _JOBS[job]
    available = ", ".join(sorted(_JOBS))
    if job in JOB_NAMES:
        raise JobNotAvailable(
            f"The maintenance job '{job}' is not available yet.",
            details={"job": [f"Available: {available}."]},
        )
    raise JobNotAvailable(
        f"Unknown maintenance job '{job}'.",
        details={"job": [f"One of {available}."]},
    )


def job_policy(policy: dict[str, Any], job: str) -> dict[str, Any]:
    """``policy.jobs[job]`` (``{enabled, every_hours}``); every job is off unless enabled."""
    raw = (policy.get("jobs") or {}).get(job) or {}
    return raw if isinstance(raw, dict) else {}


def job_enabled(policy: dict[str, Any], job: str) -> bool:
    if job == "l1" and policy.get("l1_enabled", False):
        return True
    return bool(job_policy(policy, job).get("enabled", False))


def require_enabled(memory: Memory, job: str) -> None:
    """A real (writing) run of ``job`` needs the job enabled in the Memory's policy (409
    ``maintenance_disabled`` otherwise, nothing written): with every option off no job changes
    anything (invariant 7). Dry runs are always allowed."""
    if not job_enabled(memory.policy or {}, job):
        raise MaintenanceDisabled(
            f"The maintenance job '{job}' is disabled for this Memory "
            f"(policy jobs.{job}.enabled is off)."
        )


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
    holder = _holder.get()
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
            actor_type=actor.type,
            actor_id=actor.id,
            actor_label=actor.label,
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


def _still_eligible(
    memory: Memory, batch: Sequence[Candidate], now: datetime, policy: dict[str, Any]
) -> list[Candidate]:
    """Re-check candidates under the Memory lock: same rules, no pending proposal, and the head
    still at the version and state the scan saw (compare-and-set)."""
    pks = [c.entry_pk for c in batch]
    allowed = set(
        _eligible(memory, now, policy).filter(entry_id__in=pks).values_list("entry_id", flat=True)
    )
    allowed -= hooks.entries_with_pending_proposals(memory, pks)
    heads = dict(
        Head.objects.filter(entry_id__in=pks, state=HeadState.ACTIVE).values_list(
            "entry_id", "version_id"
        )
    )
    return [c for c in batch if c.entry_pk in allowed and heads.get(c.entry_pk) == c.version_pk]


def run_decay_scan(
    memory: Memory,
    *,
    actor: Actor,
    dry_run: bool = True,
    now: datetime | None = None,
    batch_size: int = RETIRE_BATCH,
) -> MaintenanceRun:
    """The L1 decay scan of one Memory. Returns the recorded :class:`MaintenanceRun`.

    Preconditions: reviewer, staff or the system actor; not inside a transaction (each batch
    commits on its own). A real run needs policy ``l1_enabled`` (else ``MaintenanceDisabled``,
    nothing written). Effects: dry run — only the run row and its audit event; real run — per
    batch of at most ``batch_size`` entries, under the Memory lock, one ``forget`` revision with
    state reason ``auto_decay:v1`` and one ``entry.forgotten`` audit event. ``now`` is the
    clock the rules use (tests travel in time with it).
    """
    memory = Memory.objects.get(pk=memory.pk)
    _require_maintainer(actor, memory)
    policy = dict(memory.policy or {})
    if not dry_run and not policy.get("l1_enabled", False):
        raise MaintenanceDisabled()
    started_at = timezone.now()
    now = now or started_at
    scan = decay_candidates(memory, now, policy)
    parameters = {
        "now": now.isoformat(),
        "importance_floor": importance_floor(policy),
        "l1_max_per_run": max_per_run(policy),
        "half_life_days": {
            f"{tier}/{kind}": retention_half_life(policy, tier, kind)
            for tier in (Tier.SHORT, Tier.LONG)
            for kind in Kind.values
        },
        "retention_days": {
            f"{tier}/{kind}": retention_days(policy, tier, kind)
            for tier in (Tier.SHORT, Tier.LONG)
            for kind in Kind.values
        },
        "batch_size": batch_size,
    }
    counts: dict[str, Any] = {
        "eligible": scan.eligible,
        "skipped_pending_proposal": scan.skipped_pending_proposal,
        "candidates": len(scan.candidates),
        "retired": 0,
        "skipped_changed": 0,
        "revisions": [],
    }
    if dry_run:
        items = [c.item("would_retire") for c in scan.candidates]
        return record_run(
            memory,
            actor=actor,
            job="l1",
            dry_run=True,
            parameters=parameters,
            counts=counts,
            items=items,
            started_at=started_at,
        )
    items = []
    retired: list[str] = []
    for i in range(0, len(scan.candidates), max(1, batch_size)):
        batch = scan.candidates[i : i + max(1, batch_size)]
        with transaction.atomic(durable=True):
            locked = lock_memory(memory.pk)
            if not (locked.policy or {}).get("l1_enabled", False):
                # Turned off mid-run: stop before the next mutation.
                items += [c.item("skipped_disabled") for c in batch]
                counts["stopped"] = "l1_disabled"
                break
            ok = _still_eligible(locked, batch, now, policy)
            ok_pks = {c.entry_pk for c in ok}
            counts["skipped_changed"] += len(batch) - len(ok)
            items += [c.item("retired" if c.entry_pk in ok_pks else "skipped") for c in batch]
            if not ok:
                continue
            entries = Entry.objects.in_bulk([c.entry_pk for c in ok])
            revision = write_revision(
                locked,
                actor=actor,
                kind=RevisionKind.FORGET,
                reason=AUTO_DECAY_REASON,
                changes=[
                    Change(
                        entry=entries[c.entry_pk],
                        to_state=HeadState.INACTIVE,
                        state_reason=AUTO_DECAY_REASON,
                    )
                    for c in ok
                ],
            )
            uids = [c.entry_uid for c in ok]
            audit.record(
                "entry.forgotten",
                actor=actor,
                memory=locked,
                label=f"{len(ok)} entries by the decay scan",
                revision=revision,
                entry_ids=uids,
                payload={"reason": AUTO_DECAY_REASON, "retired": len(ok)},
            )
            retired += uids
            counts["retired"] += len(ok)
            counts["revisions"].append(revision.number)
    return record_run(
        memory,
        actor=actor,
        job="l1",
        dry_run=False,
        parameters=parameters,
        counts=counts,
        items=items,
        started_at=started_at,
        entry_ids=retired,
    )


def run_projection_rebuild(
    memory: Memory, *, actor: Actor, dry_run: bool = True, batch_size: int = 500
) -> MaintenanceRun:
    """Rebuild (dry run: only compare) the lifecycle projection of one Memory as a job.

    Only derived rows that differ from their rebuild are rewritten, so on a healthy projection a
    real run writes nothing but its run row. Locks: the Memory row per batch (inside
    ``lifecycle.rebuild_projection``).
    """
    memory = Memory.objects.get(pk=memory.pk)
    _require_maintainer(actor, memory)
    started_at = timezone.now()
    report = lifecycle.rebuild_projection(memory, actor=actor, check=dry_run, batch_size=batch_size)
    counts = {
        "entries": report.entries,
        "differing": len(report.differing),
        "written": report.written,
        "head_mismatches": len(report.head_mismatches),
        "vectors_missing": report.vectors_missing,
        "vectors_created": report.vectors_created,
    }
    items: list[dict[str, Any]] = [
        {
            "entry_id": row.entry_uid,
            "action": "differs" if dry_run else "rewritten",
            "fields": sorted(row.fields),
        }
        for row in report.differing[: MaintenanceRun.MAX_ITEMS + 1]
    ]
    items += [
        {"entry_id": uid, "action": "head_mismatch"}
        for uid in report.head_mismatches[: MaintenanceRun.MAX_ITEMS + 1]
    ]
    return record_run(
        memory,
        actor=actor,
        job="rebuild",
        dry_run=dry_run,
        parameters={"batch_size": batch_size},
        counts=counts,
        items=items,
        started_at=started_at,
    )


def _run_decay(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    return run_decay_scan(memory, actor=actor, dry_run=dry_run)


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
    _require_maintainer(actor, memory)
    with job_lock(memory, job, holder) as held:
        token = _holder.set(held)
        try:
            return spec.run(memory, actor=actor, dry_run=dry_run)
        finally:
            _holder.reset(token)


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


def after_session_end(memory_pk: int) -> None:
    """Queue the promotion pass (a real run as the system actor) for a Memory whose session just
    ended, when its policy enables ``jobs.promotion``. Called after commit, never under a lock;
    a failure to queue never fails the session end."""
    memory = Memory.objects.filter(pk=memory_pk).first()
    spec = _JOBS.get("promotion")
    if memory is None or spec is None or not job_enabled(memory.policy or {}, "promotion"):
        return
    try:
        spec.task.delay(memory_pk, dry_run=False)
    except Exception:
        import logging

        logging.getLogger(__name__).exception("promotion after session end not queued")


def last_runs(memory: Memory) -> dict[str, datetime]:
    """When each job last finished a real run on ``memory`` (for the beat fan-out)."""
    from django.db.models import Max

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
    for name in sorted(_JOBS):
        cfg = job_policy(policy, name)
        if not cfg.get("enabled", False):
            continue
        every = float(cfg.get("every_hours", 24))
        previous = last.get(name)
        if previous is None or now - previous >= timedelta(hours=every):
            due.append(name)
    return due


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
