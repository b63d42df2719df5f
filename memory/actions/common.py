"""Reads and helpers every memory action shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import audit
from ..actors import Actor
from ..exceptions import (
    Forbidden,
    NotFound,
)
from ..models import (
    Entry,
    EntryVersion,
    Head,
    Memory,
    Revision,
)
from .writer import Change, lock_memory, write_revision

# --- Reads used by actions ------------------------------------------------------------------


def get_memory(actor: Actor, slug: str) -> Memory:
    """The Memory ``slug`` if the actor may see it; 404 otherwise (no existence leak)."""
    memory = Memory.objects.filter(slug=slug).first()
    if memory is None or not actor.sees_memory(memory.pk):
        raise NotFound(f"No memory '{slug}'.")
    return memory


def get_entry(actor: Actor, memory: Memory, uid: str) -> Entry:
    """The entry ``uid`` of ``memory`` if it is within the actor's clearance; 404 otherwise."""
    entry = Entry.objects.for_memory(memory).visible_to(actor).filter(uid=uid).first()
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    return entry


def head_of(entry: Entry) -> Head:
    return Head.objects.select_related("version").get(entry=entry)


def lock_entry(actor: Actor, memory: Memory, uid: str) -> tuple[Memory, Entry, Head]:
    """Take the Memory lock, then read the entry ``uid`` (within the actor's clearance) and its
    head: the start of every single-entry write."""
    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, uid)
    return memory, entry, head_of(entry)


def require_writer(actor: Actor) -> None:
    if not actor.can_write_entries:
        raise Forbidden("Your role may not write entries.")


def require_reviewer(actor: Actor, what: str) -> None:
    """Reviewers only: ``what`` names the decision (pin, quarantine, release)."""
    if not actor.is_reviewer:
        raise Forbidden(f"Only reviewers may {what} entries.")


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
