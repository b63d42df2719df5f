"""Retrieval metrics and the independent plain-RRF reference."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any


def recall_at(ranked: Sequence[Hashable], relevant: set[Hashable], k: int) -> float:
    """Share of ``relevant`` found in the first ``k`` of ``ranked``."""
    if not relevant:
        return 1.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def reciprocal_rank(ranked: Sequence[Hashable], relevant: set[Hashable]) -> float:
    """1 / rank of the first relevant item (0 when none is ranked)."""
    for i, item in enumerate(ranked, start=1):
        if item in relevant:
            return 1.0 / i
    return 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def plain_rrf(channels: Mapping[str, Sequence[Any]], constant: int = 60) -> list[tuple[int, int]]:
    """Reciprocal rank fusion written out here, independently of the search code: each
    candidate ``(entry_pk, version_pk, rank)`` scores Σ 1/(constant + rank); order by score
    descending, then entry, then version."""
    scores: dict[tuple[int, int], Fraction] = {}
    for candidates in channels.values():
        for c in candidates:
            key = (c.entry_pk, c.version_pk)
            scores[key] = scores.get(key, Fraction(0)) + Fraction(1, constant + c.rank)
    return sorted(scores, key=lambda key: (-scores[key], key[0], key[1]))
