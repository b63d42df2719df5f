"""Rebasing a stale proposal onto the current heads (API.md "Proposals": ``POST …/rebase``).

A proposal goes stale when a revision moves one of its entries (``status.mark_stale``). When
every input is still there to act on — each entry still in a state its role takes (an active
entry for most roles) and not superseded — :func:`rebase_proposal` points the proposal's
references at the entries' current versions: a new *base* of targets (the earlier ones stay on
record), the kind's verification run again on the current texts, the proposal pending again as
its next revision (approvals given on earlier revisions no longer count). When an input moved
on, 409 ``stale_proposal`` names it and nothing changes; close the proposal ("Close as stale")
or propose again.

Lock order, as everywhere: the Memory row, then the proposal row.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from memory.actions import lock_memory
from memory.actors import Actor
from memory.models import Head, HeadState, Validity

from .. import hooks
from ..events import record_proposal_event
from ..exceptions import DuplicateProposal, Forbidden, IllegalTransition, StaleProposal
from ..kinds import kind_of
from ..models import Proposal, ProposalAmendment, ProposalStatus, ProposalTarget
from ..serializers import parse_submission
from .discussion import AMENDED_FIELDS, _evidence_inputs, may_amend
from .intake import check_submission, recheck_heads_locked


def _repoint(value: Any, versions: dict[str, int]) -> Any:
    """``value`` (a kind's fields) with every ``{entry_id, version}`` reference naming an
    entry in ``versions`` set to that version."""
    if isinstance(value, dict):
        if set(value) == {"entry_id", "version"} and value["entry_id"] in versions:
            return {"entry_id": value["entry_id"], "version": versions[value["entry_id"]]}
        return {k: _repoint(v, versions) for k, v in value.items()}
    if isinstance(value, list):
        return [_repoint(v, versions) for v in value]
    return value


def _moved_on(proposal: Proposal, targets: list[ProposalTarget]) -> dict[str, Any]:
    """The inputs that cannot be rebased, by entry id: an entry no longer in a state its role
    takes (forgotten, quarantined…) or superseded by another."""
    spec = kind_of(proposal.kind)
    heads = {
        h.entry_id: h
        for h in Head.objects.filter(entry_id__in=[t.entry_id for t in targets]).select_related(
            "version", "entry__projection__successor_entry"
        )
    }
    out: dict[str, Any] = {}
    for t in targets:
        head = heads[t.entry_id]
        projection = getattr(head.entry, "projection", None)
        superseded = projection is not None and projection.validity == Validity.SUPERSEDED
        if spec.accepts(t.role, head.state) and not superseded:
            continue
        successor = projection.successor_entry if projection is not None else None
        out[t.entry.uid] = {
            "role": t.role,
            "state": head.state,
            "reason": head.state_reason or None,
            "superseded_by": successor.uid if superseded and successor is not None else None,
        }
    return out


def _describe(moved: dict[str, Any]) -> str:
    parts = []
    for uid, m in moved.items():
        if m["superseded_by"]:
            parts.append(f"{uid} is superseded by {m['superseded_by']}")
        elif m["state"] == HeadState.ACTIVE:
            parts.append(f"{uid} is no longer in a state its role takes")
        else:
            parts.append(f"{uid} is {m['state']}" + (f" ({m['reason']})" if m["reason"] else ""))
    return "; ".join(parts)


def rebase_proposal(proposal: Proposal, *, actor: Actor, comment: str = "") -> Proposal:
    """Point the stale ``proposal`` at its entries' current heads.

    Preconditions: the actor is the submitter or a reviewer (403 ``forbidden``); the proposal
    is stale (409 ``already_decided`` otherwise); every input is still active in its role and
    not superseded (409 ``stale_proposal`` naming the inputs that moved on); no other open
    proposal of its kind names the same entries (409 ``duplicate_proposal``); the kind's
    verification accepts the current texts (its refusals, e.g. 422 ``noop_rewrite``).
    Effects: a new base of targets at the current heads; payload and verification rerun;
    ``revision`` + 1 (earlier approvals void); status ``pending``; a
    :class:`ProposalAmendment` recording the change, a ``proposal.rebased`` audit event and
    the amendment notices to the other reviewers.
    Locks: the Memory row, then the proposal row.
    """
    if not may_amend(actor, proposal):
        raise Forbidden("Only the submitter or a reviewer may rebase a proposal.")
    proposal = Proposal.objects.select_related("memory").get(pk=proposal.pk)
    _refuse_unless_stale(proposal)
    # Read and verify before locking (no slow work under the lock), then re-check under it.
    targets = list(proposal.targets.select_related("entry").order_by("position"))
    moved = _moved_on(proposal, targets)
    if moved:
        raise StaleProposal(
            f"Proposal #{proposal.pk} cannot be rebased: {_describe(moved)}. Close it, or "
            "propose again.",
            details={"proposal": proposal.pk, "moved_on": moved},
        )
    versions = {
        h.entry.uid: h.version.number
        for h in Head.objects.filter(entry_id__in=[t.entry_id for t in targets]).select_related(
            "entry", "version"
        )
    }
    spec = kind_of(proposal.kind)
    fields = {
        "memory": proposal.memory.slug,
        "kind": proposal.kind,
        "rationale": proposal.rationale,
        "evidence": _evidence_inputs(proposal.evidence),
        **_repoint(spec.resubmission(proposal), versions),
    }
    submission = parse_submission(fields)
    checked = check_submission(actor, proposal.memory, proposal.kind, dict(submission.fields))
    with transaction.atomic(durable=True):
        memory = lock_memory(proposal.memory_id)
        locked = Proposal.objects.select_for_update().select_related("memory").get(pk=proposal.pk)
        locked.memory = memory
        _refuse_unless_stale(locked)
        if locked.target_base != proposal.target_base:  # rebased meanwhile, then went stale
            raise IllegalTransition(
                f"Proposal #{locked.pk} changed while it was being rebased; read it again.",
                details={"proposal": locked.pk, "status": locked.status},
            )
        recheck_heads_locked(locked.kind, checked.resolved)
        other = (
            Proposal.objects.open()
            .filter(memory=memory, kind=locked.kind, affected_key=locked.affected_key)
            .first()
        )
        if other is not None:
            raise DuplicateProposal(
                f"Proposal {other.pk} ({other.kind}) is open for these entries now; close this "
                "one instead.",
                details={"proposal": other.pk, "status": other.status},
            )
        return _write(locked, checked, targets, versions, actor=actor, note=comment)


def _refuse_unless_stale(proposal: Proposal) -> None:
    if proposal.status != ProposalStatus.STALE:
        raise IllegalTransition(
            f"Only a stale proposal is rebased; proposal #{proposal.pk} is "
            f"{proposal.status.replace('_', ' ')}.",
            details={"proposal": proposal.pk, "status": proposal.status},
        )


def _write(
    proposal: Proposal,
    checked: Any,
    targets: list[ProposalTarget],
    versions: dict[str, int],
    *,
    actor: Actor,
    note: str,
) -> Proposal:
    from ..evidence import evidence_json

    before = {name: getattr(proposal, name) for name in AMENDED_FIELDS}
    changed = {
        t.entry.uid: {"from": t.version_number, "to": versions[t.entry.uid]}
        for t in targets
        if t.version_number != versions[t.entry.uid]
    }
    stale_revision = proposal.stale_revision.number if proposal.stale_revision else None
    fields = proposal.transition_to(
        ProposalStatus.PENDING,
        reason=f"rebased onto revision {proposal.memory.head}",
    )
    proposal.payload = checked.payload
    proposal.verification = checked.verification
    proposal.evidence = evidence_json(checked.draft.evidence)
    proposal.revision += 1
    proposal.target_base += 1
    proposal.stale_revision = None
    if not proposal.is_submitter(actor):
        proposal.editors = sorted(set(proposal.editors or []) | actor.identities())
        fields.append("editors")
    proposal.save(
        update_fields=[
            *fields,
            *AMENDED_FIELDS,
            "revision",
            "target_base",
            "stale_revision",
        ]
    )
    heads = {r.entry.uid: r.head for r in checked.resolved}
    ProposalTarget.objects.bulk_create(
        [
            ProposalTarget(
                proposal=proposal,
                memory_id=proposal.memory_id,
                position=t.position,
                role=t.role,
                entry=t.entry,
                version=heads[t.entry.uid].version,
                version_number=heads[t.entry.uid].version.number,
                state=heads[t.entry.uid].state,
                content_hash=heads[t.entry.uid].version.content_hash,
                base=proposal.target_base,
            )
            for t in targets
        ]
    )
    moved_words = ", ".join(f"{uid} v{v['from']}→v{v['to']}" for uid, v in changed.items())
    ProposalAmendment.objects.create(
        proposal=proposal,
        memory_id=proposal.memory_id,
        number=proposal.revision,
        **actor.columns("author"),
        comment=note or f"Rebased onto the current heads: {moved_words or 'no version moved'}.",
        before=before,
        after={name: getattr(proposal, name) for name in AMENDED_FIELDS},
    )
    record_proposal_event(
        "proposal.rebased",
        proposal,
        actor=actor,
        entry_ids=[t.entry.uid for t in targets],
        payload={
            "revision": proposal.revision,
            "stale_revision": stale_revision,
            "memory_head": proposal.memory.head,
            "versions": changed,
        },
    )
    hooks.amended(proposal, actor=actor)  # the other reviewers are told it is pending again
    return proposal
