"""Bulk decisions: approve or reject many proposals at once, each in its own transaction.

One proposal's refusal (stale, already decided, self, lost details to acknowledge) never
stops or undoes the others: every id gets its own outcome, in the order given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lib.errors import DomainError
from memory.actors import Actor
from proposals.selectors import visible_proposals

from ..permissions import require_reviewer
from .decide import approve_proposal, reject_proposal

#: Most proposals one bulk request decides.
MAX_BULK = 100
ACTIONS = ("approve", "reject")


@dataclass
class BulkOutcome:
    """What happened to one proposal of a bulk decision."""

    id: int
    status: str
    error: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.error is not None:
            out["error"] = self.error
        return out


def bulk_decide(
    *, actor: Actor, action: str, ids: Sequence[int], comment: str = "", reason: str = ""
) -> list[BulkOutcome]:
    """Decide each of ``ids`` with ``action`` (``approve`` | ``reject``; a rejection needs
    ``reason`` and ``comment``, checked by the caller's schema). Each proposal is decided by the
    same action as a single decision, in its own transaction; a refusal becomes that id's
    ``error`` (its stable code, message and details) and ``status`` the proposal's status
    after the refusal (``stale``, ``approved``…, or ``not_found``)."""
    require_reviewer(actor)
    out: list[BulkOutcome] = []
    for pid in dict.fromkeys(ids):  # each id once, in the order given
        try:
            if action == "approve":
                result = approve_proposal(pid, actor=actor, comment=comment)
            else:
                result = reject_proposal(
                    pid, actor=actor, reason=reason, comment=comment, close_stale=False
                )
        except DomainError as exc:
            error = {"code": exc.code, "message": exc.message, "details": exc.details}
            out.append(BulkOutcome(pid, "", error))
            continue
        out.append(BulkOutcome(pid, result.proposal.status))
    refused = [o for o in out if o.error is not None]
    if refused:  # each refused proposal's status as it is now (one query)
        now = dict(
            visible_proposals(actor)
            .filter(pk__in=[o.id for o in refused])
            .values_list("pk", "status")
        )
        for o in refused:
            o.status = now.get(o.id, "not_found")
    return out
