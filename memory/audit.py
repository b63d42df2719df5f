"""The audit event stream: a registered vocabulary and the one function that appends to it.

Actions call :func:`record` inside their own transaction, so an event exists exactly when the
change it describes was committed. Payloads are small facts (ids, versions, reasons, codes) —
never secrets, never bodies of unrelated entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

from django.db import transaction

from lib.correlation import current_correlation_id

from .actors import Actor
from .audit_chain import seal_new_event, seal_new_events
from .models import AuditEvent, Memory

#: The registered vocabulary. Recording anything else is a programming error.
ACTIONS: dict[str, str] = {
    "memory.created": "A Memory was created.",
    "memory.policy_changed": "A Memory's policy was changed.",
    "source.registered": "A source was registered.",
    "source.declared": "A source's evidence declaration got a new version.",
    "key.issued": "An API key was issued.",
    "entry.added": "An entry was added (revision kind add).",
    "entry.revised": "An entry got a new version or an importance override.",
    "entry.forgotten": "An entry was retired (head inactive).",
    "entry.reactivated": "An inactive entry was made active again, same version.",
    "entry.pinned": "An entry was pinned or unpinned by a reviewer.",
    "entry.confirmed": "An entry was re-checked and confirmed: its review date moved on.",
    "entry.reverification_required": "A reviewer marked an entry due for re-checking now.",
    "entry.quarantined": "A reviewer withheld an entry from every recall view.",
    "entry.released": "A reviewer released a quarantined entry to its earlier state.",
    "session.ended": "A session's session-tier entries were retired.",
    "relation.observed": (
        "An observation relation was recorded (conflicts_with, duplicate_of, near_duplicate_of)."
    ),
    "proposal.submitted": "An L2 proposal was submitted.",
    "proposal.withdrawn": "The submitter withdrew a pending proposal.",
    "proposal.commented": "Someone commented on a proposal.",
    "proposal.comment_resolved": "A comment on a proposal was marked resolved.",
    "proposal.changes_requested": "A reviewer asked for changes to a proposal.",
    "proposal.amended": "A proposal was amended (a new proposal revision).",
    "proposal.rebased": "A stale proposal was pointed at the current heads (a new revision).",
    "proposal.assigned": "A proposal was assigned to a reviewer (or unassigned).",
    "proposal.stale": "A pending proposal can no longer apply (an affected head changed).",
    "proposal.approved": "A reviewer approved a proposal (revision + operation written).",
    "proposal.approval_recorded": "One of several required approvals was recorded.",
    "proposal.rejected": "A reviewer rejected a proposal.",
    "operation.compensated": "A maintenance operation was compensated (undone).",
    "maintenance.run": "A maintenance job ran (dry run or real).",
    "maintenance.skipped": (
        "A worker skipped a requested maintenance run: the job was already running on the "
        "Memory, or its policy turned the job off after the run was queued."
    ),
    "projection.rebuilt": "The lifecycle projection was rebuilt.",
}


class UnknownAuditAction(ValueError):
    """An action name outside the registered vocabulary."""


def _atomic() -> Any:
    """A transaction when none is open; inside one, nothing more (no savepoint: a failure
    rolls the caller's whole transaction back anyway)."""
    return nullcontext() if transaction.get_connection().in_atomic_block else transaction.atomic()


def record(
    action: str,
    *,
    actor: Actor,
    memory: Memory | None = None,
    label: str = "",
    revision: Any = None,
    proposal_id: int | None = None,
    operation_id: int | None = None,
    run_id: int | None = None,
    entry_ids: Iterable[str] = (),
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    if action not in ACTIONS:
        raise UnknownAuditAction(action)
    with _atomic():  # the event and its seal (memory.audit_chain), together or neither
        event = AuditEvent.objects.create(
            action=action,
            **actor.columns(),
            correlation_id=current_correlation_id(),
            memory_id=memory.pk if memory else None,
            memory_label=memory.slug if memory else "",
            label=label[:300],
            revision_number=revision.number if revision is not None else None,
            proposal_id=proposal_id,
            operation_id=operation_id,
            run_id=run_id,
            entry_ids=list(entry_ids),
            payload=payload or {},
        )
        seal_new_event(event)
    return event


def record_many(
    action: str,
    *,
    actor: Actor,
    memory: Memory,
    revision: Any,
    items: Iterable[tuple[str, list[str], dict[str, Any]]],
) -> None:
    """One ``action`` event per (label, entry ids, payload) item of one revision, in one insert
    (a batch add records an ``entry.added`` per entry, as single adds do)."""
    if action not in ACTIONS:
        raise UnknownAuditAction(action)
    columns = actor.columns()
    correlation = current_correlation_id()
    with _atomic():  # the events and their seals (memory.audit_chain), together or neither
        events = AuditEvent.objects.bulk_create(
            [
                AuditEvent(
                    action=action,
                    **columns,
                    correlation_id=correlation,
                    memory_id=memory.pk,
                    memory_label=memory.slug,
                    label=label[:300],
                    revision_number=revision.number,
                    entry_ids=entry_ids,
                    payload=payload,
                )
                for label, entry_ids, payload in items
            ]
        )
        seal_new_events([event.pk for event in events])
