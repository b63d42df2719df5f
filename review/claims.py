""" "Claim next": an expiring, advisory lease on the oldest pending proposal nobody else holds
and nobody else is assigned.

A claim only keeps two reviewers who work the queue from opening the same item. It guards
nothing — the approval engine's locks and its pre-state / status re-check are the real guard, so
a reviewer may still decide a proposal someone else has claimed (the page says who holds it).

Locks: the candidate proposal rows, ``select_for_update(skip_locked=True)`` on PostgreSQL, so
two reviewers pressing "Claim next" at the same moment get two different proposals instead of
waiting on each other. This is the only lock taken (never the Memory row), the transaction is a
few statements long, and it never waits: no deadlock with the approval engine's lock order
(Memory row → proposal row). SQLite has no row locks; its IMMEDIATE transactions serialize the
claimers instead, with the same outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory.actors import Actor
from proposals.models import Proposal, ProposalAmendment, ProposalStatus
from proposals.selectors import visible_proposals

from .exceptions import Forbidden
from .models import ReviewClaim

#: Attempts when two claimers race for the same row (only possible on PostgreSQL when a
#: competing claim commits between our read and our insert).
_ATTEMPTS = 3


def lease_seconds() -> int:
    """How long a claim lasts (``settings.STEWARD_CLAIM_LEASE_SECONDS``, default 10 minutes)."""
    return int(getattr(settings, "STEWARD_CLAIM_LEASE_SECONDS", 600))


@dataclass(frozen=True)
class ClaimFilter:
    """Which part of the queue to claim from (the inbox's memory and kind filters)."""

    memory_id: int | None = None
    kind: str | None = None


def claimable(actor: Actor, f: ClaimFilter, *, now: datetime) -> QuerySet[Proposal]:
    """Pending proposals the actor may see and decide, not held by someone else's live lease,
    oldest first. Proposals the actor submitted or amended are skipped (they count as "self"
    and cannot decide them), and so are those assigned to another reviewer (the assignment
    names who should take them)."""
    qs = visible_proposals(actor).filter(status=ProposalStatus.PENDING)
    if f.memory_id is not None:
        qs = qs.filter(memory_id=f.memory_id)
    if f.kind:
        qs = qs.filter(kind=f.kind)
    qs = qs.exclude(submitted_by=actor.id)
    if actor.user_pk is not None:
        qs = qs.exclude(submitted_by_owner_id=actor.user_pk)
    if actor.key_pk is not None:
        qs = qs.exclude(submitted_by_key_id=actor.key_pk)
    qs = qs.exclude(pk__in=_amended_by(actor))
    qs = qs.filter(_unassigned_or_mine(actor))
    held = ReviewClaim.objects.filter(expires_at__gt=now).exclude(actor_id=actor.id)
    return qs.exclude(pk__in=held.values("proposal_id")).order_by("pk")


def _amended_by(actor: Actor) -> QuerySet[ProposalAmendment, Any]:
    """The proposals the person behind ``actor`` amended (``Proposal.editors``, read from the
    amendment rows: each names its author and the user a key acted for, the identities that
    make up ``editors``)."""
    ids = actor.identities()
    return ProposalAmendment.objects.filter(Q(author_id__in=ids) | Q(on_behalf_of__in=ids)).values(
        "proposal_id"
    )


def _unassigned_or_mine(actor: Actor) -> Q:
    """Proposals assigned to nobody, or to the person behind ``actor`` (a user, or a key's
    owner)."""
    nobody = Q(assigned_to__isnull=True)
    return nobody if actor.user_pk is None else nobody | Q(assigned_to_id=actor.user_pk)


@transaction.atomic(durable=True)
def claim_next_proposal(
    *, actor: Actor, f: ClaimFilter | None = None, now: datetime | None = None
) -> ReviewClaim | None:
    """Lease the oldest claimable proposal to ``actor`` for :func:`lease_seconds`.

    Preconditions: the actor is a reviewer (403 ``forbidden``).
    Effects: the actor's previous claim (if any) is released; an expired lease on the chosen
    proposal is taken over. Returns the claim, or None when nothing is left to claim.
    Locks: the chosen proposal row only (skip-locked), never the Memory row.
    """
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may claim proposals.")
    f = f or ClaimFilter()
    now = now or timezone.now()
    for _ in range(_ATTEMPTS):
        candidate = (
            claimable(actor, f, now=now)
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", flat=True)
            .first()
        )
        if candidate is None:
            ReviewClaim.objects.filter(actor_id=actor.id).delete()
            return None
        try:
            with transaction.atomic():
                ReviewClaim.objects.filter(
                    Q(actor_id=actor.id) | Q(proposal_id=candidate, expires_at__lte=now)
                ).delete()
                return ReviewClaim.objects.create(
                    proposal_id=candidate,
                    actor_id=actor.id,
                    actor_label=actor.label,
                    claimed_at=now,
                    expires_at=now + timedelta(seconds=lease_seconds()),
                )
        except IntegrityError:
            # Another reviewer's claim on the same proposal committed after we read; try the
            # next one.
            continue
    return None


def end_claim_with_decision(*, actor: Actor, proposal_id: int) -> None:
    """End the deciding reviewer's claim on ``proposal_id``: a claim lasts until its holder
    decides (approves, rejects, asks for changes), not until the lease runs out. Runs inside the
    decision's transaction (no transaction of its own). Another reviewer's claim on the same
    proposal stays, so they learn someone else decided what they held."""
    ReviewClaim.objects.filter(actor_id=actor.id, proposal_id=proposal_id).delete()


@transaction.atomic(durable=True)
def release_claim(*, actor: Actor, proposal_id: int | None = None) -> int:
    """Give up the actor's claim (if any; with ``proposal_id``, only a claim on that proposal).
    Returns how many leases were released (0 or 1)."""
    mine = ReviewClaim.objects.filter(actor_id=actor.id)
    if proposal_id is not None:
        mine = mine.filter(proposal_id=proposal_id)
    deleted, _ = mine.delete()
    return deleted
