"""Actions of proposals: the only code that writes proposals (DESIGN.md §9).

- ``intake``: :func:`submit_proposal` (and :func:`submit_in_transaction` for callers inside a
  memory write), :func:`purge_idempotency_keys`;
- ``discussion``: :func:`add_comment`, :func:`resolve_comment`, :func:`amend_proposal`,
  :func:`assign_proposal`;
- ``rebase``: :func:`rebase_proposal` (a stale proposal pointed at the current heads);
- ``status``: :func:`withdraw_proposal`, :func:`mark_stale` and the staleness hook
  :func:`mark_stale_for_heads`;
- ``system``: :func:`file_duplicate_consolidation` (the near-duplicate check's proposal),
  :func:`file_admission` (a candidate's admission proposal) and
  :func:`file_injection_quarantine` (the injection scan's quarantine proposal at write time).
"""

from .discussion import add_comment, amend_proposal, assign_proposal, resolve_comment
from .intake import SubmitResult, purge_idempotency_keys, submit_in_transaction, submit_proposal
from .rebase import rebase_proposal
from .status import mark_stale, mark_stale_for_heads, withdraw_proposal
from .system import (
    file_admission,
    file_duplicate_consolidation,
    file_injection_quarantine,
    quarantine_request,
)

__all__ = [
    "SubmitResult",
    "add_comment",
    "amend_proposal",
    "assign_proposal",
    "file_admission",
    "file_duplicate_consolidation",
    "file_injection_quarantine",
    "mark_stale",
    "mark_stale_for_heads",
    "purge_idempotency_keys",
    "quarantine_request",
    "rebase_proposal",
    "resolve_comment",
    "submit_in_transaction",
    "submit_proposal",
    "withdraw_proposal",
]
