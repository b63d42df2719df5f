"""The revalidation job (``memory.revalidation``): counts the facts due for re-checking and tells
each owner when one of theirs fell due. It files nothing, writes no revision and never
deactivates anything: its only records are the run row (the daily count) and, on a real run,
the owners' notifications (``memory.effects.entries_fell_due``, wired by ``review``).

"Fell due" means the review date passed since the last real run of the job on the Memory (ever,
on the first run), so an owner hears once per entry per review date, however often it runs.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from .. import effects
from ..actors import Actor
from ..jobs import Job
from ..models import Head, HeadState, MaintenanceRun, Memory
from .runs import record_run, require_maintainer

NAME = "revalidation"


def run_revalidation(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """Count ``memory``'s active entries due for re-checking (``due``), those that fell due since
    the last real run (``fell_due``) and, on a real run, hand the latter to the
    ``entries_fell_due`` listeners (owners' notifications; ``notified`` counts the entries with
    an owner). Read-only on the Memory; no lock besides the (Memory, job) lock of ``run_job``."""
    memory = Memory.objects.get(pk=memory.pk)
    require_maintainer(actor, memory)
    started_at = timezone.now()
    last = (
        MaintenanceRun.objects.filter(memory=memory, job=NAME, dry_run=False)
        .order_by("-id")
        .values_list("started_at", flat=True)
        .first()
    )
    due = Head.objects.filter(memory=memory, state=HeadState.ACTIVE, review_at__lte=started_at)
    fell = due.filter(review_at__gt=last) if last is not None else due
    rows = list(
        fell.order_by("review_at", "entry_id").values_list(
            "entry__uid", "owner", "review_at", "version__number"
        )[: MaintenanceRun.MAX_ITEMS + 1]
    )
    fell_count = fell.count() if len(rows) > MaintenanceRun.MAX_ITEMS else len(rows)
    items: list[dict[str, Any]] = [
        {
            "entry_id": uid,
            "version": version,
            "owner": owner or None,
            "review_at": review_at.isoformat() if review_at else None,
            "action": "fell_due",
        }
        for uid, owner, review_at, version in rows
    ]
    notified = 0
    if not dry_run:
        owned = [item for item in items if item["owner"]]
        notified = len(owned)
        if owned:
            effects.entries_fell_due(memory, owned)
    return record_run(
        memory,
        actor=actor,
        job=NAME,
        dry_run=dry_run,
        parameters={"since": last.isoformat() if last else None},
        counts={"due": due.count(), "fell_due": fell_count, "notified": notified},
        items=items,
        started_at=started_at,
        entry_ids=[item["entry_id"] for item in items],
    )


JOB = Job(
    name=NAME,
    runner=run_revalidation,
    task="memory.revalidation",
    description="Counts the facts whose review date has passed and tells each owner when one "
    "of theirs falls due. Files nothing and never retires anything.",
    # Files nothing and changes nothing (a count and the owners' notifications): a reviewer's
    # manual run needs no switch; ``jobs.revalidation.enabled`` is the schedule's.
    gated=False,
    # Listed after the passes, and not in the start endpoint's published summary, as it was
    # added after them.
    order=1,
    in_api_summary=False,
)
