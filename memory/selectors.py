"""The reads of the memory core: which Memory, entry, head, versions, revisions and sources an
actor may see, loaded with what their representation needs.

Every surface starts here — the REST views, the MCP tools, the pages and the actions' own reads —
so the visibility rule is written once: a Memory outside the actor's scope and an entry above its
clearance do not exist for it (404, never 403: no existence leak). Nothing here writes, and
nothing here shapes output (:mod:`memory.presenters` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from .actors import Actor
from .exceptions import NotFound
from .models import (
    Entry,
    EntryQuerySet,
    EntryVersion,
    Evidence,
    Head,
    Memory,
    Revision,
    RevisionChange,
    Source,
)

# --- Memories and sources --------------------------------------------------------------------


def get_memory(actor: Actor, slug: str) -> Memory:
    """The Memory ``slug`` if the actor may see it; 404 otherwise (no existence leak)."""
    memory = Memory.objects.filter(slug=slug).first()
    if memory is None or not actor.sees_memory(memory.pk):
        raise NotFound(f"No memory '{slug}'.")
    return memory


def get_source(name: str) -> Source:
    """The source ``name`` with its declarations prefetched; 404 otherwise."""
    source = Source.objects.filter(name=name).prefetch_related("declarations").first()
    if source is None:
        raise NotFound(f"No source '{name}'.")
    return source


# --- Entries ---------------------------------------------------------------------------------


def get_entry(actor: Actor, memory: Memory, uid: str) -> Entry:
    """The entry ``uid`` of ``memory`` if it is within the actor's clearance; 404 otherwise."""
    entry = Entry.objects.for_memory(memory).visible_to(actor).filter(uid=uid).first()
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    return entry


def get_entry_detail(actor: Actor, memory: Memory, uid: str) -> Entry:
    """:func:`get_entry` with what an entry's representation needs (head, head version and its
    evidence, projection: ``EntryQuerySet.with_detail``)."""
    entry = Entry.objects.for_memory(memory).visible_to(actor).with_detail().filter(uid=uid).first()
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    return entry


def head_of(entry: Entry) -> Head:
    """The entry's head with its version."""
    return Head.objects.select_related("version").get(entry=entry)


def entries(
    actor: Actor,
    memory: Memory,
    *,
    state: str = "",
    kind: str = "",
    tier: str = "",
    validity: str = "",
    pinned: bool | None = None,
) -> EntryQuerySet:
    """The entries of ``memory`` within the actor's clearance, narrowed by each filter given
    (head state, kind, tier, the projection's validity, pinned): the list of
    ``GET …/entries`` and of the entry browser. Each filter is one condition on the same query;
    the caller chooses the order of a page and what is loaded with its rows."""
    qs = Entry.objects.for_memory(memory).visible_to(actor)
    if state:
        qs = qs.filter(head__state=state)
    if kind:
        qs = qs.filter(kind=kind)
    if tier:
        qs = qs.filter(tier=tier)
    if validity:
        # The projection's own Memory too: its (memory, validity) index finds a rare value.
        qs = qs.filter(projection__memory_id=memory.pk, projection__validity=validity)
    if pinned is not None:
        qs = qs.filter(head__pinned=pinned)
    return qs


def versions_of(entry: Entry) -> list[EntryVersion]:
    """Every version of ``entry``, oldest first, with its revision and evidence (three queries
    however long the history)."""
    return list(
        EntryVersion.objects.filter(entry=entry)
        .select_related("revision")
        .prefetch_related(
            Prefetch(
                "evidence", queryset=Evidence.objects.select_related("source").order_by("position")
            )
        )
        .order_by("number")
    )


@dataclass(frozen=True)
class History:
    """An entry, its head and every version, oldest first: what its history shows."""

    entry: Entry
    head: Head
    versions: list[EntryVersion]


def entry_history(actor: Actor, memory: Memory, uid: str) -> History:
    """The history of the entry ``uid`` (404 as :func:`get_entry`): a fixed number of queries
    however long it is."""
    entry = get_entry(actor, memory, uid)
    return History(entry, Head.objects.get(entry=entry), versions_of(entry))


# --- Revisions -------------------------------------------------------------------------------


def revisions(memory: Memory) -> QuerySet[Revision]:
    """The revisions of ``memory`` with their changes (entries and versions joined), in the
    order they were made within each revision."""
    return Revision.objects.filter(memory=memory).prefetch_related(
        Prefetch(
            "changes",
            queryset=RevisionChange.objects.select_related(
                "entry", "from_version", "to_version"
            ).order_by("id"),
        )
    )


def get_revision(memory: Memory, number: int) -> Revision:
    """Revision ``number`` of ``memory`` with its changes; 404 otherwise."""
    revision = revisions(memory).filter(number=number).first()
    if revision is None:
        raise NotFound(f"No revision {number} in memory '{memory.slug}'.")
    return revision
