"""Retrieval metrics and the independent plain-RRF reference."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence, Set
from fractions import Fraction
from typing import Any


def recall_at_k(ranked: Sequence[Hashable], relevant: Set[Hashable], k: int) -> float:
    """Recall@k: the share of ``relevant`` found in the first ``k`` of ``ranked``,
    |R ∩ ranked[:k]| / |R| (1.0 when nothing is relevant)."""
    if not relevant:
        return 1.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg_at_k(ranked: Sequence[Hashable], relevant: Set[Hashable], k: int) -> float:
    """nDCG@k with binary relevance: DCG@k / IDCG@k, where

        DCG@k  = Σ_{i=1..k} rel_i / log2(i + 1)      (rel_i = 1 if ranked[i] ∈ R, else 0)
        IDCG@k = Σ_{i=1..min(k, |R|)} 1 / log2(i + 1)  (every relevant item ranked first)

    A repeated item counts once (its first position). 1.0 when nothing is relevant."""
    if not relevant:
        return 1.0
    seen: set[Hashable] = set()
    dcg = 0.0
    for i, item in enumerate(ranked[:k], start=1):
        if item in relevant and item not in seen:
            seen.add(item)
            dcg += 1.0 / math.log2(i + 1)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(relevant)) + 1))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Set[Hashable]) -> float:
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


def precision_recall_f1(
    scores: Sequence[float], positive: Sequence[bool], tau: float
) -> tuple[float, float, float]:
    """Precision, recall and F1 of the decision ``score ≥ tau`` against the labels ``positive``.

    precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2·P·R / (P + R). A threshold that
    accepts nothing has precision 1.0 (it makes no false claim); no positives gives recall 1.0.
    """
    tp = sum(1 for s, p in zip(scores, positive, strict=True) if s >= tau and p)
    fp = sum(1 for s, p in zip(scores, positive, strict=True) if s >= tau and not p)
    fn = sum(1 for s, p in zip(scores, positive, strict=True) if s < tau and p)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1
