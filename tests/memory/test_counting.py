"""Questions that ask how many: the reranker spreads its order over sessions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.search import search
from memory.search.counting import asks_to_count, spread_by_session
from memory.search.cross_encoder import CrossEncoderReranker
from tests.factories import remember
from tests.memory.test_cross_encoder import _hit


@pytest.mark.parametrize(
    ("query", "counts"),
    [
        ("How many projects have I led or am currently leading?", True),
        ("So how  many days passed between the two visits?", True),
        ("HOW MANY model kits did I buy", True),
        ("What schools did John play in and how many years was he there?", True),
        ("How much did the bike cost?", False),
        ("Which projects have I led?", False),
        ("somehow many people came", False),
    ],
)
def test_a_query_asks_to_count(query, counts):
    assert asks_to_count(query) is counts


def test_each_hit_of_a_session_already_placed_costs_its_share():
    # Session a holds the two best scores; b's hit is 0.5 below the second, so it passes it
    # once a's first hit is placed; a hit without a session is never moved down.
    scores = [5.0, 4.0, 3.5, 3.9, 3.0]
    sessions = ["a", "a", "b", None, ""]
    assert spread_by_session(scores, sessions, 1.0) == [0, 3, 2, 1, 4]
    assert spread_by_session(scores, sessions, 0.0) == [0, 1, 3, 2, 4]
    # Ties keep the pool's order.
    assert spread_by_session([1.0, 1.0, 1.0], ["a", "b", "c"], 1.0) == [0, 1, 2]
    assert spread_by_session([], [], 1.0) == []


@pytest.mark.parametrize("none", [(None, None), ("", ""), (None, "")])
def test_hits_without_a_session_never_count_against_each_other(none):
    # Two sessionless hits first: the second is not moved below session a's first hit, as it
    # would be if "no session" counted as one session.
    scores = [5.0, 4.5, 4.4, 4.0]
    assert spread_by_session(scores, [*none, "a", "a"], 1.0) == [0, 1, 2, 3]


def test_a_session_is_needed_for_every_score():
    with pytest.raises(ValueError):
        spread_by_session([1.0, 2.0], ["a"], 1.0)


LED = "I have led two projects: the website redesign and the mobile app launch."
OTHER = "I enjoyed baking bread with my sister this weekend."


def test_a_counting_question_reads_a_second_session_before_a_sessions_weaker_turns():
    """Two turns of session a and one of session b; a's second turn and b's say the same words,
    so they tie and the pool's order puts a's first. Asked how many, b's turn passes a's
    second; asked anything else, the model's order stands."""
    first = replace(_hit(1, LED), session_id="a")
    second = replace(_hit(2, OTHER), session_id="a")
    other_session = replace(_hit(3, OTHER), session_id="b")
    pool = [first, second, other_session]
    reranker = CrossEncoderReranker()
    counted = reranker.rerank("How many projects have I led?", pool)
    assert [h.entry_pk for h in counted] == [1, 3, 2]
    plain = reranker.rerank("Which projects have I led?", pool)
    assert [h.entry_pk for h in plain] == [1, 2, 3]


@pytest.mark.django_db
def test_a_search_hands_the_reranker_each_turns_session(memory, agent):
    """What the spread stands on, through ``search()``: the pool the reranker receives carries
    the session each turn was written in (without it every hit would count as sessionless and
    nothing would move). The order itself is pinned by the test above."""
    remember(memory, agent.actor, "I led the website redesign project.", session_id="day-1")
    remember(memory, agent.actor, "I also led the mobile app project.", session_id="day-1")
    remember(memory, agent.actor, "I led the data migration project too.", session_id="day-2")
    remember(memory, agent.actor, "Which project have you led?")
    seen: list[str | None] = []

    class Recording(CrossEncoderReranker):
        def rerank(self, query, hits):
            seen.extend(hit.session_id for hit in hits)
            return super().rerank(query, hits)

    result = search(memory, actor=agent.actor, query=QUESTION, limit=4, reranker=Recording())
    assert sorted(s or "" for s in seen) == ["", "day-1", "day-1", "day-2"]
    assert {h.session_id or "" for h in result.hits} == {"", "day-1", "day-2"}


QUESTION = "How many projects have I led?"
