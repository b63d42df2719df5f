"""The L1 decay scan: selecting the entries it may retire, and retiring them (DESIGN §8).

:func:`decay_candidates` selects the entries the scan may retire — *all* of: head active and
validity current; importance ≤ ``importance_floor``; the retention window for the entry's tier
and kind has passed since ``interval_started_at`` with known time; not pinned or protected; not
session tier; no live inbound authoritative relation; no pending proposal touching it (asked
through ``memory.hooks``: memory never imports proposals). :func:`run_decay_scan` is the action:
a dry run writes only its run row; a real run needs ``l1_enabled`` and retires candidates in
batches, each re-checked under the Memory lock and written as one ``forget`` revision.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from .. import audit, hooks
from ..actions import Change, lock_memory, write_revision
from ..actors import Actor
from ..exceptions import MaintenanceDisabled
from ..jobs import Job, job_enabled
from ..models import (
    Entry,
    EntryVersion,
    Head,
    HeadState,
    Kind,
    LifecycleProjection,
    MaintenanceRun,
    Memory,
    Relation,
    RevisionKind,
    Tier,
    Validity,
)
from .retention import (
    AUTO_DECAY_REASON,
    RETIRE_BATCH,
    SCAN_BATCH,
    importance_floor,
    max_per_run,
    retention_days,
    retention_half_life,
    retention_score,
)
from .runs import record_run, require_maintainer

#: The job (``policy.jobs.l1``; ``l1_enabled`` turns it on too).
NAME = "l1"

#: The projection columns a row's retention score needs, in the order :func:`score_row` takes
#: them: the score's inputs, then the tier and kind that choose its half-life.
SCORE_COLUMNS = (
    "importance",
    "interval_started_at",
    "time_known",
    "recall_count",
    "last_recalled_at",
    "tier",
    "kind",
)
#: The projection columns the scan reads per row: keys, then what the retention score needs.
SCAN_COLUMNS = ("entry_id", "version_id", *SCORE_COLUMNS)


def score_row(
    values: Sequence[Any], *, now: datetime, half_life: Callable[[str, str], float]
) -> float:
    """The retention score of one row of :data:`SCORE_COLUMNS` values; ``half_life(tier, kind)``
    gives the half-life in days (from the policy)."""
    importance, started, known, recalls, recalled, tier, kind = values
    return retention_score(
        importance=importance,
        interval_started_at=started,
        time_known=known,
        recall_count=recalls,
        last_recalled_at=recalled,
        now=now,
        half_life_days=half_life(tier, kind),
    )


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
            .values_list(*SCAN_COLUMNS)[:batch_size]
        )
        if not rows:
            break
        last = rows[-1][0]
        pending = hooks.entries_with_pending_proposals(memory, [r[0] for r in rows])
        scan.eligible += len(rows)
        scan.skipped_pending_proposal += len(pending)
        batch = [
            (score_row(values, now=now, half_life=half_life), pk, version_pk)
            for pk, version_pk, *values in rows
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


def _run_parameters(policy: dict[str, Any], now: datetime, batch_size: int) -> dict[str, Any]:
    """What a run recorded its rules with: the clock, the floor, the per-run cap, and the
    half-life and retention of every tier and kind the scan reads."""
    return {
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
    commits on its own). A real run needs policy ``l1_enabled`` or ``jobs.l1.enabled`` — the
    switch the beat reads — (else ``MaintenanceDisabled``,
    nothing written). Effects: dry run — only the run row and its audit event; real run — per
    batch of at most ``batch_size`` entries, under the Memory lock, one ``forget`` revision with
    state reason ``auto_decay:v1`` and one ``entry.forgotten`` audit event. ``now`` is the
    clock the rules use (tests travel in time with it).
    """
    memory = Memory.objects.get(pk=memory.pk)
    require_maintainer(actor, memory)
    policy = dict(memory.policy or {})
    if not dry_run and not job_enabled(policy, NAME):
        raise MaintenanceDisabled()
    started_at = timezone.now()
    now = now or started_at
    scan = decay_candidates(memory, now, policy)
    parameters = _run_parameters(policy, now, batch_size)
    counts: dict[str, Any] = {
        "eligible": scan.eligible,
        "skipped_pending_proposal": scan.skipped_pending_proposal,
        "candidates": len(scan.candidates),
        "retired": 0,
        "skipped_changed": 0,
        "revisions": [],
    }
    retired: list[str] = []
    if dry_run:
        items = [c.item("would_retire") for c in scan.candidates]
    else:
        items, retired = _retire(
            memory,
            scan.candidates,
            actor=actor,
            now=now,
            policy=policy,
            batch_size=batch_size,
            counts=counts,
        )
    return record_run(
        memory,
        actor=actor,
        job=NAME,
        dry_run=dry_run,
        parameters=parameters,
        counts=counts,
        items=items,
        started_at=started_at,
        entry_ids=retired,
    )


def _retire(
    memory: Memory,
    candidates: Sequence[Candidate],
    *,
    actor: Actor,
    now: datetime,
    policy: dict[str, Any],
    batch_size: int,
    counts: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[str]]:
    """A real run's writes: per batch, under the Memory lock, the candidates still eligible are
    retired by one ``forget`` revision. Returns the receipts and the retired entry ids; updates
    ``counts``. Stops before the next batch when l1 was turned off meanwhile."""
    items: list[dict[str, Any]] = []
    retired: list[str] = []
    for i in range(0, len(candidates), max(1, batch_size)):
        batch = candidates[i : i + max(1, batch_size)]
        with transaction.atomic(durable=True):
            locked = lock_memory(memory.pk)
            if not job_enabled(locked.policy or {}, NAME):
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
    return items, retired


def _run_decay(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    return run_decay_scan(memory, actor=actor, dry_run=dry_run)


JOB = Job(
    name=NAME,
    runner=_run_decay,
    task="memory.l1_decay_scan",
    description="The decay scan: retires stale working notes and session entries by the "
    "policy's rules (writes only when enabled).",
    enabled_by="l1_enabled",
)
