"""Keeping entries above a reader's clearance out of every response.

Lifecycle annotations and reasons name other entries (``conflicts_with:e_…``,
``superseded_by:e_…``, ``consolidated_into:e_…``, ``successor_entry``). An entry the reader may
not see must not be named to them: :func:`scrub` replaces such ids with ``(hidden)`` in a
response payload, with at most one query whatever the payload's size (none when the payload
references no other entry).
"""

from __future__ import annotations

import re
from typing import Any

from .actors import Actor
from .models import Entry, sensitivities_up_to

ENTRY_UID = re.compile(r"\be_[0-9a-f]{16}\b")
HIDDEN = "(hidden)"


def _collect(data: Any, found: set[str]) -> None:
    if isinstance(data, str):
        found.update(ENTRY_UID.findall(data))
    elif isinstance(data, dict):
        for key, value in data.items():
            # An item's own ``entry_id`` is visible by construction (it was selected by
            # clearance); only references to *other* entries need checking.
            if key != "entry_id":
                _collect(value, found)
    elif isinstance(data, list | tuple):
        for value in data:
            _collect(value, found)


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


def hidden_uids(memory_pk: int, uids: set[str], actor: Actor) -> set[str]:
    """The subset of ``uids`` in the Memory that are above ``actor``'s clearance."""
    if not uids:
        return set()
    return set(
        Entry.objects.filter(memory_id=memory_pk, uid__in=uids)
        .exclude(sensitivity__in=sensitivities_up_to(actor.clearance))
        .values_list("uid", flat=True)
    )


def scrub(data: Any, *, memory_pk: int, actor: Actor) -> Any:
    """``data`` with every entry id the actor may not see replaced (a bare id becomes null)."""
    found: set[str] = set()
    _collect(data, found)
    hidden = hidden_uids(memory_pk, found, actor)
    return _replace(data, hidden) if hidden else data
