"""Review actions: approve, reject and compensate — the only code that turns a proposal into a
revision, through the kind's plan applied by ``memory.plans``.

- ``decide``: :func:`approve_proposal`, :func:`reject_proposal`;
- ``compensate``: :func:`compensate_operation`;
- ``common``: locks, the approval-time pre-state check, stale marking, policy numbers.
"""

from .common import DecisionResult, approvals_required, lost_detail_names
from .compensate import CompensationResult, compensate_operation
from .decide import approve_proposal, reject_proposal

__all__ = [
    "CompensationResult",
    "DecisionResult",
    "approvals_required",
    "approve_proposal",
    "compensate_operation",
    "lost_detail_names",
    "reject_proposal",
]
