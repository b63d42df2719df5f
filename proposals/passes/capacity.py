"""The capacity trigger (DESIGN §8): every N new low-importance entries, or a near-duplicate
density over a threshold, → one bounded cleanup proposal of the lowest retention scores, with
the reason.

- *New low entries*: active entries of low importance — at most the policy's
  ``importance_floor``, the L1 scan's floor (default 0: the seed's "low"; a fact or preference
  starts at 1, "normal") — recorded since the last real capacity run that fired on this Memory;
  the trigger fires at ``capacity_low_entries`` (default 50, the seed's "every 50 new low
  entries").
- *Near-duplicate density*: live ``duplicate_of`` observations (restatements: similarity at or
  above the Memory's ``tau_same``) between active entries per active entry; fires at
  ``jobs.capacity.duplicate_density`` (default 0.2). ``near_duplicate_of`` observations do not
  count: with the embedding model they mark entries on the same subject (cosine ≥ the model's
  ``tau_similar``: 0.62 with bge-small, 0.35 with MiniLM), most
  of them different facts, and counting them made a Memory of distinct facts look crowded and
  filed its least-recalled facts for cleanup.
- The proposal: at most ``jobs.capacity.max_entries`` (default 20, at most 50) active entries
  of low importance, validity current, not pinned, protected or session tier, not under a
  pending proposal, ordered by the retention score (``memory.maintenance.retention_score``,
  lowest first), filed through the intake as a ``cleanup`` proposal. While one cleanup proposal
  of this Memory is pending, no other is filed.
- The candidates are read in keyset batches, at most ``jobs.capacity.max_scan``; a real run
  resumes after the entry where the last real run stopped and wraps around at the end
  (``base.resumed_scan``; a run that does not fire keeps the position).

Dry run: the trigger figures and the would-be list, nothing filed. Idempotent.
"""

from __future__ import annotations

import heapq
from datetime import datetime
from functools import partial
from typing import Any

from django.db.models import Count, Max, Q
from django.utils import timezone

from memory import hooks, maintenance
from memory.actors import Actor
from memory.jobs import Number
from memory.models import (
    HeadState,
    MaintenanceRun,
    Memory,
    Relation,
    RelationKind,
    Tier,
    Validity,
)

from ..models import MAX_AFFECTED_ENTRIES, Proposal, ProposalKind
from . import base

NAME = "capacity"
DEFAULT_LOW_ENTRIES = 50
DEFAULT_DENSITY = 0.2
DEFAULT_MAX_ENTRIES = 20


