"""Keeping entries above a reader's clearance out of every response: the one place that
decides redaction for memory objects.

Which rows a reader may see is decided by the querysets (``Entry.objects.visible_to``, the
channels' clearance filter). What those rows *say* about other entries is decided here:
lifecycle annotations and reasons name other entries (``conflicts_with:e_…``,
``superseded_by:e_…``, ``consolidated_into:e_…``, ``successor_entry``), and an entry the reader
may not see must not be named to them.

- :func:`redact_hits` redacts search hits where they are made (``memory.search.search``), so
  every consumer — REST, the Context Pack, pages, recall previews, agent tools — gets hits that
  are already safe.
- :func:`scrub` redacts a response payload; ``memory.api.base.MemoryApiView`` applies it to
  every memory REST response, so no view calls it by hand.

Each costs at most one query whatever the size (none when nothing references another entry, or
when the reader's clearance hides nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from .actors import Actor
from .models import Entry, Sensitivity, sensitivities_up_to


class Redactable(Protocol):
    """What a search hit says about other entries (``memory.search.Hit`` is one)."""

    body: str
    validity_reason: str
    successor_entry: str | None


H = TypeVar("H", bound=Redactable)

ENTRY_UID = re.compile(r"\be_[0-9a-f]{16}\b")
HIDDEN = "(hidden)"


def _collect(data: Any, found: set[str], own: set[str] | None = None) -> None:
    if isinstance(data, str):
        found.update(ENTRY_UID.findall(data))
    elif isinstance(data, dict):
        for key, value in data.items():
            # An item's own ``entry_id`` is visible by construction (it was selected by
            # clearance); only references to *other* entries need checking.
            if key != "entry_id":
                _collect(value, found, own)
            elif own is not None and isinstance(value, str):
                own.add(value)
    elif isinstance(data, list | tuple):
        for value in data:
            _collect(value, found, own)


def _replace(data: Any, hidden: set[str]) -> Any:
    if isinstance(data, str):
        if not ENTRY_UID.search(data):
            return data
        replaced = ENTRY_UID.sub(lambda m: HIDDEN if m.group(0) in hidden else m.group(0), data)
        return None if replaced == HIDDEN and data in hidden else replaced
    if isinstance(data, dict):
        return {k: v if k == "entry_id" else _replace(v, hidden) for k, v in data.items()}
    if isinstance(data, list):
        return [_replace(v, hidden) for v in data]
    return data


def hidden_uids(
    memory_pk: int | None, uids: set[str], actor: Actor, *, memory_slug: str | None = None
) -> set[str]:
    """The subset of ``uids`` in the Memory (by pk or slug) above ``actor``'s clearance."""
    if not uids or actor.clearance == Sensitivity.values[-1]:
        return set()
    scope: dict[str, Any] = (
        {"memory_id": memory_pk} if memory_pk is not None else {"memory__slug": memory_slug}
    )
    return set(
        Entry.objects.filter(uid__in=uids, **scope)
        .exclude(sensitivity__in=sensitivities_up_to(actor.clearance))
        .values_list("uid", flat=True)
    )


def scrub(
    data: Any, *, memory_pk: int | None = None, memory_slug: str | None = None, actor: Actor
) -> Any:
    """``data`` with every entry id the actor may not see replaced (a bare id becomes null)."""
    found: set[str] = set()
    own: set[str] = set()
    _collect(data, found, own)
    # Ids the payload itself lists as its items (a Context Pack's text names its own items).
    hidden = hidden_uids(memory_pk, found - own, actor, memory_slug=memory_slug)
    return _replace(data, hidden) if hidden else data


def redact_hits(hits: Sequence[H], *, memory_pk: int, actor: Actor) -> list[H]:
    """The hits with every other entry the actor may not see removed from what they say: the
    body, the validity reason (``(hidden)`` in place of the id) and the successor (null)."""
    found: set[str] = set()
    for hit in hits:
        _collect([hit.body, hit.validity_reason, hit.successor_entry or ""], found)
    hidden = hidden_uids(memory_pk, found, actor)
    if not hidden:
        return list(hits)
    for hit in hits:
        hit.body = _replace(hit.body, hidden) or ""
        hit.validity_reason = _replace(hit.validity_reason, hidden) or ""
        if hit.successor_entry in hidden:
            hit.successor_entry = None
    return list(hits)
