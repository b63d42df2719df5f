"""Quality ranking inside the fixed fusion pool: pure functions, no database (DESIGN.md §6).

Quality may nudge order, never membership. :func:`bounded_stable_reorder` permutes the already
truncated RRF pool so that no member moves more than two ranks from its baseline, ties keep the
baseline (RRF) order, and the member set is checked — in code, on every call — to be unchanged.

The signals are independent and each casts a small vote (never one multiplied score):

=====================  =====  ===========================================================
rule code              vote   when
=====================  =====  ===========================================================
``importance_high``    +1     importance ≥ 2 (decisions, constraints, corroborated updates)
``importance_low``     −1     importance 0 (uncorroborated working notes)
``evidence_direct``    +1     the head version cites verified or attested evidence
``fresh``              +1     query-gated freshness ≥ the midpoint (age ≤ half-life)
``stale``              −1     query-gated freshness ≤ the quarter point (age ≥ 2 half-lives);
                              never for protected entries (``stale_protected`` instead)
``fresh_held``,        0      a freshness vote withdrawn because it would have moved a
``stale_held``                protected entry down (see below)
=====================  =====  ===========================================================

The votes add up to a desired shift, clamped to ±2, and act only among members of comparable
relevance: the baseline is cut into *relevance tiers* — a tier ends where the plain RRF score
falls below 1/``TIER_RATIO`` (2/3) of the tier's first member's — and each tier is reordered on
its own. A member both channels ranked near the top (an RRF score about twice a one-channel
member's) is never passed by a member only one channel found because of its votes; inside a
tier (near-duplicates, hits of one channel) the votes work as before, except that no member
passes one that *dominates* it (:func:`dominators`): found by both channels and ranked more
than two places above it by every channel that found it — RRF's sum of reciprocal ranks is
flat enough that a fourth-and-seventeenth hit shares a tier with a first-and-first one. Freshness
``alpha + (1 − alpha)·2^(−age/half_life)`` applies only to ``current_state`` entries when the
query has current/temporal intent; unknown time is neutral.

*Protected* entries — pinned, critical (importance 3) or high-authority (repository/system
attested) — are never moved down by freshness: not by a ``stale`` vote of their own, and not
through a neighbour's rise or fall. :func:`quality_order` compares the order with every vote
to the order without the freshness votes and withdraws freshness votes one at a time until no
protected entry sits lower than it would without freshness.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from .models import Authority, EvidenceStrength

MAX_SHIFT = 2
#: A relevance tier ends where the RRF score falls below its first member's divided by this.
TIER_RATIO = 1.5
#: The version of the vote rules above, named in every RankingTrace. A change to a rule, a
#: vote, the tiers or the protection bumps it.
RULES_VERSION = "quality:v4"
K = TypeVar("K", bound=Hashable)

DEFAULT_ALPHA = 0.5
DEFAULT_HALF_LIFE_DAYS = 30.0

# Deterministic cues of current/temporal intent (matched on analyzer tokens / substrings).
CURRENT_CUES_WORDS = frozenset(
    {
        "current",
        "currently",
        "now",
        "today",
        "latest",
        "present",
        "presently",
        "still",
        "anymore",
        "nowadays",
        "recent",
        "recently",
        "newest",
        "active",
        "live",
    }
)
CURRENT_CUES_PHRASES = ("right now", "as of", "these days", "at the moment")
CURRENT_CUES_CJK = ("现在", "当前", "目前", "最新", "如今", "現在", "最新の", "今の", "目前的")
INTENTS = ("current", "none")


class ReorderInvariantError(AssertionError):
    """The reorder broke its contract (membership or the ±2 bound). A bug, never data."""


def dominators(ranks: Mapping[K, Mapping[str, int]]) -> dict[K, frozenset[K]]:
    """For each member, the members that *dominate* it: found by two or more channels, by
    every channel that found it, and ranked more than ``MAX_SHIFT`` places above it by each of
    those — further than the reorder itself may move anything. Its plain RRF score is then
    higher in every term, so it sits above in the baseline."""
    found: dict[K, frozenset[K]] = {}
    for b, b_ranks in ranks.items():
        above = [
            a
            for a, a_ranks in ranks.items()
            if a != b
            and len(a_ranks) >= 2
            and all(c in a_ranks and a_ranks[c] + MAX_SHIFT < r for c, r in b_ranks.items())
        ]
        if above:
            found[b] = frozenset(above)
    return found


def bounded_stable_reorder(
    baseline: Sequence[K],
    shifts: Mapping[K, int],
    above: Mapping[K, frozenset[K]] | None = None,
) -> list[K]:
    """Reorder ``baseline`` by desired ``shifts`` (positive = up), each clamped to ±2.

    Greedy and total: at position p the member at baseline p−2 is placed if still waiting (it
    may sink no further); otherwise, among waiting members with baseline index ≤ p+2, the one
    with the smallest ``index − shift`` goes; on a tie the larger shift wins (so +1 passes the
    neighbour above), then the smaller baseline index. So nobody
    moves more than two places either way, equal shifts keep RRF order, and all-zero shifts are
    the identity. A member waits while one of its ``above`` (:func:`dominators`, which sit above
    it in the baseline) is still waiting: the first waiting member never has one, and a member
    forced at its deadline has none left. The result is verified before it is returned.
    """
    above = above or {}
    n = len(baseline)
    if len(set(baseline)) != n:
        raise ValueError("baseline members must be distinct")
    want = [max(-MAX_SHIFT, min(MAX_SHIFT, int(shifts.get(m, 0)))) for m in baseline]
    at = {m: i for i, m in enumerate(baseline)}
    placed = [False] * n
    out: list[int] = []
    for p in range(n):
        forced = p - MAX_SHIFT
        if forced >= 0 and not placed[forced]:
            choice = forced
        else:
            waiting = [i for i in range(max(0, forced), min(n, p + MAX_SHIFT + 1)) if not placed[i]]
            # Dominators sit above in an RRF baseline, so the first waiting member is always
            # free; ranks that disagree with the baseline fall back to the plain window.
            window = [
                i for i in waiting if not any(not placed[at[a]] for a in above.get(baseline[i], ()))
            ] or waiting
            choice = min(window, key=lambda i: (i - want[i], -want[i], i))
        placed[choice] = True
        out.append(choice)
    result = [baseline[i] for i in out]
    check_reorder(baseline, result)
    return result


def relevance_tiers(scores: Sequence[float]) -> list[int]:
    """The lengths of the relevance tiers of a baseline whose plain RRF ``scores`` are given in
    baseline order: a tier ends before the first member whose score is below the tier's first
    member's divided by ``TIER_RATIO``. One tier holds everything when the scores are close."""
    tiers: list[int] = []
    top = 0.0
    for score in scores:
        if tiers and score * TIER_RATIO >= top:
            tiers[-1] += 1
        else:
            tiers.append(1)
            top = score
    return tiers


