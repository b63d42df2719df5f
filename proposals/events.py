"""The audit event of something done to a proposal, labelled with the proposal."""

from __future__ import annotations

from typing import Any

from memory import audit
from memory.actors import Actor

from .models import Proposal


def record_proposal_event(action: str, proposal: Proposal, *, actor: Actor, **fields: Any) -> None:
    """Record ``action`` on ``proposal`` (its Memory, ``#<id> <kind>`` as the label); ``fields``
    are :func:`memory.audit.record`'s (entry ids, payload…)."""
    audit.record(
        action,
        actor=actor,
        memory=proposal.memory,
        label=f"#{proposal.pk} {proposal.kind}",
        proposal_id=proposal.pk,
        **fields,
    )
