"""Approve and reject: the only path from a proposal to a Revision.

Every decision re-checks the proposal's recorded pre-state after taking the locks; a mismatch
turns the proposal ``stale`` — committed — and the caller gets 409 ``stale_proposal``. An
approval that completes the required number of approvals writes exactly ONE revision (linked to
the proposal and to a new operation record), the decision, the operation and the proposal's new
status, all in one transaction. What the revision contains is the kind's plan
(``proposals.kinds``), applied by ``memory.actions.plans.apply_plan``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.actions.plans import apply_plan
from memory.actors import Actor
from memory.admission import check_under_policy, clean_text
from memory.models import Memory, Revision
from proposals.events import record_proposal_event
from proposals.kinds import ApprovalPlan, kind_of
from proposals.models import (
    OPEN_STATUSES,
    Proposal,
    ProposalStatus,
    ProposalTarget,
    target_map,
)

from .. import claims, exposed, notifications
from ..exceptions import (
    AlreadyDecided,
    DetailsNotAcknowledged,
    ProposalAmended,
    SelfApproval,
    StaleProposal,
    ValidationFailed,
)
from ..models import Decision, MaintenanceOperation, Verdict
from ..permissions import has_approved, require_reviewer
from .common import (
    DecisionResult,
    StaleOutcome,
    approvals_required,
    check_pre_state,
    locked_proposal,
    locked_targets,
    lost_detail_names,
    refuse_if_not_pending,
    stale_by_approval,
)


def _operation_record(
    memory: Memory,
    proposal: Proposal,
    targets: Sequence[ProposalTarget],
    approval: ApprovalPlan,
    impact: dict[str, list[str]],
    *,
    actor: Actor,
) -> MaintenanceOperation:
    number = memory.head + 1
    affected = {t.entry.uid for t in targets}
    return MaintenanceOperation.objects.create(
        proposal=proposal,
        memory=memory,
        kind=proposal.kind,
        revision_number=number,
        pre_state=[
            {
                "entry_id": t.entry.uid,
                "role": t.role,
                "version": t.version_number,
                "state": t.state,
                "content_hash": t.content_hash,
            }
            for t in targets
        ],
        produced={
            "revision": number,
            "heads": approval.heads_after,
            "relations": [
                {"kind": r.kind, "from_entry": r.from_entry.uid, "to_entry": r.to_entry.uid}
                for r in approval.plan.relations
            ],
            "created_entries": [
                c.entry.uid
                for c in approval.plan.changes
                if c.new_body is not None and c.entry.uid not in affected
            ],
        },
        derived_view_impact={**impact, "projection_rows": sorted(approval.heads_after)},
        compensation_plan={"heads": approval.restore, "retire_relations_of_revision": number},
        irreversible_effects=kind_of(proposal.kind).irreversible(
            proposal, target_map(targets), approval, number
        ),
        actor_id=actor.id,
        actor_label=actor.label,
    )


def _apply(
    memory: Memory,
    proposal: Proposal,
    targets: list[ProposalTarget],
    heads: dict,
    *,
    actor: Actor,
) -> tuple[MaintenanceOperation, Revision]:
    """Plan the kind's effect, record the operation, then have memory apply the plan."""
    spec = kind_of(proposal.kind)
    by_role = target_map(targets)
    approval = spec.plan(memory, proposal, by_role, heads)
    effect = spec.recall_effect(proposal, by_role)
    rewritten = {c.entry.uid for c in approval.plan.changes if c.new_body is not None}
    impact = {
        "leaves_current_recall": [t.entry.uid for t in effect.leaves],
        "new_version_in_recall": [
            t.entry.uid for t, _ in effect.rewrites if t.entry.uid in rewritten
        ],
        "joins_current_recall": [e.uid for e in approval.plan.new_entries],
    }
    operation = _operation_record(memory, proposal, targets, approval, impact, actor=actor)
    revision = apply_plan(
        memory,
        approval.plan,
        actor=actor,
        kind=spec.revision_kind,
        reason=f"proposal #{proposal.pk}: {proposal.rationale[:300]}",
        proposal_id=proposal.pk,
        operation_id=operation.pk,
    )
    if revision.number != operation.revision_number:  # pragma: no cover - guarded by the lock
        raise RuntimeError("revision number drifted under the Memory lock")
    return operation, revision


def approve_proposal(
    proposal_pk: int,
    *,
    actor: Actor,
    comment: str = "",
    acknowledge_lost_details: Sequence[str] | None = None,
    revision: int | None = None,
) -> DecisionResult:
    """Approve a pending proposal.

    Preconditions: the actor is a reviewer (403 ``forbidden``) and not the submitter (403
    ``self_approval``); the proposal is pending (409 ``already_decided`` / ``stale_proposal``);
    when ``revision`` is given (the proposal revision the reviewer read), it is still the
    proposal's (409 ``proposal_amended``);
    every lost detail is acknowledged (422 ``details_not_acknowledged``); the recorded
    pre-state still holds (else the proposal becomes stale, committed, and 409).
    Effects: a Decision; when the policy's approvals are reached, one revision + one operation
    and the proposal ``approved``; notifications after commit.
    Locks: Memory row, then the proposal row.
    """
    outcome = _approve(
        proposal_pk,
        actor=actor,
        comment=comment,
        acknowledge=list(acknowledge_lost_details or []),
        read=revision,
    )
    if isinstance(outcome, StaleOutcome):
        raise StaleProposal(
            "An affected entry changed since the proposal was made; it is now stale.",
            details=outcome.details,
        )
    return outcome


