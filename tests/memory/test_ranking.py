"""The bounded stable reorder and the quality signals (pure functions; hypothesis)."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.ranking import (
    FreshnessPolicy,
    QualityInputs,
    ReorderInvariantError,
    bounded_stable_reorder,
    check_reorder,
    dominators,
    freshness,
    has_current_intent,
    quality_order,
    quality_policy,
    quality_votes,
    relevance_tiers,
)
from memory.text import searchable_text, tokenize

pools = st.lists(st.integers(min_value=0, max_value=10_000), unique=True, max_size=40)


@st.composite
def pool_and_shifts(draw):
    pool = draw(pools)
    shifts = {m: draw(st.integers(min_value=-5, max_value=5)) for m in pool}
    return pool, shifts


@given(pool_and_shifts())
def test_reorder_never_moves_a_member_more_than_two_ranks(case):
    pool, shifts = case
    out = bounded_stable_reorder(pool, shifts)
    where = {m: i for i, m in enumerate(pool)}
    assert all(abs(where[m] - i) <= 2 for i, m in enumerate(out))


@given(pool_and_shifts())
def test_reorder_never_changes_membership(case):
    pool, shifts = case
    out = bounded_stable_reorder(pool, shifts)
    assert sorted(out) == sorted(pool) and len(out) == len(pool)


@given(pools, st.integers(min_value=-2, max_value=2))
def test_reorder_is_the_identity_when_all_shifts_are_equal(pool, shift):
    assert bounded_stable_reorder(pool, {m: shift for m in pool}) == pool
    assert bounded_stable_reorder(pool, {}) == pool


@given(pool_and_shifts())
def test_reorder_is_stable_members_with_equal_shift_keep_rrf_order(case):
    pool, shifts = case
    out = bounded_stable_reorder(pool, shifts)
    where = {m: i for i, m in enumerate(out)}
    clamp = {m: max(-2, min(2, shifts[m])) for m in pool}
    for i, a in enumerate(pool):
        for b in pool[i + 1 : i + 3]:
            if clamp[a] == clamp[b]:
                assert where[a] < where[b]


def test_reorder_examples():
    assert bounded_stable_reorder(list("ABCDEF"), {"C": 1}) == list("ACBDEF")
    assert bounded_stable_reorder(list("ABCDEF"), {"F": 2}) == list("ABCFDE")
    assert bounded_stable_reorder(list("ABCDEF"), {"F": 9}) == list("ABCFDE")
    assert bounded_stable_reorder(list("ABCDEF"), {"A": -2}) == list("BCADEF")
    # Four members all wanting to pass A: A sinks two places, no more.
    assert bounded_stable_reorder(list("ABCDE"), {"B": 2, "C": 2, "D": 2, "E": 2}) == list("BCADE")


def test_membership_is_checked_in_code_not_only_in_tests():
    with pytest.raises(ReorderInvariantError):
        check_reorder([1, 2, 3], [1, 2, 4])
    with pytest.raises(ReorderInvariantError):
        check_reorder([1, 2, 3, 4], [4, 1, 2, 3])
    with pytest.raises(ValueError):
        bounded_stable_reorder([1, 1], {})


@given(st.text(max_size=60))
def test_analyzer_is_idempotent_under_nfc(text):
    nfc = unicodedata.normalize("NFC", text)
    nfd = unicodedata.normalize("NFD", text)
    assert tokenize(nfc) == tokenize(text) == tokenize(nfd)
    # The indexed stream is exactly the token list (CJK bigrams included), whatever the form.
    assert searchable_text(text).split() == tokenize(text)
    assert searchable_text(nfd) == searchable_text(nfc)


def test_freshness_formula():
    assert freshness(0, alpha=0.5, half_life_days=30) == 1.0
    assert freshness(30, alpha=0.5, half_life_days=30) == pytest.approx(0.75)
    assert freshness(60, alpha=0.5, half_life_days=30) == pytest.approx(0.625)
    assert freshness(-5, alpha=0.5, half_life_days=30) == 1.0


NOW = datetime(2026, 1, 31, tzinfo=UTC)


def inputs(**kw):
    base = dict(
        importance=1,
        evidence_strength="weak",
        provenance={},
        current_state=True,
        pinned=False,
        time_known=True,
        reference_time=NOW - timedelta(days=100),
    )
    base.update(kw)
    return QualityInputs(**base)  # type: ignore[arg-type]


def votes(item, intent=True):
    return quality_votes(item, current_intent=intent, now=NOW, fresh=FreshnessPolicy())


def test_unknown_time_is_neutral():
    assert votes(inputs(time_known=False, reference_time=None)).rules == []


def test_freshness_never_lowers_pinned_critical_or_high_authority_entries():
    assert votes(inputs()).rules == ["stale"]
    assert votes(inputs(pinned=True)).rules == ["stale_protected"]
    assert votes(inputs(importance=3)).rules == ["importance_high", "stale_protected"]
    assert votes(inputs(provenance={"system_attested": 1})).shift == 0


def test_freshness_needs_intent_and_current_state():
    assert votes(inputs(), intent=False).rules == []
    assert votes(inputs(current_state=False)).rules == []
    assert votes(inputs(reference_time=NOW - timedelta(days=1))).rules == ["fresh"]


def test_votes_are_independent_and_clamped():
    v = votes(inputs(importance=2, evidence_strength="direct", reference_time=NOW))
    assert v.rules == ["importance_high", "evidence_direct", "fresh"]
    assert v.shift == 2


def test_current_intent_cues():
    assert has_current_intent("What is the current deploy target?", None)
    assert has_current_intent("which region do we deploy to right now", None)
    assert has_current_intent("现在的部署目标是什么", None)
    assert not has_current_intent("Why did we pick eu-2?", None)
    assert not has_current_intent("current deploy target", "none")
    assert has_current_intent("deploy target", "current")


def test_a_neighbours_fresh_rise_never_moves_a_critical_entry_down():
    """The measured case: a fresh important note passed a critical stale one
    (``["fresh_low", "critical_stale"]``). Freshness may not do that, even indirectly."""
    critical_stale = votes(inputs(importance=3))
    fresh_note = votes(inputs(importance=2, reference_time=NOW - timedelta(days=1)))
    assert (critical_stale.shift, fresh_note.shift) == (1, 2)
    table = {"critical_stale": critical_stale, "fresh_low": fresh_note}
    # Plain shifts would let the fresh note pass (this is what the protection prevents).
    unprotected = bounded_stable_reorder(
        ["critical_stale", "fresh_low"], {k: v.shift for k, v in table.items()}
    )
    assert unprotected == ["fresh_low", "critical_stale"]
    assert quality_order(["critical_stale", "fresh_low"], table) == ["critical_stale", "fresh_low"]
    assert fresh_note.rules == ["importance_high", "fresh_held"]
    assert fresh_note.shift == 1
    assert critical_stale.rules == ["importance_high", "stale_protected"]


def test_a_fresh_rise_past_unprotected_members_is_kept():
    stale_plain = votes(inputs())
    fresh_note = votes(inputs(importance=2, reference_time=NOW - timedelta(days=1)))
    table = {"old": stale_plain, "new": fresh_note}
    assert quality_order(["old", "new"], table) == ["new", "old"]
    assert fresh_note.rules == ["importance_high", "fresh"]


member_inputs = st.builds(
    inputs,
    importance=st.integers(min_value=0, max_value=3),
    evidence_strength=st.sampled_from(["weak", "direct"]),
    provenance=st.sampled_from([{}, {"repository_attested": 1}]),
    current_state=st.booleans(),
    pinned=st.booleans(),
    time_known=st.booleans(),
    reference_time=st.sampled_from([NOW - timedelta(days=d) for d in (0, 1, 20, 45, 90, 400)]),
)


@given(st.lists(member_inputs, max_size=30))
def test_freshness_never_lowers_a_protected_member_below_its_place_without_freshness(items):
    pool = list(range(len(items)))
    table = {i: votes(item) for i, item in enumerate(items)}
    plain = bounded_stable_reorder(pool, {k: v.without_freshness() for k, v in table.items()})
    out = quality_order(pool, table)
    check_reorder(pool, out)
    for k, v in table.items():
        if v.protected:
            assert out.index(k) <= plain.index(k)


def test_the_policy_named_in_the_trace_is_the_one_applied():
    assert quality_policy({"freshness": {"alpha": 2, "half_life_days": 7}}) == {
        "rules_version": "quality:v4",
        "max_shift": 2,
        "tier_ratio": 1.5,
        "freshness": {"alpha": 1.0, "half_life_days": 7.0},
    }
    assert quality_policy({})["freshness"] == {"alpha": 0.5, "half_life_days": 30.0}


# --- Relevance tiers ---------------------------------------------------------------------------

#: Plain RRF scores (k = 60): ranked first by both channels, then by one channel only.
BOTH_FIRST = 1 / 61 + 1 / 61
ONE_SECOND, ONE_THIRD = 1 / 62, 1 / 63


def test_a_tier_ends_where_the_score_falls_below_two_thirds_of_its_first():
    assert relevance_tiers([]) == []
    assert relevance_tiers([BOTH_FIRST, ONE_SECOND, ONE_THIRD]) == [1, 2]
    # Hits of one channel (1/61 … 1/90) are one tier; so are near-equal two-channel hits.
    assert relevance_tiers([1 / (60 + r) for r in range(1, 31)]) == [30]
    assert relevance_tiers([2 / 61, 1 / 61 + 1 / 63, 2 / 64]) == [3]
    assert relevance_tiers([0.3, 0.2, 0.19, 0.13]) == [2, 2]  # 0.2·1.5 = 0.3 stays in


def test_votes_never_lift_a_one_channel_hit_over_one_both_channels_ranked_first():
    """The demo's case: "The staging database is db-stage-3." (first in both channels, an
    uncited fact) sank below two cited decisions only the vector channel found."""
    answer = votes(inputs(importance=1))
    cited = {k: votes(inputs(importance=2, evidence_strength="direct")) for k in ("b", "c")}
    table = {"answer": answer, **cited}
    pool = ["answer", "b", "c"]
    assert quality_order(pool, table) == ["b", "c", "answer"]  # without tiers: down 2
    assert quality_order(pool, table, [BOTH_FIRST, ONE_SECOND, ONE_THIRD]) == pool
    # Inside a tier the votes act as before: three hits of one channel.
    assert quality_order(pool, table, [1 / 61, ONE_SECOND, ONE_THIRD]) == ["b", "c", "answer"]


@given(st.lists(st.tuples(member_inputs, st.integers(min_value=1, max_value=60)), max_size=30))
def test_tiers_keep_membership_the_bound_and_their_own_order(members):
    ranked = sorted(members, key=lambda m: -1 / m[1])
    scores = [1 / (60 + r) + (1 / 61 if r % 3 == 0 else 0) for _, r in ranked]
    pool = sorted(range(len(ranked)), key=lambda i: -scores[i])
    scores = [scores[i] for i in pool]
    table = {i: votes(ranked[i][0]) for i in pool}
    out = quality_order(pool, table, scores)
    check_reorder(pool, out)
    # Nobody crosses a tier boundary.
    where = {m: i for i, m in enumerate(out)}
    start = 0
    for size in relevance_tiers(scores):
        assert sorted(where[m] for m in pool[start : start + size]) == list(
            range(start, start + size)
        )
        start += size


def test_votes_never_lift_a_hit_over_one_both_channels_ranked_far_above_it():
    """The demo's case: "who is on call this week". Two on-call notes first and second in both
    channels; a cited note on HTTP timeouts, fourth by words and seventeenth by meaning, is in
    their relevance tier (RRF 0.0286 against 0.0328) and its two votes lifted it to first.
    The first note is more than the reorder's two places above it in both channels: it stays
    below that one. The second note is only two places above it by words: it may pass that
    one, as before."""
    table = {
        "on-call": votes(inputs(importance=1)),
        "on-call-2": votes(inputs(importance=1)),
        "timeout": votes(inputs(importance=2, evidence_strength="direct")),
    }
    pool = ["on-call", "on-call-2", "timeout"]
    scores = [2 / 61, 2 / 62, 1 / 64 + 1 / 77]
    assert relevance_tiers(scores) == [3]
    top = {"on-call": {"lexical": 1, "vector": 1}, "on-call-2": {"lexical": 2, "vector": 2}}
    demo = {**top, "timeout": {"lexical": 4, "vector": 17}}
    assert quality_order(pool, table, scores) == ["timeout", "on-call", "on-call-2"]
    assert quality_order(pool, table, scores, demo) == ["on-call", "timeout", "on-call-2"]
    further = {**top, "timeout": {"lexical": 5, "vector": 17}}
    assert quality_order(pool, table, scores, further) == pool
    # One channel's hits never dominate one another: the votes act as before.
    single = {k: {"vector": i} for i, k in enumerate(pool, start=1)}
    assert quality_order(pool, table, [1 / 61, 1 / 62, 1 / 63], single)[0] == "timeout"


def test_a_dominator_needs_two_channels_and_every_channel_of_the_other_far_below():
    assert dominators({"a": {"lexical": 1, "vector": 1}, "b": {"vector": 4}}) == {
        "b": frozenset({"a"})
    }
    assert dominators({"a": {"lexical": 1, "vector": 1}, "b": {"lexical": 3, "vector": 9}}) == {}
    assert dominators({"a": {"vector": 1}, "b": {"vector": 9}}) == {}
    # b found by words too, where a is not: no dominance.
    assert dominators({"a": {"vector": 1, "other": 1}, "b": {"vector": 9, "lexical": 1}}) == {}


@given(
    st.lists(
        st.tuples(
            member_inputs,
            st.integers(min_value=1, max_value=40),
            st.one_of(st.none(), st.integers(min_value=1, max_value=40)),
        ),
        max_size=25,
    )
)
def test_no_member_passes_one_that_dominates_it(members):
    ranks = {
        i: {"lexical": lex, **({"vector": vec} if vec is not None else {})}
        for i, (_, lex, vec) in enumerate(members)
    }
    score = {i: sum(1 / (60 + r) for r in ranks[i].values()) for i in ranks}
    pool = sorted(ranks, key=lambda i: (-score[i], i))
    table = {i: votes(members[i][0]) for i in pool}
    out = quality_order(pool, table, [score[i] for i in pool], ranks)
    check_reorder(pool, out)
    where = {m: i for i, m in enumerate(out)}
    for b, above in dominators(ranks).items():
        assert all(where[a] < where[b] for a in above), (b, above)


def test_channel_ranks_that_disagree_with_the_baseline_still_give_a_bounded_reorder():
    """Dominators sit above in an RRF baseline; with ranks that say otherwise (not a baseline
    the pipeline makes) a position whose every waiting member is dominated takes the plain
    choice rather than fail, and the bound and the membership hold."""
    pool = ["A", "B", "C", "D"]
    ranks = {
        "A": {"lexical": 9},
        "B": {"lexical": 8},
        "C": {"lexical": 7},
        "D": {"lexical": 1, "vector": 1},
    }
    out = quality_order(pool, {}, None, ranks)
    check_reorder(pool, out)
    assert out == ["A", "D", "B", "C"]  # D as high as its bound allows once A had to go
