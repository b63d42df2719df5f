"""Who may see which proposal: the one visibility rule every surface uses.

A proposal is visible to an actor when it belongs to one of the actor's Memories and every entry
it affects is within the actor's clearance (a proposal touching an entry the actor may not see
does not exist for it). REST, the inbox, the proposal and operation pages, claims, approval and
the audit timeline all start from :func:`visible_proposals`; :func:`proposal_json` is the
representation with ids of entries above the actor's clearance redacted from free text
(``memory.visibility.scrub``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from memory.actors import Actor
from memory.visibility import ENTRY_UID, scrub

from .exceptions import NotFound
from .models import Proposal, ProposalQuerySet, ProposalTarget
from .permissions import require_reader
from .serializers import proposal_out, submitted_out


def visible_proposals(actor: Actor) -> ProposalQuerySet:
    """Every proposal ``actor`` may see (Memory scope and clearance)."""
    return Proposal.objects.visible_to(actor)


def get_proposal(
    actor: Actor, proposal_id: int, queryset: QuerySet[Proposal] | None = None
) -> Proposal:
    """Proposal ``proposal_id`` if the actor may read proposals and see this one; 404 otherwise
    (other Memories and entries above the actor's clearance do not exist for it). ``queryset``
    (built on :func:`visible_proposals`) chooses what is loaded with it."""
    require_reader(actor)
    qs = queryset if queryset is not None else visible_proposals(actor).with_detail()
    proposal = qs.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal {proposal_id}.")
    return proposal


def proposal_json(actor: Actor, proposal: Proposal) -> dict[str, Any]:
    """The representation of a visible proposal for ``actor``, with ids of entries above its
    clearance redacted from free text (rationale, reasons). The proposal's own targets are
    visible by construction, so only a representation naming other entries is checked (one
    query then, none otherwise)."""
    return _redacted(actor, proposal, proposal_out(proposal), proposal.targets.all())


def submitted_json(
    actor: Actor, proposal: Proposal, targets: Sequence[ProposalTarget]
) -> dict[str, Any]:
    """:func:`proposal_json` of a proposal intake has just written for ``actor``, built from
    the rows it wrote (``SubmitResult.targets``) instead of reading them back."""
    return _redacted(actor, proposal, submitted_out(proposal, targets), targets)


def _redacted(
    actor: Actor, proposal: Proposal, out: dict[str, Any], targets: Iterable[ProposalTarget]
) -> dict[str, Any]:
    own = {t.entry.uid for t in targets}
    if set(ENTRY_UID.findall(json.dumps(out, default=str))) - own:
        return scrub(out, memory_pk=proposal.memory_id, actor=actor)
    return out


def filter_proposals(
    qs: ProposalQuerySet, actor: Actor, filters: Mapping[str, Any]
) -> ProposalQuerySet:
    """The list filters shared by REST and the inbox: ``q`` (words of the rationale, the
    proposed text — the payload —, an affected entry's text as the proposal read it, or an
    affected entry id, case-insensitive), ``submitter``
    (actor id or label, ``me``), ``entry`` (an affected entry id), ``has_lost_details`` and
    ``assigned=me``. Each is one condition on the same query."""
    q = (filters.get("q") or "").strip()
    if q:
        qs = qs.annotate(_payload_text=Cast("payload", TextField())).filter(
            Q(rationale__icontains=q)
            | Q(_payload_text__icontains=q)
            | Q(pk__in=ProposalTarget.objects.filter(entry__uid=q).values("proposal_id"))
            | Q(
                pk__in=ProposalTarget.objects.filter(version__body__icontains=q).values(
                    "proposal_id"
                )
            )
        )
    who = filters.get("submitter")
    if who:
        qs = qs.filter(
            Q(submitted_by=actor.id)
            if who == "me"
            else Q(submitted_by=who) | Q(submitted_by_label=who)
        )
    if filters.get("entry"):
        qs = qs.filter(
            pk__in=ProposalTarget.objects.filter(entry__uid=filters["entry"]).values("proposal_id")
        )
    lost = filters.get("has_lost_details")
    if lost is not None:
        has = Q(verification__lost_details__0__isnull=False)
        qs = qs.filter(has) if lost else qs.exclude(has)
    if filters.get("assigned") == "me":
        qs = qs.filter(assigned_to_id=actor.user_pk) if actor.user_pk else qs.none()
    return qs
