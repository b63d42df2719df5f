"""The calendar periods a search names, and the reranker's preference for hits inside them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory.search.cross_encoder import CrossEncoderReranker
from memory.search.periods import Period, named_periods, within
from tests.memory.test_cross_encoder import _hit


@pytest.mark.parametrize(
    ("query", "periods"),
    [
        ("What achievement did John share with Tim in January 2024?", [Period(1, 2024)]),
        (
            "What did we decide in march 2023, and again in March?",
            [Period(3, 2023), Period(3, None)],
        ),
        ("What kind of deal did John get in December?", [Period(12, None)]),
        ("Which trips did Tim take during 2022?", [Period(None, 2022)]),
        ("Between May, 2021 and June 2021 what changed?", [Period(5, 2021), Period(6, 2021)]),
        ("What may Caroline march for?", []),  # verbs, not months
        ("What happened last week?", []),  # relative: the search does not know when it is asked
        ("Which ticket mentions 1850 or 3000?", []),  # not years this reads
        ("Who owns port 2049 in the April 2049 plan?", [Period(None, 2049), Period(4, 2049)]),
        ("What did Tim buy on January 15, 2024?", [Period(1, 2024)]),
        (
            "Where was Jon in August of 2023 and on Sept. 3rd 2022?",
            [Period(8, 2023), Period(9, 2022)],
        ),
        ("What changed in jan 2024 or Dec. 2023?", [Period(1, 2024), Period(12, 2023)]),
        ("May I ask what Mel did in June?", [Period(6, None)]),  # the first word is capitalised
        ("Did the $2000 budget or the 2000.5 figure change in 2021?", [Period(None, 2021)]),
    ],
)
def test_the_periods_a_query_names(query, periods):
    assert list(named_periods(query)) == periods


def test_a_moment_is_inside_a_month_of_a_year_or_a_year():
    moment = datetime(2024, 1, 31, 23, 59, tzinfo=UTC)
    assert within(moment, (Period(1, 2024),))
    assert within(moment, (Period(1, None),)) and within(moment, (Period(None, 2024),))
    assert not within(moment, (Period(2, 2024),)) and not within(moment, (Period(1, 2023),))
    assert not within(None, (Period(1, 2024),))
    assert not within(moment, ())


def _dated(pk: int, body: str, when: datetime | None):
    return replace(_hit(pk, body), effective_at=when)


BODY = "John: Last week was wild, a dream come true!"


def test_the_reranker_prefers_a_hit_effective_in_the_period_the_query_names():
    """Two turns say the same words; the one said in January 2024 comes first when the query
    names January 2024. Without a period the pool's order stands (ties keep it)."""
    march = _dated(1, BODY, datetime(2024, 3, 8, tzinfo=UTC))
    january = _dated(2, BODY, datetime(2024, 1, 20, tzinfo=UTC))
    undated = _dated(3, BODY, None)
    reranker = CrossEncoderReranker()
    named = reranker.rerank("What did John share in January 2024?", [march, undated, january])
    assert [h.entry_pk for h in named] == [2, 1, 3]
    plain = reranker.rerank("What did John share lately?", [march, undated, january])
    assert [h.entry_pk for h in plain] == [1, 3, 2]


def test_a_period_is_a_preference_not_a_filter():
    """A turn that answers outside the period still passes one that does not answer inside it."""
    answer = _dated(1, "Caroline: My daily commute to work takes forty minutes by train.", None)
    other = _dated(2, "Caroline: I bought new leather boots.", datetime(2023, 5, 1, tzinfo=UTC))
    ranked = CrossEncoderReranker().rerank(
        "How long is Caroline's daily commute to work in May 2023?", [other, answer]
    )
    assert ranked[0].entry_pk == 1
