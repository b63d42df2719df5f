"""Who may see which operation, and its representation: the one rule for REST, the operation page
and compensation.

An operation is visible exactly when its proposal is (``proposals.selectors.visible_proposals``:
Memory scope and the clearance of every affected entry; entries an approval creates never exceed
their inputs' sensitivity). Its representation has ids of entries above the reader's clearance
redacted (``memory.visibility.scrub``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from memory.actors import Actor
from memory.visibility import scrub
from proposals.selectors import visible_proposals

from .exceptions import NotFound
from .models import MaintenanceOperation


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
    comp = getattr(op, "compensation", None)
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
        "irreversible_effects": op.irreversible_effects,
        "approved_by": op.actor_label,
        "created_at": op.created_at,
        "compensation": (
            {
                "revision": comp.revision_number,
                "comment": comp.comment,
                "by": comp.actor_label,
                "at": comp.created_at,
            }
            if comp
            else None
        ),
    }


def operation_json(actor: Actor, op: MaintenanceOperation) -> dict[str, Any]:
    """The representation for ``actor``, ids of entries above its clearance redacted."""
    return scrub(operation_out(op), memory_pk=op.memory_id, actor=actor)
