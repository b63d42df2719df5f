"""Helpers every memory action shares: the start of a single-entry write, its one revision and
audit event, and the result a write returns. The reads live in :mod:`memory.selectors`, the
role checks in :mod:`memory.permissions`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import audit
from ..actors import Actor
from ..models import (
    Entry,
    EntryVersion,
    Head,
    Memory,
    Revision,
)

# ``require_writer`` is re-exported for the session action, which imports it from here.
from ..permissions import require_writer as require_writer
from ..selectors import get_entry, head_of
from .writer import Change, lock_memory, write_revision


def lock_entry(actor: Actor, memory: Memory, uid: str) -> tuple[Memory, Entry, Head]:
    """Take the Memory lock, then read the entry ``uid`` (within the actor's clearance) and its
    head: the start of every single-entry write."""
    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, uid)
    return memory, entry, head_of(entry)


@dataclass
class WriteResult:
    entry: Entry
    version: EntryVersion
    revision: Revision | None
    created: bool
    reason: str = ""
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)
    proposal_id: int | None = None
    #: The entry's head state after the write (``candidate`` under admission review).
    state: str = ""
    #: A candidate's evidence authorities, for its admission proposal.
    authorities: list[str] = field(default_factory=list)


def label_of(body: str) -> str:
    """A short copied label for audit rows (the first line, trimmed)."""
    first = body.splitlines()[0] if body else ""
    return first[:117] + "…" if len(first) > 120 else first


def write_entry_change(
    memory: Memory,
    *,
    actor: Actor,
    head: Head,
    change: Change,
    kind: str,
    reason: str,
    action: str,
    payload: dict[str, Any],
) -> Revision:
    """Write one revision holding one entry's ``change`` and record its audit event ``action``
    (labelled with the head version's body, naming the entry): the shape of every single-entry
    decision — forget, reactivate, pin, quarantine. Precondition: the caller holds the Memory
    lock and has re-checked the head."""
    revision = write_revision(memory, actor=actor, kind=kind, reason=reason, changes=[change])
    audit.record(
        action,
        actor=actor,
        memory=memory,
        label=label_of(head.version.body),
        revision=revision,
        entry_ids=[change.entry.uid],
        payload=payload,
    )
    return revision
