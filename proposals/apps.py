"""App config for proposals: registers the proposal hooks on the memory core.

``memory`` never imports ``proposals``; it offers explicit hook points (``memory.hooks``) that are
called inside its transactions. Here ``proposals`` registers:

- ``on_heads_changed`` → :func:`proposals.actions.mark_stale_for_heads` (a changed head makes the
  pending proposals touching it stale, atomically with the change);
- ``on_entry_admitted`` → :func:`proposals.actions.file_duplicate_consolidation` (a duplicate on
  add files a consolidation proposal as the system actor) and
  :func:`proposals.actions.file_injection_quarantine` (injection findings → quarantine proposal);
- ``on_candidate_written`` → :func:`proposals.actions.file_admission` (a candidate's admission
  proposal, in the write's transaction);
- ``on_entries_with_pending_proposals`` / ``on_pending_proposals_by_kind`` /
  ``on_rejected_proposals_by_kind`` → read-only providers below, so L1 maintenance leaves
  entries under review alone and the inventory counts pending and rejected proposals;
- the maintenance passes (``proposals.passes.JOBS``) in the job registry (``memory.jobs``).
"""

from typing import Any

from django.apps import AppConfig
from django.db.models import Count


def entries_with_pending_proposals(memory: Any, entry_pks: list[int]) -> set[int]:
    """Which of ``entry_pks`` an open proposal of ``memory`` touches (one query)."""
    from .models import OPEN_STATUSES, ProposalTarget

    return set(
        ProposalTarget.objects.filter(
            proposal__memory_id=memory.pk,
            proposal__status__in=OPEN_STATUSES,
            entry_id__in=list(entry_pks),
        ).values_list("entry_id", flat=True)
    )


def pending_proposals_by_kind(memory: Any, reader: Any = None) -> dict[str, int]:
    """Pending proposals of ``memory`` per kind (one query); with a ``reader``, only those it
    may see."""
    from .models import Proposal

    pending = Proposal.objects.pending()
    if reader is not None:
        pending = pending.visible_to(reader)
    rows = (
        pending.filter(memory_id=memory.pk).values("kind").annotate(n=Count("pk")).order_by("kind")
    )
    return {r["kind"]: r["n"] for r in rows}


def rejected_proposals_by_kind(memory: Any, reader: Any = None) -> dict[str, dict[str, int]]:
    """Rejected proposals of ``memory`` per kind and rejection reason (one query); with a
    ``reader``, only those it may see."""
    from .models import Proposal, ProposalStatus

    rejected = Proposal.objects.filter(memory_id=memory.pk, status=ProposalStatus.REJECTED)
    if reader is not None:
        rejected = rejected.visible_to(reader)
    rows = (
        rejected.values("kind", "rejection_reason")
        .annotate(n=Count("pk"))
        .order_by("kind", "rejection_reason")
    )
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r["kind"], {})[r["rejection_reason"]] = r["n"]
    return out


class ProposalsConfig(AppConfig):
    name = "proposals"
    verbose_name = "Proposals"

    def ready(self) -> None:
        from memory import effects as memory_effects
        from memory import hooks

        from . import actions

        hooks.on_heads_changed(actions.mark_stale_for_heads)
        memory_effects.entry_admitted.connect(actions.file_duplicate_consolidation)
        memory_effects.entry_admitted.connect(actions.file_injection_quarantine)
        hooks.on_candidate_written(actions.file_admission)
        hooks.on_entries_with_pending_proposals(entries_with_pending_proposals)
        hooks.on_pending_proposals_by_kind(pending_proposals_by_kind)
        hooks.on_rejected_proposals_by_kind(rejected_proposals_by_kind)

        from memory.jobs import register_job

        # tasks makes each pass's Celery task.
        from . import passes, tasks  # noqa: F401

        for job in passes.JOBS:
            register_job(job)
