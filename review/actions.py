"""The approval engine: the only path from a proposal to a Revision.

Lock order (as everywhere): the Memory row, then the proposal row, then entry heads (read under
the Memory lock, which is what serializes head writers). Every decision re-checks the proposal's
recorded pre-state after taking the locks; a mismatch turns the proposal ``stale`` — committed —
and the caller gets 409 ``stale_proposal``. An approval that completes the required number of
approvals writes exactly ONE revision (linked to the proposal and to a new operation record),
the decision, the operation and the proposal's new status, all in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory import audit
from memory.actions import (
    Change,
    EvidenceInput,
    NewBody,
    NewRelation,
    evidence_inputs_of,
    lock_memory,
    resolve_evidence,
    write_revision,
)
from memory.actors import Actor
from memory.admission import clean_text
from memory.models import (
    Entry,
    EntryVersion,
    Head,
    HeadState,
    Memory,
    Relation,
    RelationKind,
    Revision,
    RevisionKind,
    Tier,
    new_entry_id,
    sensitivities_up_to,
)
from memory.text import content_hash
from proposals.models import (
    Proposal,
    ProposalKind,
    ProposalStatus,
    ProposalTarget,
    RejectionReason,
    TargetRole,
    target_map,
)

from . import notifications
from .exceptions import (
    AlreadyCompensated,
    AlreadyDecided,
    CompensationConflict,
    DetailsNotAcknowledged,
    Forbidden,
    NotFound,
    SelfApproval,
    StaleProposal,
    ValidationFailed,
)
from .models import Compensation, Decision, MaintenanceOperation, Verdict

REVISION_KIND = {
    ProposalKind.CONSOLIDATION: RevisionKind.CONSOLIDATE,
    ProposalKind.SUPERSESSION: RevisionKind.SUPERSEDE,
    ProposalKind.PROMOTION: RevisionKind.PROMOTE,
    ProposalKind.CLEANUP: RevisionKind.CLEANUP,
}
CLEANUP_REASON = "cleanup:v1"
IRREVERSIBLE = [
    "Search results and context packs already served to agents may contain the pre-approval state.",
    "Notifications already sent about this decision.",
]


@dataclass
class DecisionResult:
    proposal: Proposal
    decision: Decision
    operation: MaintenanceOperation | None = None
    revision: Revision | None = None
    approvals: int = 0
    required: int = 1


@dataclass
class _StaleOutcome:
    proposal_pk: int
    details: dict[str, Any]


# --- helpers --------------------------------------------------------------------------------


def _require_reviewer(actor: Actor) -> None:
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may decide proposals or compensate operations.")


def _identities(actor: Actor) -> set[str]:
    """Everything that names the person behind ``actor``: a key and its owner are one person,
    so a reviewer's key and browser session never count as two approvals."""
    ids = {actor.id}
    if actor.on_behalf_of:
        ids.add(actor.on_behalf_of)
    if actor.user_pk is not None:
        ids.add(f"user:{actor.user_pk}")
    return ids


def lost_detail_names(proposal: Proposal) -> list[str]:
    """The lost details a reviewer must acknowledge, as plain strings."""
    out: list[str] = []
    for item in proposal.verification.get("lost_details", []) or []:
        name = item.get("detail") if isinstance(item, dict) else item
        if isinstance(name, str) and name not in out:
            out.append(name)
    return out


def approvals_required(memory: Memory, kind: str) -> int:
    raw = (memory.policy or {}).get("approvals_required") or {}
    value = raw.get(kind, 1) if isinstance(raw, dict) else 1
    return max(1, int(value)) if isinstance(value, int) else 1


def _locked_proposal(proposal_pk: int, actor: Actor) -> tuple[Memory, Proposal]:
    """Take the Memory lock, then the proposal lock; 404 when invisible to the actor."""
    memory_pk = (
        Proposal.objects.visible_to(actor)
        .filter(pk=proposal_pk)
        .values_list("memory_id", flat=True)
        .first()
    )
    if memory_pk is None:
        raise NotFound(f"No proposal {proposal_pk}.")
    memory = lock_memory(memory_pk)
    proposal = Proposal.objects.select_for_update().get(pk=proposal_pk)
    return memory, proposal


