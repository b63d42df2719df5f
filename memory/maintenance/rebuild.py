"""The projection rebuild as a maintenance job (dry run = ``rebuild_projection --check``)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from .. import lifecycle
from ..actors import Actor
from ..models import MaintenanceRun, Memory
from .runs import record_run, require_maintainer


def run_projection_rebuild(
    memory: Memory, *, actor: Actor, dry_run: bool = True, batch_size: int = 500
) -> MaintenanceRun:
    """Rebuild (dry run: only compare) the lifecycle projection of one Memory as a job.

    Only derived rows that differ from their rebuild are rewritten, so on a healthy projection a
    real run writes nothing but its run row. Locks: the Memory row per batch (inside
    ``lifecycle.rebuild_projection``).
    """
    memory = Memory.objects.get(pk=memory.pk)
    require_maintainer(actor, memory)
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