@transaction.atomic(durable=True)
def _approve(
    proposal_pk: int, *, actor: Actor, comment: str, acknowledge: list[str], read: int | None
) -> DecisionResult | StaleOutcome:
    require_reviewer(actor)
    note = clean_text(comment, field="comment")
    memory, proposal = locked_proposal(proposal_pk, actor)
    check_under_policy(memory, "comment", note)
    refuse_if_not_pending(proposal)
    _refuse_unapprovable(proposal, actor=actor, acknowledge=acknowledge, read=read)
    targets = locked_targets(proposal)
    heads, moved = check_pre_state(targets)
    if moved:
        return stale_by_approval(memory, proposal, moved, actor=actor)

    previous = _previous_approvals(proposal, actor=actor)
    now = timezone.now()
    decision = _decision(
        proposal, actor, Verdict.APPROVE, now, comment=note, acknowledged_lost_details=acknowledge
    )
    required = approvals_required(memory, proposal.kind)
    approvals = len(previous) + 1
    claims.end_claim_with_decision(actor=actor, proposal_id=proposal.pk)
    if approvals < required:
        record_proposal_event(
            "proposal.approval_recorded",
            proposal,
            actor=actor,
            payload={"approvals": approvals, "required": required},
        )
        return DecisionResult(proposal, decision, approvals=approvals, required=required)

    spec = kind_of(proposal.kind)
    operation: MaintenanceOperation | None = None
    revision: Revision | None = None
    if spec.changes_policy:
        spec.apply_policy(memory, proposal, actor=actor)  # 409 policy_changed: nothing written
    else:
        operation, revision = _apply(memory, proposal, targets, heads, actor=actor)
    fields = proposal.transition_to(ProposalStatus.APPROVED, at=now)
    _record_decider(proposal, actor, now, note)
    proposal.save(update_fields=[*fields, *DECIDER_FIELDS])
    record_proposal_event(
        "proposal.approved",
        proposal,
        actor=actor,
        revision=revision,
        operation_id=operation.pk if operation is not None else None,
        entry_ids=[t.entry.uid for t in targets],
        payload={"approvals": approvals, "required": required, "acknowledged": acknowledge},
    )
    notifications.decision_made(proposal, actor=actor)
    if operation is not None:  # a policy change retires no version
        exposed.notify_after_commit(operation, memory=memory)
    return DecisionResult(proposal, decision, operation, revision, approvals, required)


def _refuse_unapprovable(
    proposal: Proposal, *, actor: Actor, acknowledge: list[str], read: int | None
) -> None:
    """Refuse to approve a proposal amended since the reviewer read it (``read``), one the
    actor submitted or amended, or one whose lost details are not all acknowledged."""
    if read is not None and read > proposal.revision:
        raise ValidationFailed(
            details={
                "revision": [
                    f"Proposal #{proposal.pk} has no revision {read}; it is at revision "
                    f"{proposal.revision}."
                ]
            }
        )
    if read is not None and read != proposal.revision:
        raise ProposalAmended(
            f"Proposal #{proposal.pk} was amended since you read it: it is now at revision "
            f"{proposal.revision}, you read revision {read}. Read the new text first.",
            details={"proposal": proposal.pk, "revision": proposal.revision, "read": read},
        )
    if proposal.is_self(actor):
        raise SelfApproval(
            details={"proposal": proposal.pk, "submitted_by": proposal.submitted_by_label}
        )
    missing = [d for d in lost_detail_names(proposal) if d not in set(acknowledge)]
    if missing:
        raise DetailsNotAcknowledged(
            f"Acknowledge each lost detail to approve: {', '.join(missing)}.",
            details={"lost_details": missing},
        )


def _previous_approvals(proposal: Proposal, *, actor: Actor) -> list[Decision]:
    """The approvals of the proposal's current revision so far; refuses a second approval by
    the same person."""
    previous = list(
        Decision.objects.filter(
            proposal=proposal, verdict=Verdict.APPROVE, proposal_revision=proposal.revision
        ).only("verdict", "actor_id", "on_behalf_of", "proposal_revision")
    )
    if has_approved(actor, previous, revision=proposal.revision):
        raise AlreadyDecided(
            "You already approved this proposal; it is waiting for another reviewer.",
            details={"proposal": proposal.pk, "approvals": len(previous)},
        )
    return previous


DECIDER_FIELDS = ["decided_by", "decided_by_label", "decided_at", "decision_comment"]


def _decision(
    proposal: Proposal, actor: Actor, verdict: str, now: datetime, **fields: Any
) -> Decision:
    """One reviewer's verdict, with who gave it (append-only)."""
    return Decision.objects.create(
        proposal=proposal,
        memory_id=proposal.memory_id,
        proposal_revision=proposal.revision,
        verdict=verdict,
        **actor.columns(),
        decided_at=now,
        **fields,
    )


