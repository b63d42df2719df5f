"""The one seam through which memory announces what happens *after* a read or a write (DESIGN §3).

Memory's modules announce an effect; the apps that carry it out connect to it in
``AppConfig.ready()`` (memory's own tasks and maintenance included), so the writer, the session
end and the recall path import no task, no maintenance and no other app. An effect never undoes
or fails what announced it: a failing listener is logged and the next one still runs.

What must happen *inside* the writing transaction (a pending proposal going stale, the admission
proposal of a candidate) is not an effect: those are the hooks of ``memory.hooks``.

The effects, with who announces them and when:

- ``versions_written(version_pks)`` — the revision writer, after the revision commits (the
  vectors of the new versions are made; ``memory.tasks``).
- ``session_ended(memory_pk)`` — ``end_session``, after it commits (the promotion pass, when the
  Memory's policy enables it; ``memory.maintenance``).
- ``entry_admitted(memory=, actor=, result=, dedupe=, near_duplicate_of=, findings=)`` — an add,
  once it committed, outside any transaction (the consolidation of a near-duplicate, the
  quarantine proposal of injection findings; ``proposals``). Each listener writes in a
  transaction of its own.
- ``served(memory, actor, *, run_id, via, items)`` — a recall (search, Context Pack, MCP) served
  these ``(entry pk or entry id, version number)`` pairs to ``actor`` for ``run_id`` (``""`` when
  the caller named none), on the request path: listeners must not write there (the recall events
  and the exposure ledger queue their rows; ``lib.deferred``).
- ``retired(memory, *, revision, kind, versions, at)`` — a direct ``forget`` or ``quarantine``,
  after it commits: the ``(entry id, version)`` pairs it took out of recall (the exposure notice
  of a revision that is not an operation; ``review``).
- ``entries_fell_due(memory, items)`` — a real ``revalidation`` run, outside any transaction: the
  entries whose review date passed since the run before, each ``{entry_id, version, owner,
  review_at}`` with an owner (their owners are told; ``review``).

Announce with ``effect(...)`` (now) or ``effect.after_commit(...)`` (inside the writing
transaction: the listeners run once it commits; now when there is no transaction).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, ParamSpec

from django.db import transaction

from lib.identity import Actor

if TYPE_CHECKING:
    from .injection import Finding
    from .models import Memory

log = logging.getLogger(__name__)

P = ParamSpec("P")


class Effect(Generic[P]):
    """A named effect: listeners connected once each, called in the order they connected."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._listeners: list[Callable[P, object]] = []

    @classmethod
    def like(cls, signature: Callable[P, None]) -> Effect[P]:
        """An effect whose listeners take ``signature``'s parameters (named after it)."""
        return cls(signature.__name__.lstrip("_"))

    def connect(self, fn: Callable[P, object]) -> Callable[P, object]:
        """Register ``fn`` (connecting it twice is harmless); returns ``fn``."""
        if fn not in self._listeners:
            self._listeners.append(fn)
        return fn

    @property
    def connected(self) -> bool:
        return bool(self._listeners)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Tell every listener now; a failure is logged, never raised."""
        for fn in list(self._listeners):
            try:
                fn(*args, **kwargs)
            except Exception:
                log.exception("%s listener %s failed", self.name, getattr(fn, "__name__", fn))

    def after_commit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Inside the writing transaction: tell the listeners once it commits (never when it
        rolls back). Nothing is scheduled when no one listens."""
        if self._listeners:
            transaction.on_commit(lambda: self(*args, **kwargs), robust=True)


def _versions_written(version_pks: Sequence[int]) -> None: ...


def _session_ended(memory_pk: int) -> None: ...


def _entry_admitted(
    *,
    memory: Memory,
    actor: Actor,
    result: Any,  # memory.actions.WriteResult (the writers stand above this seam)
    dedupe: bool,
    near_duplicate_of: str | None,
    findings: Sequence[Finding],
) -> None: ...


def _served(
    memory: Memory,
    actor: Actor,
    *,
    run_id: str,
    via: str,
    items: Sequence[tuple[int | str, int]],
) -> None: ...


def _retired(
    memory: Memory, *, revision: int, kind: str, versions: Sequence[tuple[str, int]], at: datetime
) -> None: ...


def _entries_fell_due(memory: Memory, items: list[dict[str, Any]]) -> None: ...


versions_written = Effect.like(_versions_written)
session_ended = Effect.like(_session_ended)
entry_admitted = Effect.like(_entry_admitted)
served = Effect.like(_served)
retired = Effect.like(_retired)
entries_fell_due = Effect.like(_entries_fell_due)