def run_capacity(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """The capacity trigger of one Memory (see the module docstring).

    Preconditions: a maintainer, not inside a transaction. A real run needs no
    ``jobs.capacity.enabled`` (the beat schedule's switch). Effects: at most one cleanup
    proposal filed by the system actor, and the run row.
    """
    run = base.start(memory, actor=actor, job=NAME, dry_run=dry_run)
    memory = run.memory
    policy = memory.policy or {}
    cfg = maintenance.job_policy(policy, NAME)
    low_entries = int(policy.get("capacity_low_entries", DEFAULT_LOW_ENTRIES))
    density_limit = float(cfg.get("duplicate_density", DEFAULT_DENSITY))
    limit = max(1, min(MAX_AFFECTED_ENTRIES, int(cfg.get("max_entries", DEFAULT_MAX_ENTRIES))))
    since = _last_fired(memory)
    floor = maintenance.importance_floor(policy)
    low = base.active_projection(memory).filter(importance__lte=floor)
    reasons = _trigger_reasons(
        run, low, since, low_entries=low_entries, density_limit=density_limit
    )
    run.parameters.update(
        capacity_low_entries=low_entries,
        importance_floor=floor,
        duplicate_density=density_limit,
        max_entries=limit,
        since=since.isoformat() if since else None,
    )
    run.counts["triggered"] = bool(reasons)
    if not reasons:
        base.keep_cursor(run)
        return run.finish()
    open_cleanup = (
        Proposal.objects.open().filter(memory_id=memory.pk, kind=ProposalKind.CLEANUP).first()
    )
    if open_cleanup is not None:
        run.counts["cleanup_pending"] = open_cleanup.pk
        base.keep_cursor(run)
        return run.finish()
    best = _lowest_scores(run, low, limit)
    if not best:
        run.counts["no_candidates"] = True
        return run.finish()
    _propose_cleanup(run, best, "; ".join(reasons))
    return run.finish()


def _last_fired(memory: Memory) -> datetime | None:
    """When the last real run that fired on ``memory`` started (None: never). New entries are
    counted from then, so runs that did not fire never reset the count."""
    return MaintenanceRun.objects.filter(
        memory_id=memory.pk, job=NAME, dry_run=False, counts__triggered=True
    ).aggregate(last=Max("started_at"))["last"]


def _trigger_reasons(
    run: base.Pass, low: Any, since: datetime | None, *, low_entries: int, density_limit: float
) -> list[str]:
    """Counts the active entries, the low-importance ones recorded after ``since`` and the live
    duplicate observations between active entries into the run, and returns why the trigger
    fires (empty when it does not)."""
    memory = run.memory
    new_low = low.filter(recorded_at__gt=since) if since else low
    n_active = base.active_projection(memory).count()
    n_new_low = new_low.count()
    duplicates = (
        Relation.objects.filter(
            memory_id=memory.pk,
            kind=RelationKind.DUPLICATE_OF,
            retired_by__isnull=True,
            from_entry__head__state=HeadState.ACTIVE,
            to_entry__head__state=HeadState.ACTIVE,
        )
        .aggregate(n=Count("pk"))
        .get("n")
        or 0
    )
    density = duplicates / n_active if n_active else 0.0
    reasons = []
    if n_new_low >= low_entries:
        reasons.append(f"{n_new_low} new low-importance entries (threshold {low_entries})")
    if n_active and density >= density_limit:
        reasons.append(f"near-duplicate density {density:.2f} (threshold {density_limit})")
    run.counts.update(
        active=n_active,
        new_low_entries=n_new_low,
        duplicate_observations=duplicates,
        density=round(density, 4),
    )
    return reasons


def _lowest_scores(run: base.Pass, low: Any, limit: int) -> list[tuple[float, int, str, int]]:
    """The cleanup candidates among the low-importance entries with the lowest retention
    scores, at most ``limit``, lowest first, as ``(score, entry_pk, uid, version)``: read in
    resumed keyset batches, leaving out entries under a pending proposal."""
    memory = run.memory
    now = timezone.now()
    candidates = (
        low.filter(validity=Validity.CURRENT, pinned=False, protected=False)
        .exclude(tier=Tier.SESSION)
        .filter(~Q(entry__head__pinned=True))
    )
    half_life = partial(maintenance.retention_half_life, memory.policy or {})
    best: list[tuple[float, int, str, int]] = []
    for pks in base.resumed_scan(run, candidates):
        pending = hooks.entries_with_pending_proposals(memory, pks)
        rows = candidates.filter(entry_id__in=[p for p in pks if p not in pending]).values_list(
            "entry_id", "entry__uid", "version__number", *maintenance.SCORE_COLUMNS
        )
        scored = [
            (maintenance.score_row(values, now=now, half_life=half_life), pk, uid, number)
            for pk, uid, number, *values in rows
        ]
        run.count("scanned", len(pks))
        best = heapq.nsmallest(limit, best + scored)
    return best


def _propose_cleanup(run: base.Pass, best: list[tuple[float, int, str, int]], reason: str) -> None:
    """Files the cleanup proposal of the entries in ``best`` (a dry run only reports it)."""
    item: dict[str, Any] = {
        "entry_id": best[0][2],
        "entries": [b[2] for b in best],
        "reason": "capacity",
        "inputs": {
            "why": reason,
            "scores": [[b[2], round(b[0], 6)] for b in best],
        },
    }
    run.touched += [b[2] for b in best]
    run.propose(
        {
            "rationale": (
                f"Capacity trigger: {reason}. The {len(best)} active low-importance entries "
                f"with the lowest retention scores, for cleanup."
            ),
            "entries": [{"entry_id": b[2], "version": b[3]} for b in best],
        },
        kind=ProposalKind.CLEANUP,
        entry_pks=[b[1] for b in best],
        item=item,
    )


JOB = base.pass_job(
    name=NAME,
    runner=run_capacity,
    description="Checks the Memory against its capacity and files cleanup proposals for "
    "what is least worth keeping.",
    settings={"duplicate_density": Number(0, 100), "max_entries": Number(1, 50)},
)
