"""Current-state recall: channels, validity before fusion, RRF, the coarse pool (DESIGN.md §6).

Pipeline for query q and limit k (constants are seeds in ``settings.STEWARD_SEARCH``)::

    lexical channel ─┐  each: at most max(4k, 32) candidates after its admission floor,
    vector channel  ─┤  authorization (Memory scope, clearance) and the validity filter of
                     │  the requested view applied *inside* the channel query
      → RRF (60): Σ 1/(60 + rank), ties by entry id then version id; truncate to the coarse
        pool (k, or max(k, 30) with a reranker)
      → bounded stable quality reorder (memory.ranking), only when the Memory's policy enables
        it and the pool's evidence carries source declarations
      → optional reranker over the same members (membership verified)
      → final limit k, never padded

Views: ``current`` drops inactive and superseded entries (unresolved conflicts stay, labelled);
``history`` searches every version of every entry and labels each hit (``replaced`` for
versions that are no longer the head).

Lexical channel
    FTS5 on SQLite, a GIN-indexed tsvector on PostgreSQL, both over the analyzer's tokens in
    ``EntryVersion.searchable_text`` (migration 0005). The full-text index only *finds* rows
    containing at least one query term; the admission floor and the order are computed with the
    same definitions on both backends (exact distinct-term counts, a portable ORDER BY), so
    SQLite and PostgreSQL return the same candidates in the same order:

    - admission floor: a query of n ≤ 2 distinct terms needs 1 matching term, a longer one
      max(2, ⌈0.25·n⌉);
    - order: more distinct matching terms first, then shorter texts (fewer tokens), then entry
      id, then version id — a total order.

Vector channel
    Only with an embedding provider (memory.embeddings). Cosine ≥ 0.3 admits. Vectors are a
    derived projection keyed by content hash; the scan is bounded (``VECTOR_MAX_SCAN``).

Scoped recall
    ``filters`` (session, kind, tier, effective time range, source; :mod:`.filters`) narrow
    each channel's rows inside its query, like the validity filter, so what they leave out
    never takes a place in fusion.

Ordinary search never writes. The :class:`RankingTrace` holds ids, ranks, rule codes and
counts — never body text — and is handed only to reviewers, auditors and staff.
"""

from .channels import CHANNEL_NAMES as CHANNELS
from .channels import Channel, ChannelQuery
from .common import (
    ACTIVE,
    CURRENT,
    HEADS,
    HISTORY,
    MAX_TERM_BYTES,
    Candidate,
    admission_floor,
    channel_cap,
    content_terms,
    query_floor,
    query_terms,
    setting,
)
from .filters import FILTER_KEYS, RecallFilters
from .fusion import RRF_CONSTANT, Fused, coarse_pool_size, rrf_fuse
from .hits import (
    CONFIGURED,
    REPLACED,
    Configured,
    Hit,
    Reranker,
    check_membership,
    configured_reranker,
)
from .lexical import lexical_candidates, lexical_channel
from .pipeline import VIEWS, search
from .trace import RankingTrace, SearchResult
from .vector import vector_channel

__all__ = [
    "ACTIVE",
    "CHANNELS",
    "CONFIGURED",
    "CURRENT",
    "FILTER_KEYS",
    "HEADS",
    "HISTORY",
    "MAX_TERM_BYTES",
    "REPLACED",
    "RRF_CONSTANT",
    "VIEWS",
    "Candidate",
    "Channel",
    "ChannelQuery",
    "Configured",
    "Fused",
    "Hit",
    "RankingTrace",
    "RecallFilters",
    "Reranker",
    "SearchResult",
    "admission_floor",
    "channel_cap",
    "check_membership",
    "coarse_pool_size",
    "configured_reranker",
    "content_terms",
    "lexical_candidates",
    "lexical_channel",
    "query_floor",
    "query_terms",
    "rrf_fuse",
    "search",
    "setting",
    "vector_channel",
]