def _refuse_if_not_pending(proposal: Proposal) -> None:
    if proposal.status == ProposalStatus.PENDING:
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
    who = f" by {proposal.decided_by_label}" if proposal.decided_by_label else ""
    when = f" at {proposal.decided_at:%Y-%m-%d %H:%M} UTC" if proposal.decided_at else ""
    raise AlreadyDecided(f"The proposal was already {proposal.status}{who}{when}.", details=details)


def _targets(proposal: Proposal) -> list[ProposalTarget]:
    return list(proposal.targets.select_related("entry", "version").order_by("position"))


def _check_pre_state(
    proposal: Proposal, targets: Sequence[ProposalTarget]
) -> tuple[dict[int, Head], list[dict[str, Any]]]:
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


def _mark_stale(
    memory: Memory,
    proposal: Proposal,
    heads: dict[int, Head],
    moved: list[dict[str, Any]],
    *,
    actor: Actor,
) -> _StaleOutcome:
    latest = max(moved, key=lambda m: m["revision"])
    revision = Revision.objects.get(memory=memory, number=latest["revision"])
    fields = proposal.transition_to(
        ProposalStatus.STALE,
        reason=f"stale: revision {revision.number} changed {latest['entry_id']}",
    )
    proposal.stale_revision = revision
    proposal.save(update_fields=[*fields, "stale_revision"])
    audit.record(
        "proposal.stale",
        actor=actor,
        memory=memory,
        label=f"#{proposal.pk} {proposal.kind}",
        revision=revision,
        proposal_id=proposal.pk,
        entry_ids=[m["entry_id"] for m in moved],
        payload={"moved": moved, "detected_by": "approval"},
    )
    return _StaleOutcome(proposal.pk, {"proposal": proposal.pk, "moved": moved})


def _evidence_from_json(items: Iterable[dict[str, Any]]) -> list[EvidenceInput]:
    out = []
    for item in items or []:
        observed = item.get("observed_at")
        out.append(
            EvidenceInput(
                source=item["source"],
                ref=item["ref"],
                observed_at=_parse_time(observed),
                quote=item.get("quote") or "",
            )
        )
    return out


def _union(*groups: Iterable[EvidenceInput]) -> list[EvidenceInput]:
    seen: dict[str, EvidenceInput] = {}
    for group in groups:
        for item in group:
            seen.setdefault(item.identity, item)
    return list(seen.values())


def _strictest(entries: Iterable[Entry]) -> str:
    order = sensitivities_up_to("restricted")
    return max((e.sensitivity for e in entries), key=order.index)


# --- the effect of each kind ----------------------------------------------------------------


@dataclass
class _Plan:
    changes: list[Change]
    relations: list[NewRelation] = field(default_factory=list)
    heads_after: dict[str, dict[str, Any]] = field(default_factory=dict)
    restore: list[dict[str, Any]] = field(default_factory=list)
    impact: dict[str, list[str]] = field(default_factory=dict)


def _after(plan: _Plan, entry: Entry, version: int, state: str) -> None:
    plan.heads_after[entry.uid] = {"version": version, "state": state}


def _restore(plan: _Plan, t: ProposalTarget, head: Head) -> None:
    """Plan to put ``t``'s head back exactly as it is now: version, state, reason and the start
    of its lifecycle interval (undoing an operation never resets a retention clock)."""
    plan.restore.append(
        {
            "entry_id": t.entry.uid,
            "version": t.version_number,
            "state": head.state,
            "reason": head.state_reason,
            "interval_started_at": head.interval_started_at.isoformat(),
        }
    )


def _retire_created(plan: _Plan, entry: Entry, why: str) -> None:
    """Plan to retire an entry the operation created (undo = it stops being current)."""
    plan.restore.append(
        {"entry_id": entry.uid, "version": 1, "state": HeadState.INACTIVE, "reason": why}
    )


Heads = dict[int, Head]
ByRole = dict[str, list[ProposalTarget]]


