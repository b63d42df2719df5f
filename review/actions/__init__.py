"""Review actions: approve, reject and compensate — the only code that turns a proposal into a
revision, through the kind's plan applied by ``memory.actions.plans``.

- ``decide``: :func:`approve_proposal`, :func:`reject_proposal`, :func:`request_changes`;
- ``bulk``: :func:`bulk_decide` (many proposals, each in its own transaction);
- ``compensate``: :func:`compensate_operation`;
- ``common``: locks, the approval-time pre-state check, stale marking, policy numbers.
"""

from .bulk import BulkOutcome, bulk_decide
from .common import DecisionResult, approvals_required, lost_detail_names
from .compensate import CompensationResult, compensate_operation
from .decide import approve_proposal, reject_proposal, request_changes

__all__ = [
    "BulkOutcome",
    "CompensationResult",
    "DecisionResult",
    "approvals_required",
    "approve_proposal",
    "bulk_decide",
    "compensate_operation",
    "lost_detail_names",
    "reject_proposal",
    "request_changes",
]
