"""Reciprocal rank fusion of the channels and the coarse pool size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .common import Candidate, setting

# --- Fusion ---------------------------------------------------------------------------------

RRF_CONSTANT = 60


@dataclass
class Fused:
    """One fused pool member: its plain RRF score and its rank in each channel."""

    entry_pk: int
    version_pk: int
    score: Fraction
    channels: dict[str, int]

    @property
    def key(self) -> tuple[int, int]:
        return (self.entry_pk, self.version_pk)


def rrf_fuse(
    channels: Mapping[str, Sequence[Candidate]], *, constant: int = RRF_CONSTANT
) -> list[Fused]:
    """Reciprocal rank fusion: score = Σ 1/(constant + rank), exact (fractions), ordered by
    score descending, then entry id, then version id — a total order on every backend."""
    fused: dict[tuple[int, int], Fused] = {}
    for name, candidates in channels.items():
        for c in candidates:
            item = fused.get((c.entry_pk, c.version_pk))
            if item is None:
                item = fused[(c.entry_pk, c.version_pk)] = Fused(
                    c.entry_pk, c.version_pk, Fraction(0), {}
                )
            item.score += Fraction(1, constant + c.rank)
            item.channels[name] = c.rank
    return sorted(fused.values(), key=lambda f: (-f.score, f.entry_pk, f.version_pk))


def coarse_pool_size(k: int, *, reranker: bool) -> int:
    return max(k, setting("RERANK_POOL", 30)) if reranker else k