def _plan_consolidation(memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads) -> _Plan:
    target = by_role[TargetRole.TARGET][0]
    redundant = by_role.get(TargetRole.REDUNDANT, [])
    body = proposal.payload["body"]
    evidence = _union(
        evidence_inputs_of(target.version),
        *(evidence_inputs_of(r.version) for r in redundant),
        _evidence_from_json(proposal.evidence),
    )
    digest = content_hash(target.entry.kind, body, [e.identity for e in evidence])
    change = Change(entry=target.entry)
    new_number = target.version_number
    if digest != target.content_hash:
        change.new_body = NewBody(
            body, digest, resolve_evidence(evidence), target.version.effective_at
        )
        change.restart_interval = True
        new_number += 1
    plan = _Plan(changes=[change])
    _after(plan, target.entry, new_number, HeadState.ACTIVE)
    _restore(plan, target, heads[target.entry_id])
    reason = f"consolidated_into:{target.entry.uid}"
    for r in redundant:
        plan.changes.append(Change(entry=r.entry, to_state=HeadState.INACTIVE, state_reason=reason))
        plan.relations.append(NewRelation(RelationKind.CONSOLIDATED_INTO, r.entry, target.entry))
        _after(plan, r.entry, r.version_number, HeadState.INACTIVE)
        _restore(plan, r, heads[r.entry_id])
    plan.impact = {
        "leaves_current_recall": [r.entry.uid for r in redundant],
        "new_version_in_recall": [target.entry.uid] if change.new_body else [],
        "joins_current_recall": [],
    }
    return plan


def _plan_supersession(memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads) -> _Plan:
    old = by_role[TargetRole.OLD][0]
    old_head = heads[old.entry_id]
    # The old entry's head does not change (its validity does, through the edge); it is listed
    # so the revision records what it touched.
    plan = _Plan(
        changes=[Change(entry=old.entry, to_state=old.state, state_reason=old_head.state_reason)]
    )
    _after(plan, old.entry, old.version_number, old.state)
    _restore(plan, old, old_head)
    existing = by_role.get(TargetRole.SUCCESSOR)
    joins: list[str] = []
    if existing:
        successor = existing[0].entry
    else:
        spec = proposal.payload["successor"]
        evidence = _union(
            _evidence_from_json(spec.get("evidence") or []),
            _evidence_from_json(proposal.evidence),
        )
        kind = spec.get("kind") or old.entry.kind
        successor = Entry.objects.create(
            memory=memory,
            uid=new_entry_id(),
            kind=kind,
            tier=old.entry.tier if old.entry.tier != Tier.SESSION else Tier.LONG,
            sensitivity=old.entry.sensitivity,
            current_state=old.entry.current_state,
        )
        digest = content_hash(kind, spec["body"], [e.identity for e in evidence])
        plan.changes.append(
            Change(
                entry=successor,
                new_body=NewBody(spec["body"], digest, resolve_evidence(evidence)),
                restart_interval=True,
            )
        )
        _after(plan, successor, 1, HeadState.ACTIVE)
        _retire_created(plan, successor, f"compensated:supersession#{proposal.pk}")
        joins = [successor.uid]
    plan.relations.append(NewRelation(RelationKind.SUPERSEDES, successor, old.entry))
    plan.impact = {
        "leaves_current_recall": [old.entry.uid],
        "new_version_in_recall": [],
        "joins_current_recall": joins,
    }
    return plan


def _plan_promotion(memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads) -> _Plan:
    notes = by_role.get(TargetRole.NOTE, [])
    body = proposal.payload["body"]
    kind = proposal.payload["target_kind"]
    evidence = _union(
        *(evidence_inputs_of(n.version) for n in notes), _evidence_from_json(proposal.evidence)
    )
    promoted = Entry.objects.create(
        memory=memory,
        uid=new_entry_id(),
        kind=kind,
        tier=Tier.LONG,
        sensitivity=_strictest(n.entry for n in notes),
        current_state=False,
    )
    digest = content_hash(kind, body, [e.identity for e in evidence])
    plan = _Plan(
        changes=[
            Change(
                entry=promoted,
                new_body=NewBody(body, digest, resolve_evidence(evidence)),
                restart_interval=True,
            )
        ]
    )
    _after(plan, promoted, 1, HeadState.ACTIVE)
    _retire_created(plan, promoted, f"compensated:promotion#{proposal.pk}")
    reason = f"promoted:{promoted.uid}"
    for n in notes:
        # Notes may already be inactive (their session ended); undo restores them as they were.
        plan.changes.append(Change(entry=n.entry, to_state=HeadState.INACTIVE, state_reason=reason))
        plan.relations.append(NewRelation(RelationKind.PROMOTED_FROM, promoted, n.entry))
        _after(plan, n.entry, n.version_number, HeadState.INACTIVE)
        _restore(plan, n, heads[n.entry_id])
    plan.impact = {
        "leaves_current_recall": [n.entry.uid for n in notes if n.state == HeadState.ACTIVE],
        "new_version_in_recall": [],
        "joins_current_recall": [promoted.uid],
    }
    return plan


