"""Reciprocal rank fusion of the channels and the coarse pool size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .common import Candidate, setting

# --- Fusion ---------------------------------------------------------------------------------

RRF_CONSTANT = 60
CHANNELS = ("lexical", "vector")


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
    channels: Mapping[str, Sequence[Candidate]],
    *,
    constant: int = RRF_CONSTANT,
    weak_after: int = 0,
) -> list[Fused]:
    """Reciprocal rank fusion: score = Σ 1/(constant + rank), exact (fractions), ordered by
    score descending, then entry id, then version id — a total order on every backend.

    A weak candidate (``Candidate.weak``: a lexical match on fewer than half the question's
    content words, marked when the vector channel reads the question too) adds nothing where
    another channel ranked the same version: that channel's rank speaks for its meaning, and
    one incidental shared word would otherwise lift it above the other channel's first (a
    text in two channels outscores any text in one). Where no other channel ranked it — say a
    question naming a team's own word the model cannot read — it counts as if ranked
    ``weak_after`` places lower (the search passes its channel cap, so after everything the
    channel could return): still found, below what either channel ranked on its merits.
    Its rank in the channel is recorded either way.
    """
    elsewhere = {
        name: {(c.entry_pk, c.version_pk) for c in candidates}
        for name, candidates in channels.items()
    }
    fused: dict[tuple[int, int], Fused] = {}
    for name, candidates in channels.items():
        for c in candidates:
            key = (c.entry_pk, c.version_pk)
            item = fused.get(key)
            if item is None:
                item = fused[key] = Fused(c.entry_pk, c.version_pk, Fraction(0), {})
            item.channels[name] = c.rank
            if c.weak and any(key in keys for other, keys in elsewhere.items() if other != name):
                continue
            # Weak and nobody else's: counted after everything the channel could return.
            rank = c.rank + weak_after if c.weak else c.rank
            item.score += Fraction(1, constant + rank)
    return sorted(fused.values(), key=lambda f: (-f.score, f.entry_pk, f.version_pk))


def coarse_pool_size(k: int, *, reranker: bool) -> int:
    return max(k, setting("RERANK_POOL", 30)) if reranker else k