def _record_decider(proposal: Proposal, actor: Actor, now: datetime, note: str) -> None:
    proposal.decided_by = actor.id
    proposal.decided_by_label = actor.label
    proposal.decided_at = now
    proposal.decision_comment = note


@transaction.atomic(durable=True)
def reject_proposal(
    proposal_pk: int, *, actor: Actor, reason: str, comment: str, close_stale: bool = True
) -> DecisionResult:
    """Reject a pending (or changes-requested) proposal with a reason code and a comment (both
    required); the submitter reads both over the API. A stale one too ("Close as stale"): it
    then leaves every queue, and nothing is written but the decision (``close_stale=False``,
    a bulk decision on what the reviewer saw pending, refuses it with 409 ``stale_proposal``).
    Nothing about memory changes — except for a kind whose rejection writes
    (``rejection_plan``: an admission retires its candidate, one revision).
    Preconditions: ``reason`` is a ``RejectionReason`` (checked by the API and form).
    Locks: Memory row, then the proposal row."""
    require_reviewer(actor)
    note = clean_text(comment, field="comment", required=True)
    memory, proposal = locked_proposal(proposal_pk, actor)
    check_under_policy(memory, "comment", note)
    stale_ok = (ProposalStatus.STALE,) if close_stale else ()
    refuse_if_not_pending(proposal, allow=(*OPEN_STATUSES, *stale_ok))
    stale = proposal.status == ProposalStatus.STALE
    if proposal.is_self(actor):
        raise SelfApproval(
            "You cannot decide a proposal you submitted; withdraw it instead.",
            details={"proposal": proposal.pk},
        )
    now = timezone.now()
    decision = _decision(proposal, actor, Verdict.REJECT, now, reason=reason, comment=note)
    claims.end_claim_with_decision(actor=actor, proposal_id=proposal.pk)
    # A stale proposal's entries moved on: closing it writes nothing (an admission's candidate
    # is no longer the state it recorded).
    revision = None if stale else _apply_rejection(memory, proposal, reason, note, actor=actor)
    fields = proposal.transition_to(ProposalStatus.REJECTED, at=now)
    proposal.rejection_reason = reason
    _record_decider(proposal, actor, now, note)
    proposal.save(update_fields=[*fields, "rejection_reason", *DECIDER_FIELDS])
    record_proposal_event(
        "proposal.rejected",
        proposal,
        actor=actor,
        revision=revision,
        payload={"reason": reason, "comment": note},
    )
    notifications.decision_made(proposal, actor=actor)
    return DecisionResult(proposal, decision, revision=revision)


@transaction.atomic(durable=True)
def request_changes(proposal_pk: int, *, actor: Actor, comment: str) -> DecisionResult:
    """Ask the submitter to change a pending proposal (the comment says what): the proposal
    becomes ``changes_requested`` until it is amended (then pending again, as a new revision)
    or withdrawn. Nothing about memory changes. 403 for non-reviewers and for "self"; 409 when
    it is not pending. Locks: Memory row, then the proposal row."""
    require_reviewer(actor)
    note = clean_text(comment, field="comment", required=True)
    _memory, proposal = locked_proposal(proposal_pk, actor)
    check_under_policy(_memory, "comment", note)
    refuse_if_not_pending(proposal)
    if proposal.is_self(actor):
        raise SelfApproval(
            "You cannot review a proposal you submitted or amended.",
            details={"proposal": proposal.pk},
        )
    now = timezone.now()
    decision = _decision(proposal, actor, Verdict.REQUEST_CHANGES, now, comment=note)
    claims.end_claim_with_decision(actor=actor, proposal_id=proposal.pk)
    fields = proposal.transition_to(ProposalStatus.CHANGES_REQUESTED, reason=note, at=now)
    proposal.save(update_fields=fields)
    record_proposal_event(
        "proposal.changes_requested",
        proposal,
        actor=actor,
        payload={"comment": note, "revision": proposal.revision},
    )
    notifications.decision_made(proposal, actor=actor)
    return DecisionResult(proposal, decision)


def _apply_rejection(
    memory: Memory, proposal: Proposal, reason: str, note: str, *, actor: Actor
) -> Revision | None:
    """The kind's rejection plan, when it has one, as one revision (pre-state re-checked: a
    proposal whose entries moved was made stale by that move already)."""
    spec = kind_of(proposal.kind)
    targets = locked_targets(proposal)
    planned = spec.rejection_plan(memory, proposal, target_map(targets), reason)
    if planned is None:
        return None
    _, moved = check_pre_state(targets)
    if moved:  # pragma: no cover - a moved head makes the proposal stale in the same transaction
        raise StaleProposal(details={"moved": moved})
    revision_kind, plan = planned
    return apply_plan(
        memory,
        plan,
        actor=actor,
        kind=revision_kind,
        reason=f"proposal #{proposal.pk} rejected ({reason}): {note[:300]}",
        proposal_id=proposal.pk,
    )