def _plan_cleanup(memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads) -> _Plan:
    plan = _Plan(changes=[])
    entries = by_role.get(TargetRole.ENTRY, [])
    for t in entries:
        plan.changes.append(
            Change(entry=t.entry, to_state=HeadState.INACTIVE, state_reason=CLEANUP_REASON)
        )
        _after(plan, t.entry, t.version_number, HeadState.INACTIVE)
        _restore(plan, t, heads[t.entry_id])
    plan.impact = {
        "leaves_current_recall": [t.entry.uid for t in entries],
        "new_version_in_recall": [],
        "joins_current_recall": [],
    }
    return plan


PLANNERS = {
    ProposalKind.CONSOLIDATION: _plan_consolidation,
    ProposalKind.SUPERSESSION: _plan_supersession,
    ProposalKind.PROMOTION: _plan_promotion,
    ProposalKind.CLEANUP: _plan_cleanup,
}


def _apply(
    memory: Memory,
    proposal: Proposal,
    targets: list[ProposalTarget],
    heads: Heads,
    *,
    actor: Actor,
) -> tuple[MaintenanceOperation, Revision]:
    by_role = target_map(targets)
    plan = PLANNERS[ProposalKind(proposal.kind)](memory, proposal, by_role, heads)
    number = memory.head + 1
    operation = MaintenanceOperation.objects.create(
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
            "heads": plan.heads_after,
            "relations": [
                {"kind": r.kind, "from_entry": r.from_entry.uid, "to_entry": r.to_entry.uid}
                for r in plan.relations
            ],
            "created_entries": [
                c.entry.uid
                for c in plan.changes
                if c.new_body is not None and c.entry.uid not in {t.entry.uid for t in targets}
            ],
        },
        derived_view_impact={
            **plan.impact,
            "projection_rows": sorted(plan.heads_after),
        },
        compensation_plan={"heads": plan.restore, "retire_relations_of_revision": number},
        irreversible_effects=IRREVERSIBLE,
        actor_id=actor.id,
        actor_label=actor.label,
    )
    revision = write_revision(
        memory,
        actor=actor,
        kind=REVISION_KIND[ProposalKind(proposal.kind)],
        reason=f"proposal #{proposal.pk}: {proposal.rationale[:300]}",
        changes=plan.changes,
        relations=plan.relations,
        proposal_id=proposal.pk,
        operation_id=operation.pk,
    )
    if revision.number != operation.revision_number:  # pragma: no cover - guarded by the lock
        raise RuntimeError("revision number drifted under the Memory lock")
    return operation, revision


# --- decisions ------------------------------------------------------------------------------


def approve_proposal(
    proposal_pk: int,
    *,
    actor: Actor,
    comment: Any = "",
    acknowledge_lost_details: Any = None,
) -> DecisionResult:
    """Approve a pending proposal.

    Preconditions: the actor is a reviewer (403 ``forbidden``) and not the submitter (403
    ``self_approval``); the proposal is pending (409 ``already_decided`` / ``stale_proposal``);
    every lost detail is acknowledged (422 ``details_not_acknowledged``); the recorded
    pre-state still holds (else the proposal becomes stale, committed, and 409).
    Effects: a Decision; when the policy's approvals are reached, one revision + one operation
    and the proposal ``approved``; notifications after commit.
    Locks: Memory row, then the proposal row.
    """
    outcome = _approve(
        proposal_pk, actor=actor, comment=comment, acknowledge=acknowledge_lost_details
    )
    if isinstance(outcome, _StaleOutcome):
        raise StaleProposal(
            "An affected entry changed since the proposal was made; it is now stale.",
            details=outcome.details,
        )
    return outcome