def check_reorder(baseline: Sequence[Any], result: Sequence[Any]) -> None:
    """Raise unless ``result`` has exactly the members of ``baseline``, each within ±2."""
    if len(result) != len(baseline) or set(result) != set(baseline):
        raise ReorderInvariantError("quality reorder changed the pool's membership")
    where = {m: i for i, m in enumerate(baseline)}
    for i, m in enumerate(result):
        if abs(where[m] - i) > MAX_SHIFT:
            raise ReorderInvariantError(f"quality reorder moved a member {where[m] - i} ranks")


# --- Signals --------------------------------------------------------------------------------


def has_current_intent(query: str, intent: str | None) -> bool:
    """Explicit ``intent="current"``, or (no explicit intent) a cue in the query text."""
    if intent is not None:
        return intent == "current"
    from .text import words

    tokens = set(words(query))
    if tokens & CURRENT_CUES_WORDS:
        return True
    folded = query.casefold()
    return any(c in folded for c in CURRENT_CUES_PHRASES) or any(
        c in query for c in CURRENT_CUES_CJK
    )


def freshness(age_days: float, *, alpha: float, half_life_days: float) -> float:
    """``alpha + (1 − alpha)·2^(−age/half_life)``; ages below zero count as zero."""
    age = max(0.0, age_days)
    return alpha + (1.0 - alpha) * math.pow(2.0, -age / half_life_days)


