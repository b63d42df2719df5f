"""Reads for decisions and operations, starting from the actor (scope is never a template's job)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from .models import MaintenanceOperation


def visible_operations(actor: Any) -> QuerySet[MaintenanceOperation]:
    """Operations whose proposal the actor may see (Memory scope and the clearance of every
    affected entry; entries an approval creates never exceed their inputs' sensitivity)."""
    from proposals.models import Proposal

    return MaintenanceOperation.objects.select_related("memory", "proposal", "compensation").filter(
        proposal__in=Proposal.objects.visible_to(actor)
    )


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