@transaction.atomic(durable=True)
def _approve(
    proposal_pk: int, *, actor: Actor, comment: Any, acknowledge: Any
) -> DecisionResult | _StaleOutcome:
    _require_reviewer(actor)
    note = clean_text(comment, field="comment")
    if acknowledge is not None and (
        not isinstance(acknowledge, list) or not all(isinstance(a, str) for a in acknowledge)
    ):
        raise ValidationFailed(details={"acknowledge_lost_details": ["A list of strings."]})
    memory, proposal = _locked_proposal(proposal_pk, actor)
    _refuse_if_not_pending(proposal)
    if proposal.is_self(actor):
        raise SelfApproval(
            details={"proposal": proposal.pk, "submitted_by": proposal.submitted_by_label}
        )
    missing = [d for d in lost_detail_names(proposal) if d not in set(acknowledge or [])]
    if missing:
        raise DetailsNotAcknowledged(
            f"Acknowledge each lost detail to approve: {', '.join(missing)}.",
            details={"lost_details": missing},
        )
    targets = _targets(proposal)
    heads, moved = _check_pre_state(proposal, targets)
    if moved:
        return _mark_stale(memory, proposal, heads, moved, actor=actor)

    previous = list(
        Decision.objects.filter(proposal=proposal, verdict=Verdict.APPROVE).values_list(
            "actor_id", "on_behalf_of"
        )
    )
    me = _identities(actor)
    if any(me & {actor_id, behalf} for actor_id, behalf in previous):
        raise AlreadyDecided(
            "You already approved this proposal; it is waiting for another reviewer.",
            details={"proposal": proposal.pk, "approvals": len(previous)},
        )
    now = timezone.now()
    decision = Decision.objects.create(
        proposal=proposal,
        memory=memory,
        verdict=Verdict.APPROVE,
        comment=note,
        acknowledged_lost_details=list(acknowledge or []),
        actor_type=actor.type,
        actor_id=actor.id,
        actor_label=actor.label,
        on_behalf_of=actor.on_behalf_of,
        decided_at=now,
    )
    required = approvals_required(memory, proposal.kind)
    approvals = len(previous) + 1
    if approvals < required:
        audit.record(
            "proposal.approval_recorded",
            actor=actor,
            memory=memory,
            label=f"#{proposal.pk} {proposal.kind}",
            proposal_id=proposal.pk,
            payload={"approvals": approvals, "required": required},
        )
        return DecisionResult(proposal, decision, approvals=approvals, required=required)

    operation, revision = _apply(memory, proposal, targets, heads, actor=actor)
    fields = proposal.transition_to(ProposalStatus.APPROVED, at=now)
    proposal.decided_by = actor.id
    proposal.decided_by_label = actor.label
    proposal.decided_at = now
    proposal.decision_comment = note
    proposal.save(
        update_fields=[*fields, "decided_by", "decided_by_label", "decided_at", "decision_comment"]
    )
    audit.record(
        "proposal.approved",
        actor=actor,
        memory=memory,
        label=f"#{proposal.pk} {proposal.kind}",
        revision=revision,
        proposal_id=proposal.pk,
        operation_id=operation.pk,
        entry_ids=[t.entry.uid for t in targets],
        payload={
            "approvals": approvals,
            "required": required,
            "acknowledged": list(acknowledge or []),
        },
    )
    notifications.decision_made(proposal, actor=actor)
    return DecisionResult(proposal, decision, operation, revision, approvals, required)


@transaction.atomic(durable=True)
def reject_proposal(proposal_pk: int, *, actor: Actor, reason: Any, comment: Any) -> DecisionResult:
    """Reject a pending proposal with a reason code and a comment (both required); the
    submitter reads both over the API. Nothing about memory changes.
    Locks: Memory row, then the proposal row."""
    _require_reviewer(actor)
    if reason not in RejectionReason.values:
        raise ValidationFailed(details={"reason": [f"One of {list(RejectionReason.values)}."]})
    note = clean_text(comment, field="comment", required=True)
    memory, proposal = _locked_proposal(proposal_pk, actor)
    _refuse_if_not_pending(proposal)
    if proposal.is_self(actor):
        raise SelfApproval(
            "You cannot decide a proposal you submitted; withdraw it instead.",
            details={"proposal": proposal.pk},
        )
    now = timezone.now()
    decision = Decision.objects.create(
        proposal=proposal,
        memory=memory,
        verdict=Verdict.REJECT,
        reason=reason,
        comment=note,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_label=actor.label,
        on_behalf_of=actor.on_behalf_of,
        decided_at=now,
    )
    fields = proposal.transition_to(ProposalStatus.REJECTED, at=now)
    proposal.rejection_reason = reason
    proposal.decision_comment = note
    proposal.decided_by = actor.id
    proposal.decided_by_label = actor.label
    proposal.decided_at = now
    proposal.save(
        update_fields=[
            *fields,
            "rejection_reason",
            "decision_comment",
            "decided_by",
            "decided_by_label",
            "decided_at",
        ]
    )
    audit.record(
        "proposal.rejected",
        actor=actor,
        memory=memory,
        label=f"#{proposal.pk} {proposal.kind}",
        proposal_id=proposal.pk,
        payload={"reason": reason, "comment": note},
    )
    notifications.decision_made(proposal, actor=actor)
    return DecisionResult(proposal, decision)


