"""Question-and-answer exchanges read by the reranker (``memory.search.exchanges``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions
from memory.actors import Actor
from memory.search import search
from memory.search.exchanges import (
    ANSWER_WORDS,
    QUESTION_WORDS,
    find_exchanges,
    is_short_answer,
    is_short_question,
)
from memory.search.filters import RecallFilters
from memory.search.hits import Hit
from tests.factories import remember

from .conftest import RecordingReranker

pytestmark = pytest.mark.django_db

QUESTION = "Caroline: How often do you and your husband work out together?"
ANSWER = "Melanie: Three times a week; it keeps us on track."


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


def test_a_pooled_question_brings_its_answer_read_with_it(memory, me):
    """The answer holds none of the search's words: only the question is found, and its answer
    joins the reranker's pool, read after the question."""
    question, answer, _ = chat(memory, me, [QUESTION, ANSWER, "Caroline: Nice, see you soon!"])
    result = search(
        memory, actor=me, query="how often do they work out together", limit=5, reranker=Reading()
    )
    assert Reading.asked == {QUESTION: None, ANSWER: QUESTION}
    found = [h.entry_id for h in result.hits]
    assert found == [question.uid, answer.uid]
    assert result.hits[1].channels == {}
    # Without a reranker the pool is the channels' alone.
    assert [h.entry_id for h in search(memory, actor=me, query="work out together").hits] == [
        question.uid
    ]


def test_a_pooled_answer_learns_its_question(memory, me):
    chat(memory, me, [QUESTION, "Melanie: Three times a week, the workouts keep us on track."])
    search(memory, actor=me, query="workouts on track", limit=5, reranker=Reading())
    assert Reading.asked["Melanie: Three times a week, the workouts keep us on track."] == QUESTION


def test_long_turns_other_sessions_and_plain_statements_are_read_alone(memory, me):
    chat(memory, me, [QUESTION], session="s-1")
    chat(memory, me, [ANSWER], session="s-2")  # the next entry, but another session
    long_question = "Caroline: " + "so " * QUESTION_WORDS + "how often do you work out?"
    chat(memory, me, [long_question, "Melanie: Twice a week, we work out."], session="s-3")
    long_answer = "Melanie: " + "we " * ANSWER_WORDS + "work out."
    chat(memory, me, ["Caroline: How often do you lift?", long_answer], session="s-4")
    remember(memory, me, "How often do deploys run?")  # no session: not a conversation
    remember(memory, me, "Deploys run every Tuesday.")
    search(memory, actor=me, query="how often do you work out", limit=10, reranker=Reading())
    assert ANSWER not in Reading.asked  # another session's turn is not an answer
    assert "How often do deploys run?" in Reading.asked
    assert "Deploys run every Tuesday." not in Reading.asked
    assert {"Melanie: Twice a week, we work out.", long_answer} <= set(Reading.asked)
    assert all(asked is None for asked in Reading.asked.values()), Reading.asked


@pytest.mark.parametrize("hidden", ["forgotten", "restricted", "filtered"])
def test_an_answer_recall_may_not_return_never_joins_the_pool(memory, me, hidden):
    """The answer is admitted exactly like the pool's members: not forgotten, within the
    caller's clearance, inside the request's filters."""
    question = chat(memory, me, [QUESTION])[0]
    extra = {"sensitivity": "restricted"} if hidden == "restricted" else {}
    writer = Actor.system() if hidden == "restricted" else me
    answer = chat(memory, writer, [ANSWER], **extra)[0]
    if hidden == "forgotten":
        actions.forget_entry(memory, actor=me, entry_uid=answer.uid, reason="wrong")
    filters = RecallFilters(kinds=("fact",)) if hidden == "filtered" else None
    if hidden == "filtered":
        actions.forget_entry(memory, actor=me, entry_uid=answer.uid, reason="rewrite")
        answer = chat(memory, me, [ANSWER], kind="preference")[0]
    result = search(
        memory,
        actor=me,
        query="how often work out together",
        limit=5,
        reranker=Reading(),
        filters=filters,
    )
    assert [h.entry_id for h in result.hits] == [question.uid]
    assert ANSWER not in Reading.asked


def test_the_exchanges_cost_two_queries_and_none_without_a_session(memory, me):
    chat(memory, me, [QUESTION, ANSWER])
    pool = [
        Hit(
            entry_pk=h.entry_pk,
            version_pk=h.version_pk,
            entry_id="",
            version=1,
            body=h.body,
            score=0.0,
            channels={},
            validity="current",
            validity_reason="",
            successor_entry=None,
            time_known=True,
            recorded_at=None,
            effective_at=None,
            is_head=True,
            state="active",
            current_state=False,
            session_id=h.session_id,
        )
        for h in search(memory, actor=me, query="work out together").hits
    ]
    with CaptureQueriesContext(connection) as read:
        found = find_exchanges(memory.pk, pool, scope="current", sensitivities=None, filters=None)
    assert len(read) == 2
    assert [f.entry_pk for f in found.answers] and list(found.asked.values()) == [QUESTION]
    for hit in pool:
        hit.session_id = None
    with CaptureQueriesContext(connection) as read:
        assert (
            find_exchanges(
                memory.pk, pool, scope="current", sensitivities=None, filters=None
            ).answers
            == []
        )
    assert len(read) == 0


def test_a_reranker_is_shown_the_answers_and_may_only_permute_them(memory, me, recording_reranker):
    question, answer = chat(memory, me, [QUESTION, ANSWER])
    result = search(
        memory, actor=me, query="work out together", limit=5, reranker=recording_reranker
    )
    assert RecordingReranker.shown == [[question.uid, answer.uid]]
    assert [h.entry_id for h in result.hits] == [answer.uid, question.uid]
    assert [h.rank for h in result.hits] == [1, 2]
