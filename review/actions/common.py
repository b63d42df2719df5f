"""What approval, rejection and compensation share: locks, the pre-state check, stale marking
and the policy's numbers.

Lock order (as everywhere): the Memory row, then the proposal row, then entry heads (read under
the Memory lock, which is what serializes head writers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.actions import lock_memory
from memory.actors import Actor
from memory.models import Head, Memory, Revision
from proposals.actions import mark_stale
from proposals.models import Proposal, ProposalStatus, ProposalTarget
from proposals.selectors import visible_proposals

from ..exceptions import AlreadyDecided, NotFound, StaleProposal
from ..models import Decision, MaintenanceOperation


@dataclass
class DecisionResult:
    proposal: Proposal
    decision: Decision
    operation: MaintenanceOperation | None = None
    revision: Revision | None = None
    approvals: int = 0
    required: int = 1


@dataclass
class StaleOutcome:
    """Approval found the pre-state moved: the proposal is stale (committed), the caller 409s."""

    proposal_pk: int
    details: dict[str, Any]


def lost_detail_names(proposal: Proposal) -> list[str]:
    """The lost details a reviewer must acknowledge, as plain strings."""
    out: list[str] = []
    for item in proposal.verification.get("lost_details", []) or []:
        name = (item.get("text") or item.get("detail")) if isinstance(item, dict) else item
        if isinstance(name, str) and name not in out:
            out.append(name)
    return out


def approvals_required(memory: Memory, kind: str) -> int:
    raw = (memory.policy or {}).get("approvals_required") or {}
    value = raw.get(kind, 1) if isinstance(raw, dict) else 1
    return max(1, int(value)) if isinstance(value, int) else 1


def locked_proposal(proposal_pk: int, actor: Actor) -> tuple[Memory, Proposal]:
    """Take the Memory lock, then the proposal lock; 404 when invisible to the actor."""
    memory_pk = (
        visible_proposals(actor).filter(pk=proposal_pk).values_list("memory_id", flat=True).first()
    )
    if memory_pk is None:
        raise NotFound(f"No proposal {proposal_pk}.")
    memory = lock_memory(memory_pk)
    proposal = Proposal.objects.select_for_update().get(pk=proposal_pk)
    proposal.memory = memory  # the locked row, fresh
    return memory, proposal


def refuse_if_not_pending(
    proposal: Proposal, *, allow: Sequence[str] = (ProposalStatus.PENDING,)
) -> None:
    """409 unless the proposal's status is in ``allow``: ``stale_proposal`` for a stale one,
    ``already_decided`` (saying by whom and when) otherwise."""
    if proposal.status in allow:
        return
    details = {
        "proposal": proposal.pk,
        "status": proposal.status,
        "decided_by": proposal.decided_by_label or None,
        "decided_at": proposal.decided_at.isoformat() if proposal.decided_at else None,
        "reason": proposal.status_reason or None,
    }
    if proposal.status == ProposalStatus.STALE:
        raise StaleProposal("The proposal is stale: an affected entry changed.", details=details)
    if proposal.status == ProposalStatus.CHANGES_REQUESTED:
        raise AlreadyDecided(
            "Changes were requested on this proposal; it waits for an amendment.",
            details=details,
        )
    who = f" by {proposal.decided_by_label}" if proposal.decided_by_label else ""
    when = f" at {proposal.decided_at:%Y-%m-%d %H:%M} UTC" if proposal.decided_at else ""
    raise AlreadyDecided(f"The proposal was already {proposal.status}{who}{when}.", details=details)


def locked_targets(proposal: Proposal) -> list[ProposalTarget]:
    return list(proposal.targets.select_related("entry", "version").order_by("position"))


def check_pre_state(
    targets: Sequence[ProposalTarget],
) -> tuple[dict[int, Head], list[dict[str, Any]]]:
    """The heads of the targets now, and every target whose head (version or state) is no longer
    the recorded pre-state. Read under the Memory lock."""
    heads = {
        h.entry_id: h
        for h in Head.objects.filter(entry_id__in=[t.entry_id for t in targets]).select_related(
            "version", "revision"
        )
    }
    moved = []
    for t in targets:
        head = heads[t.entry_id]
        if head.version_id != t.version_id or head.state != t.state:
            moved.append(
                {
                    "entry_id": t.entry.uid,
                    "expected": {"version": t.version_number, "state": t.state},
                    "actual": {"version": head.version.number, "state": head.state},
                    "revision": head.revision.number,
                }
            )
    return heads, moved


def stale_by_approval(
    memory: Memory, proposal: Proposal, moved: list[dict[str, Any]], *, actor: Actor
) -> StaleOutcome:
    """The pre-state moved without the staleness hook marking the proposal: mark it now, naming
    the latest revision that moved an affected entry."""
    latest = max(moved, key=lambda m: m["revision"])
    revision = Revision.objects.get(memory=memory, number=latest["revision"])
    mark_stale(
        proposal,
        memory=memory,
        revision=revision,
        actor=actor,
        reason=f"stale: revision {revision.number} changed {latest['entry_id']}",
        label=f"#{proposal.pk} {proposal.kind}",
        entry_ids=[m["entry_id"] for m in moved],
        payload={"moved": moved, "detected_by": "approval"},
    )
    return StaleOutcome(proposal.pk, {"proposal": proposal.pk, "moved": moved})
