"""Proposal kinds: one module per kind, and the :data:`KINDS` registry everything loops over.

``proposals/kinds/<kind>.py`` answers "what does this kind do, how is it verified, previewed
and undone" in one place (see :class:`~proposals.kinds.base.ProposalKindSpec`). Intake
(``proposals.actions``), the submission schema (``proposals.serializers``), approval
(``review.actions``), the recall preview, the proposal page and the inbox find a kind here.
"""

from __future__ import annotations

from . import admission, cleanup, consolidation, policy, promotion, quarantine, supersession
from .base import (
    ApprovalPlan,
    ByRole,
    Draft,
    Heads,
    ProposalKindSpec,
    RecallEffect,
    Ref,
    Resolved,
    ResultPane,
    Submission,
    Wording,
    request_hash,
)

KINDS: dict[str, ProposalKindSpec] = {
    spec.name: spec
    for spec in (
        consolidation.KIND,
        supersession.KIND,
        promotion.KIND,
        cleanup.KIND,
        admission.KIND,
        quarantine.KIND,
        policy.KIND,
    )
}


def kind_of(name: str) -> ProposalKindSpec:
    """The spec of kind ``name`` (a stored proposal's kind is always registered)."""
    return KINDS[str(name)]


__all__ = [
    "KINDS",
    "ApprovalPlan",
    "ByRole",
    "Draft",
    "Heads",
    "ProposalKindSpec",
    "RecallEffect",
    "Ref",
    "Resolved",
    "ResultPane",
    "Submission",
    "Wording",
    "kind_of",
    "request_hash",
]
