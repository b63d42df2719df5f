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
from typing import Any

from django.db.models import QuerySet

from memory.actors import Actor
from memory.visibility import ENTRY_UID, scrub

from .exceptions import NotFound
from .models import Proposal, ProposalQuerySet
from .permissions import require_reader
from .serializers import proposal_out


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
    out = proposal_out(proposal)
    own = {t.entry.uid for t in proposal.targets.all()}
    if set(ENTRY_UID.findall(json.dumps(out, default=str))) - own:
        return scrub(out, memory_pk=proposal.memory_id, actor=actor)
    return out
