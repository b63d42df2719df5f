"""Recall as the surfaces serve it: run the search or build the Context Pack for a request, then
announce what was served on ``effects.served`` — heard by the recall events (queued for the fold,
when the policy enables them) and the exposure ledger (which entry versions went to which key and
run).

``POST …/search`` and ``POST …/context-pack``, and the MCP ``recall`` and ``context_pack`` tools,
call these and shape the result with :mod:`memory.presenters`. Pages that only preview recall
(the search playground, the entry browser) call ``memory.search.search`` directly: they serve
nothing to an agent.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from lib.identity import Actor

from . import effects
from .context_pack import ContextPack, build_context_pack
from .models import Memory
from .search import RecallFilters, SearchResult, search


def recall_filters(
    filters: dict[str, Any] | None, *, strict_fresh: bool = False
) -> RecallFilters | None:
    """A request's validated ``filters`` and ``strict_fresh`` as the pipeline's filters."""
    fresh_at = timezone.now() if strict_fresh else None
    return RecallFilters.from_request(filters, fresh_at=fresh_at)


def serve_search(
    memory: Memory,
    actor: Actor,
    *,
    query: str,
    limit: int,
    view: str,
    intent: str | None = None,
    trace: bool = False,
    filters: dict[str, Any] | None = None,
    strict_fresh: bool = False,
    run_id: str = "",
    via: str = "search",
) -> SearchResult:
    """Recall for ``query`` (the ranking trace is computed when ``trace``; the caller decides
    who may see it). ``filters``: the validated ``FiltersIn``; ``strict_fresh``: leave out
    entries due for re-checking. What it served is announced (``effects.served``: the recall
    events and the exposure ledger), as served to ``run_id`` through ``via``."""
    result = search(
        memory,
        actor=actor,
        query=query,
        limit=limit,
        view=view,
        intent=intent,
        trace=trace,
        filters=recall_filters(filters, strict_fresh=strict_fresh),
    )
    effects.served(
        memory, actor, run_id=run_id, via=via, items=[(h.entry_pk, h.version) for h in result.hits]
    )
    return result


def serve_context_pack(
    memory: Memory,
    actor: Actor,
    *,
    query: str,
    filters: dict[str, Any] | None = None,
    strict_fresh: bool = False,
    run_id: str = "",
    via: str = "context_pack",
    **options: Any,
) -> ContextPack:
    """A Context Pack for ``query``; ``filters``: the validated ``FiltersIn``; ``options`` are
    :func:`~memory.context_pack.build_context_pack`'s. What it served is announced as by
    :func:`serve_search`."""
    pack = build_context_pack(
        memory,
        actor=actor,
        query=query,
        filters=recall_filters(filters, strict_fresh=strict_fresh),
        **options,
    )
    effects.served(
        memory, actor, run_id=run_id, via=via, items=[(i.entry_id, i.version) for i in pack.items]
    )
    return pack
