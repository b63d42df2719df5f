"""The projection rebuild: a whole Memory walked batch by batch under its lock, its vectors
brought up to date, an audit event for what it wrote; and the same as a maintenance job (dry
run = ``rebuild_projection --check``).

The derivation and the comparison of one batch are the lifecycle package's
(:func:`memory.lifecycle.rebuild_batch`); this module adds what a rebuild does around it: the
Memory lock per batch, the embeddings, ``ANALYZE`` and the ``projection.rebuilt`` event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from .. import audit
from ..actions import lock_memory
from ..actors import Actor
from ..db_stats import PROJECTION_TABLES, VECTOR_TABLES, analyze
from ..embeddings import get_provider
from ..jobs import Job
from ..lifecycle import RowDiff, Span, rebuild_batch
from ..models import Head, MaintenanceRun, Memory
from ..vectors import index_versions, missing_versions
from .runs import record_run, require_maintainer

NAME = "rebuild"


@dataclass
class RebuildReport:
    memory_slug: str
    entries: int = 0
    differing: list[RowDiff] = field(default_factory=list)
    head_mismatches: list[str] = field(default_factory=list)
    written: int = 0
    vectors_missing: int = 0
    vectors_created: int = 0

    @property
    def clean(self) -> bool:
        return not self.differing and not self.head_mismatches and not self.vectors_missing


def rebuild_projection(
    memory: Memory,
    *,
    actor: Actor,
    check: bool = False,
    batch_size: int = 500,
    progress: Callable[[RebuildReport], object] | None = None,
) -> RebuildReport:
    """Rebuild (or, with ``check``, only compare) the lifecycle projection of one Memory.

    Walks the Memory's heads in bounded batches (keyset on the entry key, each batch a
    :class:`Span` read by range); each batch is compared under the Memory lock, so a concurrent
    writer can neither interleave with it nor wait long. Also replays each entry's revision
    changes against its head, and — when an embedding provider is configured — brings the
    derived vectors of head versions up to date (outside the lock: embedding is slow). A real
    rebuild ends with ``ANALYZE`` of the projection (and vector) tables on PostgreSQL, and, if it
    wrote something, records one ``projection.rebuilt`` audit event. ``progress(report)`` is
    called after every batch.
    """
    report = RebuildReport(memory_slug=memory.slug)
    provider = get_provider()
    for span, pks in _head_batches(memory.pk, batch_size):
        with transaction.atomic():
            lock_memory(memory.pk)
            diffs, mismatched, written = rebuild_batch(pks, write=not check, span=span)
        report.entries += len(pks)
        report.differing += diffs
        report.head_mismatches += mismatched
        report.written += written
        if provider is not None:
            _bring_vectors_up_to_date(pks, report, check=check)
        if progress is not None:
            progress(report)
    if not check:
        # Planner statistics for what was (re)written: a rebuild is a bulk load.
        analyze(PROJECTION_TABLES + (VECTOR_TABLES if report.vectors_created else ()))
    if not check and (report.written or report.vectors_created):
        _record_rebuild(memory, actor, report)
    return report


def _head_batches(memory_pk: int, batch_size: int) -> Iterator[tuple[Span, list[int]]]:
    """The Memory's head entry keys in keyset batches, each with the span it covers (an entry
    has a projection row once it has a head)."""
    last = 0
    while True:
        pks = list(
            Head.objects.filter(memory_id=memory_pk, entry_id__gt=last)
            .order_by("entry_id")
            .values_list("entry_id", flat=True)[:batch_size]
        )
        if not pks:
            return
        yield Span(memory_pk, last, pks[-1]), pks
        last = pks[-1]


def _bring_vectors_up_to_date(pks: list[int], report: RebuildReport, *, check: bool) -> None:
    """Count (``check``) or create the missing vectors of the batch's head versions."""
    missing = list(missing_versions().filter(entry_id__in=pks).values_list("pk", flat=True))
    if check:
        report.vectors_missing += len(missing)
    else:
        report.vectors_created += index_versions(missing)


def _record_rebuild(memory: Memory, actor: Actor, report: RebuildReport) -> None:
    """The ``projection.rebuilt`` audit event of a rebuild that wrote something."""
    with transaction.atomic():
        audit.record(
            "projection.rebuilt",
            actor=actor,
            memory=memory,
            label=f"{report.written} rows rewritten",
            payload={
                "entries": report.entries,
                "written": report.written,
                "vectors_created": report.vectors_created,
                "head_mismatches": len(report.head_mismatches),
            },
        )


def run_projection_rebuild(
    memory: Memory, *, actor: Actor, dry_run: bool = True, batch_size: int = 500
) -> MaintenanceRun:
    """Rebuild (dry run: only compare) the lifecycle projection of one Memory as a job.

    Only derived rows that differ from their rebuild are rewritten, so on a healthy projection a
    real run writes nothing but its run row. Locks: the Memory row per batch (inside
    :func:`rebuild_projection`).
    """
    memory = Memory.objects.get(pk=memory.pk)
    require_maintainer(actor, memory)
    started_at = timezone.now()
    report = rebuild_projection(memory, actor=actor, check=dry_run, batch_size=batch_size)
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
        job=NAME,
        dry_run=dry_run,
        parameters={"batch_size": batch_size},
        counts=counts,
        items=items,
        started_at=started_at,
    )


JOB = Job(
    name=NAME,
    runner=run_projection_rebuild,
    task="memory.rebuild_projection",
    description="Rebuilds the derived rows (the lifecycle projection) from the revisions and "
    "reports any difference.",
    # It rewrites derived rows only: a reviewer's real run needs no policy switch.
    gated=False,
)
