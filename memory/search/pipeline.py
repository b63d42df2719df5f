"""The recall pipeline: channels → fusion → quality reorder → reranker → limit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from django.utils import timezone

from lib.errors import Forbidden, ValidationFailed
from lib.wording import one_of

from ..actors import Actor
from ..models import (
    Memory,
    sensitivities_up_to,
)
from ..ranking import (
    INTENTS,
    FreshnessPolicy,
    Votes,
    has_current_intent,
    quality_order,
    quality_policy,
    quality_votes,
)
from ..visibility import redact_hits
from . import channels
from .abbreviations import spelled_words
from .channels import ChannelQuery
from .common import CANDIDATES, CURRENT, HISTORY, Candidate, channel_cap, query_terms, setting
from .exchanges import find_exchanges
from .filters import RecallFilters
from .fusion import coarse_pool_size, rrf_fuse
from .hits import (
    CONFIGURED,
    Configured,
    Hit,
    Reranker,
    check_membership,
    chosen_reranker,
    load_hits,
)
from .trace import SearchResult, build_trace, validity_counts
from .vector import QueryVector, embed_query_soon

if TYPE_CHECKING:
    pass

# --- The pipeline ---------------------------------------------------------------------------

VIEWS = ("current", "history", "candidates")
#: The channel scope of each view.
SCOPES = {"current": CURRENT, "history": HISTORY, "candidates": CANDIDATES}


def search(
    memory: Memory,
    *,
    actor: Actor,
    query: str,
    limit: int = 10,
    view: str = "current",
    intent: str | None = None,
    reranker: Reranker | Configured | None = CONFIGURED,
    trace: bool = False,
    now: datetime | None = None,
    filters: RecallFilters | None = None,
) -> SearchResult:
    """Recall from ``memory`` for ``actor`` (scope already checked by the caller), scoped by
    ``filters`` inside each channel's query (:mod:`.filters`).

    Read-only: never writes, never locks. A fixed number of queries: the channels (one each), the
    pool rows (one) and their evidence (one, for the provenance), the redaction of ids above the
    actor's clearance (one, only when a hit names another entry), with a reranker the pool's
    question-and-answer exchanges (at most two, ``.exchanges``), and — only when ``trace`` is asked
    — the validity-filter counts (two).
    The hits are redacted for ``actor`` (``memory.visibility.redact_hits``).

    ``reranker``: by default the one ``STEWARD_SEARCH["RERANKER"]`` configures, if any; a
    reranker given runs instead; ``None`` runs none (the pool is ``limit``, the fused order).
    """
    check_request(view=view, intent=intent, limit=limit)
    if view == "candidates" and not actor.sees_withheld:
        raise Forbidden("Only reviewers and auditors may search candidates.")
    reranker = chosen_reranker(reranker)
    now = now or timezone.now()
    terms = query_terms(query)
    cap = channel_cap(limit)
    clearance = sensitivities_up_to(actor.clearance)
    # Once per request (the channels and the trace counts share it), computed while the
    # lexical channel's query runs.
    glossary = (memory.policy or {}).get("glossary")
    embedded = embed_query_soon(query, glossary)
    asked = ChannelQuery(terms, embedded)
    ranked = channels.run(
        memory.pk,
        asked,
        view=SCOPES[view],
        limit=cap,
        sensitivities=clearance,
        filters=filters,
    )
    qv = embedded()
    scans = asked.scans
    pool = rrf_fuse(ranked)[: coarse_pool_size(limit, reranker=reranker is not None)]
    baseline = load_hits(pool, now)
    for i, hit in enumerate(baseline, start=1):
        hit.baseline_rank = i
    quality_on, why = _quality_gate(memory, baseline)
    current_intent = has_current_intent(query, intent)
    if reranker is not None and view == "current":
        # A pooled answer is also read after its question (``.exchanges``): at most two queries.
        questions = find_exchanges(
            memory.pk, baseline, scope=CURRENT, sensitivities=clearance, filters=filters
        )
        for hit in baseline:
            hit.asked = questions.get(hit.key)
    ordered = _order(baseline, memory, query, quality_on, current_intent, reranker, now)
    filtered = (
        validity_counts(memory.pk, qv, terms, ranked, cap, clearance, filters)
        if (trace and view == "current")
        else {}
    )
    return SearchResult(
        hits=redact_hits(ordered[:limit], memory_pk=memory.pk, actor=actor),
        trace=build_trace(
            view=view,
            limit=limit,
            terms=terms,
            cap=cap,
            ranked=ranked,
            filtered=filtered,
            pool_size=len(pool),
            baseline=baseline,
            ordered=ordered,
            quality={
                "enabled": quality_on,
                "reason": why,
                "current_intent": current_intent,
                "policy": quality_policy(memory.policy),
            },
            reranker=reranker,
            vector=scans[0].as_dict() if scans else None,
            spelled_out=spelled_words(query, glossary) if (trace and qv is not None) else {},
            filters=filters,
        ),
    )


def check_request(*, view: str, intent: str | None, limit: int) -> None:
    """Refuse an unknown view or intent and a limit outside 1..MAX_LIMIT."""
    if view not in VIEWS:
        raise ValidationFailed(details={"view": [one_of(VIEWS)]})
    if intent is not None and intent not in INTENTS:
        raise ValidationFailed(details={"intent": [one_of(INTENTS)]})
    max_limit = setting("MAX_LIMIT", 50)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise ValidationFailed(details={"limit": [f"An integer from 1 to {max_limit}."]})


def run_channels(
    memory_pk: int,
    query: str | QueryVector | None,
    terms: Sequence[str],
    *,
    view: str,
    cap: int,
    clearance: Sequence[str],
    filters: RecallFilters | None = None,
) -> dict[str, list[Candidate]]:
    """Each channel's candidates for a search ``view`` (``memory.search.channels``), for callers
    outside the pipeline that compare against it (the evaluation's plain RRF)."""
    return channels.run(
        memory_pk,
        ChannelQuery(terms, query),
        view=SCOPES[view],
        limit=cap,
        sensitivities=clearance,
        filters=filters,
    )


def _order(
    baseline: list[Hit],
    memory: Memory,
    query: str,
    quality_on: bool,
    current_intent: bool,
    reranker: Reranker | None,
    now: datetime,
) -> list[Hit]:
    """The bounded quality reorder (when on), then the reranker; ranks recorded on each hit."""
    ordered = list(baseline)
    if quality_on:
        ordered = _reorder(ordered, current_intent=current_intent, memory=memory, now=now)
    for i, hit in enumerate(ordered, start=1):
        hit.quality_rank = i
    if reranker is not None:
        shown = list(ordered)
        ordered = list(reranker.rerank(query, shown))
        check_membership(shown, ordered)
    for i, hit in enumerate(ordered, start=1):
        hit.rank = i
    return ordered


def _quality_gate(memory: Memory, hits: Sequence[Hit]) -> tuple[bool, str]:
    """Quality ranking runs only when the policy enables it and declarations exist."""
    if memory.policy.get("quality_ranking") is not True:
        return False, "policy_off"
    if not any(h.declared for h in hits):
        return False, "no_declared_sources"
    return True, "enabled"


def _reorder(hits: list[Hit], *, current_intent: bool, memory: Memory, now: datetime) -> list[Hit]:
    fresh = FreshnessPolicy.from_policy(memory.policy)
    votes: dict[tuple[int, int], Votes] = {
        h.key: quality_votes(h.quality, current_intent=current_intent, now=now, fresh=fresh)
        for h in hits
        if h.quality is not None
    }
    by_key = {h.key: h for h in hits}
    order = quality_order(
        [h.key for h in hits], votes, [h.score for h in hits], {h.key: h.channels for h in hits}
    )
    for key, v in votes.items():
        by_key[key].rules = v.rules
    return [by_key[k] for k in order]
