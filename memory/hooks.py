"""Explicit hook points through which apps that depend on ``memory`` react atomically.

``memory`` imports neither ``proposals`` nor ``review``. Where a memory write must let them react
inside the same transaction, it calls the hooks registered here; ``proposals`` registers its
listeners in ``AppConfig.ready()``. These are not signals: the list is explicit, ordered and
called synchronously by the revision writer and the add action.

- ``heads_changed(memory, revision, entry_pks)``: after a revision has changed the heads of
  ``entry_pks`` (pending proposals touching them become stale).
- ``entry_admitted(memory, entry, version, actor, near_duplicates)``: after an add, with the
  near-duplicate findings (a duplicate files a consolidation proposal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HeadsChanged = Callable[[Any, Any, list[int]], None]
EntryAdmitted = Callable[..., None]

_heads_changed: list[HeadsChanged] = []
_entry_admitted: list[EntryAdmitted] = []


def on_heads_changed(fn: HeadsChanged) -> HeadsChanged:
    if fn not in _heads_changed:
        _heads_changed.append(fn)
    return fn


def on_entry_admitted(fn: EntryAdmitted) -> EntryAdmitted:
    if fn not in _entry_admitted:
        _entry_admitted.append(fn)
    return fn


def heads_changed(memory: Any, revision: Any, entry_pks: list[int]) -> None:
    for fn in _heads_changed:
        fn(memory, revision, entry_pks)


def entry_admitted(**kwargs: Any) -> None:
    for fn in _entry_admitted:
        fn(**kwargs)