@dataclass(frozen=True)
class QualityInputs:
    """What the signals may look at for one pool member (no body text)."""

    importance: int
    evidence_strength: str
    provenance: Mapping[str, int]
    current_state: bool
    pinned: bool
    time_known: bool
    reference_time: datetime | None


@dataclass(frozen=True)
class FreshnessPolicy:
    alpha: float = DEFAULT_ALPHA
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS

    @classmethod
    def from_policy(cls, policy: Mapping[str, Any]) -> FreshnessPolicy:
        raw = policy.get("freshness") or {}
        alpha = float(raw.get("alpha", DEFAULT_ALPHA)) if isinstance(raw, dict) else DEFAULT_ALPHA
        half = (
            float(raw.get("half_life_days", DEFAULT_HALF_LIFE_DAYS))
            if isinstance(raw, dict)
            else DEFAULT_HALF_LIFE_DAYS
        )
        return cls(alpha=min(1.0, max(0.0, alpha)), half_life_days=max(half, 1e-6))


def quality_policy(policy: Mapping[str, Any]) -> dict[str, Any]:
    """What a RankingTrace names about the reorder: the rules' version, the bound, the tier
    ratio and the freshness parameters in force (the Memory's ``policy.freshness`` clamped as
    applied)."""
    fresh = FreshnessPolicy.from_policy(policy)
    return {
        "rules_version": RULES_VERSION,
        "max_shift": MAX_SHIFT,
        "tier_ratio": TIER_RATIO,
        "freshness": {"alpha": fresh.alpha, "half_life_days": fresh.half_life_days},
    }


@dataclass
class Votes:
    """One member's votes: ``shift`` (clamped sum), ``freshness`` (the part of the unclamped
    sum that freshness cast: +1, −1 or 0), the rule codes that fired and whether the member
    is protected from being moved down by freshness."""

    shift: int = 0
    rules: list[str] = field(default_factory=list)
    freshness: int = 0
    raw: int = 0
    protected: bool = False

    def without_freshness(self) -> int:
        """The clamped shift had freshness cast no vote."""
        return clamp(self.raw - self.freshness)


def clamp(shift: int) -> int:
    return max(-MAX_SHIFT, min(MAX_SHIFT, shift))


def high_authority(provenance: Mapping[str, int]) -> bool:
    return any(
        provenance.get(a, 0) > 0 for a in (Authority.REPOSITORY_ATTESTED, Authority.SYSTEM_ATTESTED)
    )


def is_protected(item: QualityInputs) -> bool:
    """Pinned, critical (importance 3) or high-authority: freshness never moves it down."""
    return item.pinned or item.importance >= 3 or high_authority(item.provenance)


def quality_votes(
    item: QualityInputs,
    *,
    current_intent: bool,
    now: datetime,
    fresh: FreshnessPolicy,
) -> Votes:
    """The independent votes of one member, their clamped sum and the rule codes that fired."""
    votes = Votes(protected=is_protected(item))

    def vote(value: int, rule: str) -> None:
        votes.raw += value
        votes.rules.append(rule)

    if item.importance >= 2:
        vote(+1, "importance_high")
    elif item.importance == 0:
        vote(-1, "importance_low")
    if item.evidence_strength == EvidenceStrength.DIRECT:
        vote(+1, "evidence_direct")
    if current_intent and item.current_state and item.time_known and item.reference_time:
        age_days = (now - item.reference_time).total_seconds() / 86400.0
        f = freshness(age_days, alpha=fresh.alpha, half_life_days=fresh.half_life_days)
        span = 1.0 - fresh.alpha
        if span > 0 and f >= fresh.alpha + 0.5 * span:
            vote(+1, "fresh")
            votes.freshness = +1
        elif span > 0 and f <= fresh.alpha + 0.25 * span:
            if votes.protected:
                votes.rules.append("stale_protected")
            else:
                vote(-1, "stale")
                votes.freshness = -1
    votes.shift = clamp(votes.raw)
    return votes


