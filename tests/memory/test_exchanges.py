"""Question-and-answer exchanges read by the reranker (``memory.search.exchanges``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions
from memory.actors import Actor
from memory.lexical_index import ANSWER_WORDS, QUESTION_WORDS, is_short_answer, is_short_question
from memory.search import search
from memory.search.exchanges import (
    find_exchanges,
)
from memory.search.filters import RecallFilters
from tests.factories import remember

from .conftest import RecordingReranker

pytestmark = pytest.mark.django_db

QUESTION = "Caroline: How often do you and your husband work out together?"
ANSWER = "Melanie: Three times a week; it keeps our workouts on track."
QUERY = "workouts on track"


@pytest.fixture
def me(agent):
    return agent.actor


class Reading:
    """Keeps the pool as given and remembers each hit's question (deterministic)."""

    name = "reading"
    asked: dict[str, str | None] = {}

    def rerank(self, query: str, hits):
        Reading.asked = {h.body: h.asked for h in hits}
        return list(hits)


def chat(memory, actor, turns, session="s-1", **extra):
    return [
        remember(memory, actor, body, session_id=session, dedupe=False, **extra).entry
        for body in turns
    ]


def test_a_short_question_and_a_short_answer():
    assert is_short_question("Caroline: How often do you work out?")
    assert is_short_question('She asked: "where is it?"')
    assert is_short_question("週末は何をしますか？")
    assert not is_short_question("Melanie: Three times a week.")
    assert not is_short_question("word " * QUESTION_WORDS + "why?")
    assert is_short_answer("word " * ANSWER_WORDS)
    assert not is_short_answer("word " * (ANSWER_WORDS + 1))


def test_a_pooled_answer_is_read_with_its_question(memory, me):
    chat(memory, me, [QUESTION, ANSWER])
    result = search(memory, actor=me, query=QUERY, limit=5, reranker=Reading())
    assert Reading.asked[ANSWER] == QUESTION
    assert [h.body for h in result.hits] == [ANSWER]
    # Without a reranker nothing is read.
    assert search(memory, actor=me, query=QUERY).hits[0].asked is None


def test_the_pool_keeps_its_members_an_unfound_answer_is_not_added(memory, me, recording_reranker):
    """DESIGN §6: the reranker runs over the same members. A pooled question does not bring
    its answer (which holds none of the search's words) into the pool."""
    chat(memory, me, [QUESTION, "Melanie: Three times a week."])
    chat(memory, me, ["Caroline: Do you work out at home?", "Melanie: At the gym."], session="s-2")
    plain = search(memory, actor=me, query="work out together", limit=30)
    search(memory, actor=me, query="work out together", limit=5, reranker=recording_reranker)
    assert RecordingReranker.shown == [[h.entry_id for h in plain.hits]]


def test_long_turns_other_sessions_and_plain_statements_are_read_alone(memory, me):
    chat(memory, me, [QUESTION], session="s-1")
    chat(memory, me, [ANSWER], session="s-2")  # the next entry, but another session
    long_question = "Caroline: " + "so " * QUESTION_WORDS + "how often do you work out?"
    chat(memory, me, [long_question, "Melanie: Twice a week, our workouts."], session="s-3")
    long_answer = "Melanie: " + "we " * ANSWER_WORDS + "do workouts."
    chat(memory, me, ["Caroline: How often do you lift?", long_answer], session="s-4")
    remember(memory, me, "How often do deploys run?")  # no session: not a conversation
    remember(memory, me, "Deploys run often, the workouts of the release train.")
    search(memory, actor=me, query=QUERY, limit=10, reranker=Reading())
    assert {
        ANSWER,
        "Melanie: Twice a week, our workouts.",
        long_answer,
        "Deploys run often, the workouts of the release train.",
    } <= set(Reading.asked)
    assert all(asked is None for asked in Reading.asked.values()), Reading.asked


@pytest.mark.parametrize("hidden", ["forgotten", "restricted", "filtered"])
def test_a_question_recall_may_not_return_is_never_read(memory, me, hidden):
    """The question is admitted exactly like the pool's members: not forgotten, within the
    caller's clearance, inside the request's filters."""
    extra = {"sensitivity": "restricted"} if hidden == "restricted" else {}
    writer = Actor.system() if hidden == "restricted" else me
    kind = {"kind": "preference"} if hidden == "filtered" else {}
    question = chat(memory, writer, [QUESTION], **extra, **kind)[0]
    chat(memory, me, [ANSWER])
    if hidden == "forgotten":
        actions.forget_entry(memory, actor=me, entry_uid=question.uid, reason="wrong")
    filters = RecallFilters(kinds=("fact",)) if hidden == "filtered" else None
    result = search(memory, actor=me, query=QUERY, limit=5, reranker=Reading(), filters=filters)
    assert [h.body for h in result.hits] == [ANSWER]
    assert Reading.asked == {ANSWER: None}


def test_the_exchanges_cost_two_queries_and_none_without_a_session(memory, me):
    chat(memory, me, [QUESTION, ANSWER])
    pool = search(memory, actor=me, query=QUERY).hits
    assert [h.body for h in pool] == [ANSWER]
    with CaptureQueriesContext(connection) as read:
        found = find_exchanges(memory.pk, pool, scope="current", sensitivities=None, filters=None)
    assert len(read) == 2
    assert found == {pool[0].key: QUESTION}
    for hit in pool:
        hit.session_id = None
    with CaptureQueriesContext(connection) as read:
        assert (
            find_exchanges(memory.pk, pool, scope="current", sensitivities=None, filters=None) == {}
        )
    assert len(read) == 0
