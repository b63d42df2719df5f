"""The one seam through which memory announces side effects that other apps carry out after the
read or write (DESIGN §3): memory imports none of them; they register here in
``AppConfig.ready()``.

- ``served(memory, actor, *, run_id, via, items)``: a recall (search, Context Pack, MCP) served
  these ``(entry pk or entry id, version number)`` pairs to ``actor`` for ``run_id`` (``""``
  when the caller named none). Listeners must not write on the request path (the exposure
  ledger queues the rows); a failing listener is logged, never turned into an error for the
  reader.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

Served = Callable[..., object]
_served: list[Served] = []


def on_served(fn: Served) -> Served:
    """Register ``fn`` (once) to hear what each recall served."""
    if fn not in _served:
        _served.append(fn)
    return fn


def served(
    memory: Any,
    actor: Any,
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
