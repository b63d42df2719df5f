"""Status changes of a proposal outside review's decisions: the submitter withdraws it, or a
revision that moves an affected entry makes it stale.

:func:`mark_stale_for_heads` is registered on ``memory.hooks.on_heads_changed``: when a revision
changes an affected entry's head, every open proposal (pending or waiting for changes) touching
it becomes ``stale`` in the same transaction, naming that revision. :func:`mark_stale` is the
one way a proposal becomes stale (the hook and approval's own pre-state check both use it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from memory import audit
from memory.actions import lock_memory
from memory.actors import SYSTEM, Actor
from memory.admission import clean_text, memory_policy
from memory.models import Memory, Revision

from ..exceptions import Forbidden
from ..models import Proposal, ProposalStatus, ProposalTarget


@transaction.atomic(durable=True)
def withdraw_proposal(proposal: Proposal, *, actor: Actor, reason: str = "") -> Proposal:
    """The submitter (same key, its owner, or the same user) withdraws a pending proposal.

    403 ``forbidden`` for anyone else; 409 ``already_decided`` once it is not pending.
    Locks: the Memory row, then the proposal row.
    """
    with memory_policy(proposal.memory.policy):
        why = clean_text(reason, field="reason")
    lock_memory(proposal.memory_id)
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk)
    if not proposal.is_submitter(actor):
        raise Forbidden("Only the submitter may withdraw a proposal.")
    fields = proposal.transition_to(ProposalStatus.WITHDRAWN, reason=why)
    proposal.save(update_fields=fields)
    audit.record(
        "proposal.withdrawn",
        actor=actor,
        memory=proposal.memory,
        label=f"{proposal.kind} #{proposal.pk}",
        proposal_id=proposal.pk,
        entry_ids=list(proposal.targets.values_list("entry__uid", flat=True)),
        payload={"reason": why},
    )
    return proposal


def _revision_actor(revision: Revision) -> Actor:
    return Actor(
        type=revision.actor_type,
        id=revision.actor_id,
        label=revision.actor_label,
        role=SYSTEM,
        on_behalf_of=revision.on_behalf_of,
    )


def mark_stale_for_heads(memory: Memory, revision: Revision, entry_pks: list[int]) -> None:
    """Every open proposal touching ``entry_pks`` becomes ``stale`` with ``revision``.

    Called by the revision writer inside its transaction, under the Memory lock, after the heads
    changed. The proposal a revision applies (``revision.proposal_id``) is left to its approver.
    Locks: the proposal rows (after the Memory row).
    """
    if not entry_pks:
        return
    qs = Proposal.objects.open().filter(memory=memory).touching(entry_pks)
    if revision.proposal_id is not None:
        qs = qs.exclude(pk=revision.proposal_id)
    proposals = list(qs.select_for_update().order_by("pk"))
    if not proposals:
        return
    touched: dict[int, list[str]] = {}
    for pid, uid in (
        ProposalTarget.objects.filter(proposal__in=proposals, entry_id__in=entry_pks)
        .order_by("proposal_id", "position")
        .values_list("proposal_id", "entry__uid")
    ):
        touched.setdefault(pid, []).append(uid)
    actor = _revision_actor(revision)
    for proposal in proposals:
        uids = touched.get(proposal.pk, [])
        mark_stale(
            proposal,
            memory=memory,
            revision=revision,
            actor=actor,
            reason=f"revision {revision.number} ({revision.kind}) changed {', '.join(uids)}",
            at=revision.recorded_at,
            label=f"{proposal.kind} #{proposal.pk}",
            entry_ids=uids,
            payload={"revision": revision.number, "revision_kind": revision.kind},
        )


def mark_stale(
    proposal: Proposal,
    *,
    memory: Memory,
    revision: Revision,
    actor: Actor,
    reason: str,
    label: str,
    entry_ids: list[str],
    payload: dict[str, Any],
    at: datetime | None = None,
) -> None:
    """``proposal`` (locked, pending) becomes ``stale``, naming the ``revision`` that moved an
    affected entry, with a ``proposal.stale`` audit event. The caller holds the Memory and
    proposal locks; used by the staleness hook and by approval's own pre-state check."""
    fields = proposal.transition_to(ProposalStatus.STALE, reason=reason, at=at)
    proposal.stale_revision = revision
    proposal.save(update_fields=[*fields, "stale_revision"])
    audit.record(
        "proposal.stale",
        actor=actor,
        memory=memory,
        label=label,
        revision=revision,
        proposal_id=proposal.pk,
        entry_ids=entry_ids,
        payload=payload,
    )
