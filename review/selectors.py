"""Who may see which operation, and its representation: the one rule for REST, the operation page
and compensation.

An operation is visible exactly when its proposal is (``proposals.selectors.visible_proposals``:
Memory scope and the clearance of every affected entry; entries an approval creates never exceed
their inputs' sensitivity). Its representation has ids of entries above the reader's clearance
redacted (``memory.visibility.scrub``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import QuerySet

from memory import recall_events
from memory.actors import Actor
from memory.models import LifecycleProjection
from memory.visibility import scrub
from proposals.selectors import visible_proposals

from .exceptions import NotFound
from .exposed import operation_exposure
from .models import MaintenanceOperation, Notification


def visible_operations(actor: Actor) -> QuerySet[MaintenanceOperation]:
    """Operations whose proposal the actor may see, with memory, proposal and compensation."""
    return MaintenanceOperation.objects.select_related("memory", "proposal", "compensation").filter(
        proposal__in=visible_proposals(actor)
    )


def get_operation(actor: Actor, pk: int) -> MaintenanceOperation:
    """Operation ``pk`` if visible to ``actor``; 404 otherwise."""
    operation = visible_operations(actor).filter(pk=pk).first()
    if operation is None:
        raise NotFound(f"No operation {pk}.")
    return operation


def operation_out(op: MaintenanceOperation) -> dict[str, Any]:
    """The operation's JSON, with ``retired_versions`` and ``exposed_runs`` (the runs the
    exposure ledger says were served a version it retired or replaced; ``review.exposed``),
    and the same inside ``compensation`` once compensated."""
    comp = getattr(op, "compensation", None)
    exposure = operation_exposure(op)
    undone = exposure.get("compensation") or {}
    return {
        "id": op.pk,
        "memory": op.memory.slug,
        "proposal": op.proposal_id,
        "kind": op.kind,
        "revision": op.revision_number,
        "pre_state": op.pre_state,
        "produced": op.produced,
        "derived_view_impact": op.derived_view_impact,
        "compensation_plan": op.compensation_plan,
        "irreversible_effects": irreversible_effects(op),
        "approved_by": op.actor_label,
        "created_at": op.created_at,
        "retired_versions": exposure["retired_versions"],
        "exposed_runs": exposure["exposed_runs"],
        "exposed_runs_omitted": exposure["exposed_runs_omitted"],
        "compensation": (
            {
                "revision": comp.revision_number,
                "comment": comp.comment,
                "by": comp.actor_label,
                "at": comp.created_at,
                **undone,
            }
            if comp
            else None
        ),
    }


def irreversible_effects(op: MaintenanceOperation) -> list[str]:
    """What compensating ``op`` cannot take back: the kind's list recorded at approval, then
    what has happened since — the notifications about the approval that went out (or are
    still queued), and which affected entries recall served after it (from the recall-event
    counts when the Memory records them; otherwise that it is not recorded). Two queries."""
    out = list(op.irreversible_effects or [])
    out += _notifications_sent(op)
    out += _recall_served(op)
    return out


def _notifications_sent(op: MaintenanceOperation) -> list[str]:
    rows = Notification.objects.filter(
        proposal_id=op.proposal_id, event="proposal.approved"
    ).values_list("channel", "sent_at")
    sent = Counter(channel for channel, at in rows if at is not None)
    queued = sum(1 for _, at in rows if at is None)
    out = []
    if sent:
        n = sum(sent.values())
        channels = ", ".join(f"{c} ×{k}" for c, k in sorted(sent.items()))
        out.append(
            f"{n} notification{'s' if n != 1 else ''} about this approval went out "
            f"({channels}); they cannot be withdrawn."
        )
    if queued:
        out.append(
            f"{queued} notification{'s' if queued != 1 else ''} about this approval "
            f"{'are' if queued != 1 else 'is'} queued and will still be sent."
        )
    return out


def _affected_uids(op: MaintenanceOperation) -> list[str]:
    produced = (op.produced or {}).get("heads") or {}
    uids = {str(u) for u in produced} | {str(p.get("entry_id")) for p in op.pre_state or []}
    return sorted(uids)


def _recall_served(op: MaintenanceOperation) -> list[str]:
    if not recall_events.enabled(op.memory):
        return [
            "Which searches and Context Packs served these entries since the approval is not "
            "recorded (this Memory's policy.recall_events is off); any of them may have used "
            "the approved state."
        ]
    served = list(
        LifecycleProjection.objects.filter(
            entry__memory_id=op.memory_id,
            entry__uid__in=_affected_uids(op),
            last_recalled_at__gte=op.created_at,
        )
        .order_by("entry__uid")
        .values_list("entry__uid", "last_recalled_at")
    )
    if not served:
        return []
    listed = ", ".join(f"{uid} (last {at:%Y-%m-%d %H:%M} UTC)" for uid, at in served)
    return [f"Recall served {listed} after the approval; those reads are not repeated."]


def operation_json(actor: Actor, op: MaintenanceOperation) -> dict[str, Any]:
    """The representation for ``actor``, ids of entries above its clearance redacted."""
    return scrub(operation_out(op), memory_pk=op.memory_id, actor=actor)
