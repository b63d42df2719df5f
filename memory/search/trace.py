"""The ranking trace: ids, ranks, counts and rule codes — never body text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..models import (
    LifecycleProjection,
    Validity,
)
from . import channels
from .channels import ChannelQuery
from .common import HEADS, Candidate, query_floor
from .filters import RecallFilters
from .hits import Hit
from .vector import QueryVector


@dataclass
class RankingTrace:
    """Why the hits are in this order. Ids, ranks, counts and rule codes — no body text."""

    view: str
    limit: int
    terms: int
    admission_floor: int
    channel_cap: int
    channels: dict[str, int]
    validity_filter: dict[str, int]
    pool_size: int
    baseline: list[dict[str, Any]]
    adjusted: list[dict[str, Any]]
    quality: dict[str, Any]
    reranker: str | None
    unresolved_conflicts: int
    membership_changed: bool = False
    #: What the vector channel's index looked at (None without a provider): ``index``
    #: (sqlite-vec, pgvector or scan), vectors ``fetched`` / ``scanned``, whether the search
    #: stopped at its bound with fewer hits than asked (``bounded``) and how often it widened.
    vector: dict[str, Any] | None = None
    #: The query's shorthand the model read spelled out (``{word: long form}``, from the
    #: built-in list and the Memory's ``policy.glossary``; empty without a model).
    spelled_out: dict[str, str] = field(default_factory=dict)
    #: The request's ``filters`` as applied in both channels (empty when none).
    filters: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResult:
    hits: list[Hit]
    trace: RankingTrace


def validity_counts(
    memory_pk: int,
    query: str | QueryVector | None,
    terms: Sequence[str],
    ranked: Mapping[str, Sequence[Candidate]],
    cap: int,
    clearance: Sequence[str],
    filters: RecallFilters | None = None,
) -> dict[str, int]:
    """How many admitted candidates the current view's validity filter removed, by validity
    (the channels run again over every head version, same floor, cap and request filters)."""
    kept = {c.entry_pk for cands in ranked.values() for c in cands}
    unfiltered = channels.run(
        memory_pk,
        ChannelQuery(terms, query),
        view=HEADS,
        limit=cap,
        sensitivities=clearance,
        filters=filters,
    )
    dropped = {c.entry_pk for cands in unfiltered.values() for c in cands} - kept
    counts = {Validity.INACTIVE.value: 0, Validity.SUPERSEDED.value: 0}
    if dropped:
        for validity in LifecycleProjection.objects.filter(entry_id__in=dropped).values_list(
            "validity", flat=True
        ):
            counts[validity] = counts.get(validity, 0) + 1
    return counts


def build_trace(
    *,
    view: str,
    limit: int,
    terms: Sequence[str],
    cap: int,
    ranked: Mapping[str, Sequence[Candidate]],
    filtered: dict[str, int],
    pool_size: int,
    baseline: Sequence[Hit],
    ordered: Sequence[Hit],
    quality: dict[str, Any],
    reranker: Any,
    vector: dict[str, Any] | None = None,
    spelled_out: dict[str, str] | None = None,
    filters: RecallFilters | None = None,
) -> RankingTrace:
    """The trace of one search: the baseline pool, the adjusted order and why."""
    return RankingTrace(
        view=view,
        limit=limit,
        terms=len(terms),
        admission_floor=query_floor(terms),
        channel_cap=cap,
        channels={name: len(c) for name, c in ranked.items()},
        validity_filter=filtered,
        pool_size=pool_size,
        baseline=[
            {
                "entry_id": h.entry_id,
                "version": h.version,
                "rank": h.baseline_rank,
                "score": h.score,
                "channels": h.channels,
            }
            for h in baseline
        ],
        adjusted=[
            {
                "entry_id": h.entry_id,
                "version": h.version,
                "baseline_rank": h.baseline_rank,
                "quality_rank": h.quality_rank,
                "rank": h.rank,
                "shift": h.baseline_rank - h.quality_rank,
                "rules": h.rules,
                "returned": h.rank <= limit,
            }
            for h in ordered
        ],
        quality=quality,
        reranker=getattr(reranker, "name", type(reranker).__name__) if reranker else None,
        unresolved_conflicts=sum(1 for h in baseline if h.validity == Validity.UNRESOLVED_CONFLICT),
        membership_changed=False,
        vector=vector,
        spelled_out=spelled_out or {},
        filters=filters.as_dict() if filters is not None else {},
    )