def _parse_time(value: Any) -> Any:
    return parse_datetime(value) if isinstance(value, str) else None


# --- compensation ---------------------------------------------------------------------------


@dataclass
class CompensationResult:
    operation: MaintenanceOperation
    compensation: Compensation
    revision: Revision


@transaction.atomic(durable=True)
def compensate_operation(
    operation_pk: int, *, actor: Actor, comment: Any = ""
) -> CompensationResult:
    """Undo an operation as one new ``compensate`` revision, if its entries have not moved on.

    Restores the exact pre-state heads (same versions; no version is created), retires the
    authoritative relations the operation created, records a Compensation and marks the
    proposal ``compensated``. 409 ``compensation_conflict`` lists what changed since.
    Locks: Memory row, then the proposal row."""
    _require_reviewer(actor)
    note = clean_text(comment, field="comment")
    op_row = (
        MaintenanceOperation.objects.filter(
            pk=operation_pk, proposal__in=Proposal.objects.visible_to(actor)
        )
        .values_list("memory_id", "proposal_id")
        .first()
    )
    if op_row is None:
        raise NotFound(f"No operation {operation_pk}.")
    memory = lock_memory(op_row[0])
    proposal = Proposal.objects.select_for_update().get(pk=op_row[1])
    operation = MaintenanceOperation.objects.get(pk=operation_pk)
    if Compensation.objects.filter(operation=operation).exists():
        raise AlreadyCompensated(details={"operation": operation.pk})
    expected: dict[str, dict[str, Any]] = operation.produced.get("heads", {})
    entries = {e.uid: e for e in Entry.objects.filter(memory=memory, uid__in=list(expected))}
    heads = {
        h.entry.uid: h
        for h in Head.objects.filter(entry__in=list(entries.values())).select_related(
            "entry", "version"
        )
    }
    moved = [
        {
            "entry_id": uid,
            "expected": want,
            "actual": {"version": heads[uid].version.number, "state": heads[uid].state},
        }
        for uid, want in expected.items()
        if heads[uid].version.number != want["version"] or heads[uid].state != want["state"]
    ]
    if moved:
        raise CompensationConflict(
            f"{len(moved)} affected entr{'y has' if len(moved) == 1 else 'ies have'} moved on "
            "since the operation; undo those changes first.",
            details={"moved": moved},
        )
    restore = operation.compensation_plan.get("heads", [])
    versions = {
        (v.entry.uid, v.number): v
        for v in EntryVersion.objects.filter(entry__in=list(entries.values())).select_related(
            "entry"
        )
    }
    changes = [
        Change(
            entry=entries[item["entry_id"]],
            version=versions[(item["entry_id"], item["version"])],
            to_state=item["state"],
            state_reason=item.get("reason", "") if item["state"] == HeadState.INACTIVE else "",
            interval_started_at=_parse_time(item.get("interval_started_at")),
            restart_interval=item["state"] == HeadState.ACTIVE,
        )
        for item in restore
    ]
    retire = list(
        Relation.objects.filter(
            memory=memory,
            revision__number=operation.compensation_plan.get("retire_relations_of_revision"),
            authoritative=True,
            retired_by__isnull=True,
        )
    )
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.COMPENSATE,
        reason=f"compensate operation #{operation.pk}" + (f": {note}" if note else ""),
        changes=changes,
        retire=retire,
        proposal_id=proposal.pk,
        operation_id=operation.pk,
    )
    compensation = Compensation.objects.create(
        operation=operation,
        memory=memory,
        revision_number=revision.number,
        comment=note,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_label=actor.label,
    )
    fields = proposal.transition_to(
        ProposalStatus.COMPENSATED, reason=f"compensated by revision {revision.number}"
    )
    proposal.save(update_fields=fields)
    audit.record(
        "operation.compensated",
        actor=actor,
        memory=memory,
        label=f"operation #{operation.pk} ({operation.kind})",
        revision=revision,
        proposal_id=proposal.pk,
        operation_id=operation.pk,
        entry_ids=list(expected),
        payload={"comment": note, "restored": restore},
    )
    return CompensationResult(operation, compensation, revision)
