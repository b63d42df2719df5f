"""Explicit hook points through which apps that depend on ``memory`` react *inside* a write.

``memory`` imports neither ``proposals`` nor ``review``. Where a memory write must let them react
inside the same transaction, it calls the hooks registered here; ``proposals`` registers its
listeners in ``AppConfig.ready()``. These are not signals: the list is explicit, ordered and
called synchronously by the revision writer and the add action.

- ``heads_changed(memory, revision, entry_pks)``: after a revision has changed the existing
  heads of ``entry_pks`` (pending proposals touching them become stale); heads the revision
  created are not listed, nothing can refer to them yet.
- ``candidate_written(memory, actor, entry, version, …) -> proposal pk``: files the
  ``admission`` proposal of a candidate — right after the add committed, in its own
  transaction; inside the transaction (and lock) of a release or compensation that made an
  entry a candidate again.

Read-only providers (queried by L1 maintenance and the inventory, no writes):

- ``entries_with_pending_proposals(memory, entry_pks) -> set[int]``: which of ``entry_pks`` a
  pending proposal touches (the decay scan must leave those to the reviewer).
- ``pending_proposals_by_kind(memory, reader) -> dict[str, int]``: pending proposal counts per kind
  (with a reader, only the proposals it may see).
- ``rejected_proposals_by_kind(memory, reader) -> dict[str, dict[str, int]]``: rejected proposal
  counts per kind and rejection reason (with a reader, only the proposals it may see).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

HeadsChanged = Callable[[Any, Any, list[int]], None]

CandidateWritten = Callable[..., int | None]

_heads_changed: list[HeadsChanged] = []
_candidate_written: list[CandidateWritten] = []
PendingEntries = Callable[[Any, list[int]], set[int]]
PendingByKind = Callable[[Any, Any], dict[str, int]]
_pending_entries: list[PendingEntries] = []
_pending_by_kind: list[PendingByKind] = []
RejectedByKind = Callable[[Any, Any], dict[str, dict[str, int]]]
_rejected_by_kind: list[RejectedByKind] = []


def _register(listeners: list[F], fn: F) -> F:
    """Add ``fn`` to ``listeners`` once (registering twice is harmless); returns ``fn``."""
    if fn not in listeners:
        listeners.append(fn)
    return fn


def on_heads_changed(fn: HeadsChanged) -> HeadsChanged:
    return _register(_heads_changed, fn)


def on_candidate_written(fn: CandidateWritten) -> CandidateWritten:
    return _register(_candidate_written, fn)


def candidate_written(**kwargs: Any) -> int | None:
    """The admission proposal filed for a candidate (None when no listener is registered)."""
    filed = None
    for fn in _candidate_written:
        filed = fn(**kwargs)
    return filed


def heads_changed(memory: Any, revision: Any, entry_pks: list[int]) -> None:
    for fn in _heads_changed:
        fn(memory, revision, entry_pks)


def on_entries_with_pending_proposals(fn: PendingEntries) -> PendingEntries:
    return _register(_pending_entries, fn)


def on_pending_proposals_by_kind(fn: PendingByKind) -> PendingByKind:
    return _register(_pending_by_kind, fn)


def entries_with_pending_proposals(memory: Any, entry_pks: list[int]) -> set[int]:
    out: set[int] = set()
    if entry_pks:
        for fn in _pending_entries:
            out |= fn(memory, entry_pks)
    return out


def on_rejected_proposals_by_kind(fn: RejectedByKind) -> RejectedByKind:
    return _register(_rejected_by_kind, fn)


def rejected_proposals_by_kind(memory: Any, reader: Any = None) -> dict[str, dict[str, int]]:
    """Rejected proposals of ``memory`` per kind and reason; with a ``reader`` (an ``Actor``),
    only those it may see."""
    out: dict[str, dict[str, int]] = {}
    for fn in _rejected_by_kind:
        for kind, reasons in fn(memory, reader).items():
            mine = out.setdefault(kind, {})
            for reason, n in reasons.items():
                mine[reason] = mine.get(reason, 0) + n
    return out


def pending_proposals_by_kind(memory: Any, reader: Any = None) -> dict[str, int]:
    """Pending proposals of ``memory`` per kind; with a ``reader`` (an ``Actor``), only those it
    may see."""
    out: dict[str, int] = {}
    for fn in _pending_by_kind:
        for kind, n in fn(memory, reader).items():
            out[kind] = out.get(kind, 0) + n
    return out
