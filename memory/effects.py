"""The one seam through which memory announces side effects that other apps carry out after the
read or write (DESIGN §3): memory imports none of them; they register here in
``AppConfig.ready()``.

- ``served(memory, actor, *, run_id, via, items)``: a recall (search, Context Pack, MCP) served
  these ``(entry pk or entry id, version number)`` pairs to ``actor`` for ``run_id`` (``""``
  when the caller named none). Listeners must not write on the request path (the exposure
  ledger queues the rows); a failing listener is logged, never turned into an error for the
  reader.
- ``retired(memory, *, revision, kind, versions, at)``: after the transaction of a direct
  ``forget`` or ``quarantine`` commits, the ``(entry id, version)`` pairs it took out of recall
  (the exposure notice of a revision that is not an operation). Scheduled with
  :func:`retired_after_commit` inside the writing transaction; a failing listener is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction

from lib.identity import Actor

log = logging.getLogger(__name__)

Served = Callable[..., object]
_served: list[Served] = []
Retired = Callable[..., object]
_retired: list[Retired] = []


def on_served(fn: Served) -> Served:
    """Register ``fn`` (once) to hear what each recall served."""
    if fn not in _served:
        _served.append(fn)
    return fn


def served(
    memory: Any,
    actor: Actor,
    *,
    run_id: str,
    via: str,
    items: Sequence[tuple[int | str, int]],
) -> None:
    for fn in _served:
        try:
            fn(memory, actor, run_id=run_id, via=via, items=items)
        except Exception:
            log.exception("served listener %s failed", getattr(fn, "__name__", fn))


def on_retired(fn: Retired) -> Retired:
    """Register ``fn`` (once) to hear which versions a direct forget or quarantine retired."""
    if fn not in _retired:
        _retired.append(fn)
    return fn


def retired_after_commit(
    memory: Any, *, revision: int, kind: str, versions: Sequence[tuple[str, int]], at: datetime
) -> None:
    """Inside the writing transaction: tell the listeners once it commits."""
    if not _retired:
        return

    def announce() -> None:
        for fn in _retired:
            try:
                fn(memory, revision=revision, kind=kind, versions=list(versions), at=at)
            except Exception:
                log.exception("retired listener %s failed", getattr(fn, "__name__", fn))

    transaction.on_commit(announce, robust=True)
