"""Sessions: ending one retires its session-tier entries."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from .. import audit, effects
from ..actors import Actor
from ..admission import clean_id
from ..models import (
    Head,
    HeadState,
    Memory,
    Revision,
    RevisionKind,
    Tier,
    sensitivities_up_to,
)
from .common import require_writer
from .writer import Change, lock_memory, write_revision


@dataclass
class SessionEndResult:
    revision: Revision | None
    retired: list[str]


@transaction.atomic(durable=True)
def end_session(memory: Memory, *, actor: Actor, session_id: str) -> SessionEndResult:
    """Retire the session's active session-tier entries *within the actor's clearance* with
    reason ``session_end`` (one revision): entries the key cannot see are never touched by its
    writes (API.md). Pinned and protected entries are never retired. Ending a session with
    nothing left to retire writes nothing. After commit, the promotion pass runs for the Memory
    when its policy enables it (``memory.maintenance.after_session_end``)."""
    require_writer(actor)
    session = clean_id(session_id, field="session_id")
    memory = lock_memory(memory.pk)
    heads = list(
        Head.objects.filter(
            memory=memory,
            state=HeadState.ACTIVE,
            entry__session_id=session,
            entry__tier=Tier.SESSION,
            pinned=False,
            entry__sensitivity__in=sensitivities_up_to(actor.clearance),
        )
        .exclude(entry__projection__protected=True)
        .select_related("entry")
        .order_by("entry_id")
    )
    if not heads:
        return SessionEndResult(None, [])
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.SESSION_END,
        reason=f"session_end:{session}",
        changes=[
            Change(entry=h.entry, to_state=HeadState.INACTIVE, state_reason="session_end")
            for h in heads
        ],
    )
    retired = [h.entry.uid for h in heads]
    audit.record(
        "session.ended",
        actor=actor,
        memory=memory,
        label=session,
        revision=revision,
        entry_ids=retired,
        payload={"session_id": session, "retired": len(retired)},
    )
    effects.session_ended.after_commit(memory.pk)
    return SessionEndResult(revision, retired)