def quality_order(
    baseline: Sequence[K],
    votes: Mapping[K, Votes],
    scores: Sequence[float] | None = None,
    channel_ranks: Mapping[K, Mapping[str, int]] | None = None,
) -> list[K]:
    """The bounded stable reorder of ``baseline`` by ``votes`` inside each relevance tier of
    its plain RRF ``scores`` (one tier without them), with no protected member lower than in
    the order freshness did not vote on, and no member passing one that dominates it by its
    ``channel_ranks`` (:func:`dominators`). Tiers are contiguous runs of the baseline, so the
    bound and the membership hold for the whole as for each tier (checked again here).
    """
    sizes = relevance_tiers(scores) if scores is not None else [len(baseline)]
    if sum(sizes) != len(baseline):
        raise ValueError("one score per baseline member")
    order: list[K] = []
    start = 0
    for size in sizes:
        tier = baseline[start : start + size]
        above = dominators({k: channel_ranks[k] for k in tier}) if channel_ranks else {}
        order += _tier_order(tier, votes, above)
        start += size
    check_reorder(baseline, order)
    return order


def _tier_order(
    baseline: Sequence[K],
    votes: Mapping[K, Votes],
    above: Mapping[K, frozenset[K]] | None = None,
) -> list[K]:
    """The bounded stable reorder of one tier by ``votes``, with no protected member lower than
    in the order freshness did not vote on.

    While some protected member sits lower than without freshness, one freshness vote is
    withdrawn — first a ``fresh`` vote of a member that passed it, then any ``fresh`` vote
    above it, then a ``stale`` vote (a sinking neighbour can push it down too), nearest
    first; the rule becomes ``fresh_held`` / ``stale_held`` — and the order recomputed. Each
    round withdraws a vote, so it ends: at the latest with no freshness vote left, which is
    the order without freshness. Mutates the withdrawn members' ``Votes``.
    """
    plain = bounded_stable_reorder(
        baseline, {k: v.without_freshness() for k, v in votes.items()}, above
    )
    plain_at = {k: i for i, k in enumerate(plain)}
    while True:
        order = bounded_stable_reorder(baseline, {k: v.shift for k, v in votes.items()}, above)
        culprit = _freshness_culprit(order, plain_at, votes)
        if culprit is None:
            return order
        held = votes[culprit]
        code = "fresh" if held.freshness > 0 else "stale"
        held.raw -= held.freshness
        held.freshness = 0
        held.shift = clamp(held.raw)
        held.rules = [f"{code}_held" if r == code else r for r in held.rules]


def _freshness_culprit(
    order: Sequence[K], plain_at: Mapping[K, int], votes: Mapping[K, Votes]
) -> K | None:
    """The freshness vote to withdraw for the highest protected member that sits lower than
    without freshness; None when every protected member holds its place."""
    at = {k: i for i, k in enumerate(order)}
    for k in order:
        v = votes.get(k)
        if v is None or not v.protected or at[k] <= plain_at[k]:
            continue
        voters = [m for m in order if m in votes and votes[m].freshness != 0]

        def preference(m: K, k: K = k) -> tuple[bool, bool, int]:
            rose = votes[m].freshness > 0 and at[m] < at[k]
            return (not (rose and plain_at[m] > plain_at[k]), not rose, abs(at[m] - at[k]))

        if voters:
            return min(voters, key=preference)
    return None
