"""The lexical channel ranks by term rarity (BM25), and a short turn is found by the turn it
answers: on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import pytest

from memory.lexical_index import collection, own_tokens
from memory.models import EntryVersion, LexicalCorpus, TermStat
from memory.search import ACTIVE, lexical_channel, query_terms, search
from memory.search.reindex import recount_terms
from tests.factories import remember

pytestmark = pytest.mark.django_db


@pytest.fixture
def me(agent):
    return agent.actor


def _ranked(memory, query, limit=10):
    return [
        c.entry_pk for c in lexical_channel(memory.pk, query_terms(query), view=ACTIVE, limit=limit)
    ]


def test_a_rare_word_outranks_several_common_ones(memory, me):
    """ "How long is my daily commute to work?": the turn holding the rare word "commute" comes
    first, not the long one holding the common "long", "daily" and "work"."""
    for i in range(12):
        remember(memory, me, f"I work long hours on the daily report number {i}.")
    boots = remember(memory, me, "My leather boots took a long time to break in for daily work.")
    commute = remember(memory, me, "My daily commute takes 45 minutes each way.")
    ranked = _ranked(memory, "How long is my daily commute to work?")
    assert ranked[0] == commute.entry.pk, ranked
    assert ranked.index(boots.entry.pk) > 0


def test_a_short_reply_is_found_by_the_question_it_answers(memory, me):
    remember(memory, me, "Mel: How long have you and your husband been married?", session_id="s1")
    reply = remember(memory, me, "Caroline: 5 years already!", session_id="s1")
    remember(memory, me, "Mel: My husband likes hiking.", session_id="s2")
    ranked = _ranked(memory, "How long have Caroline and her husband been married?")
    assert reply.entry.pk in ranked
    # The body stays exact; the context is indexed after the turn's own tokens.
    version = EntryVersion.objects.get(entry=reply.entry)
    assert version.body == "Caroline: 5 years already!"
    assert own_tokens(version.searchable_text, version.term_count) == [
        "carolin",
        "5",
        "year",
        "alreadi",
    ]
    assert "marri" in version.searchable_text.split()[version.term_count :]


def test_a_long_turn_is_indexed_with_its_own_words_only(memory, me):
    """After a statement, a turn longer than ``SHORT_TURN_TOKENS`` stands on its own words; so
    does an answer longer than ``ANSWER_WORDS`` after a question, and any turn after a question
    longer than ``QUESTION_WORDS``."""
    from memory.lexical_index import ANSWER_WORDS, QUESTION_WORDS

    remember(memory, me, "Mel: We have been married for a while now.", session_id="s1")
    after_statement = remember(
        memory,
        me,
        "Caroline: We met at a friend's barbecue in the summer of 2018.",
        session_id="s1",
    )
    remember(memory, me, "Mel: How long have you been married?", session_id="s2")
    long_answer = remember(
        memory, me, "Caroline: " + "we met " * (ANSWER_WORDS // 2) + "in 2018.", session_id="s2"
    )
    remember(memory, me, "Mel: " + "so " * QUESTION_WORDS + "when did you marry?", session_id="s3")
    after_long_question = remember(
        memory, me, "Caroline: We met at a barbecue in the summer of 2018.", session_id="s3"
    )
    for turn in (after_statement, long_answer, after_long_question):
        version = EntryVersion.objects.get(entry=turn.entry)
        assert version.searchable_text.split() == own_tokens(
            version.searchable_text, version.term_count
        )


def test_an_answer_to_a_short_question_is_found_by_its_words(memory, me):
    """ "Three times a week; it keeps us on track." holds none of the search's words; it is
    indexed with the question before it (at half weight), so it is found — below the turn that
    holds those words itself."""
    question = remember(
        memory,
        me,
        "Caroline: How often do you and your husband work out together?",
        session_id="s1",
    )
    answer = remember(
        memory, me, "Melanie: Three times a week; it keeps us on track.", session_id="s1"
    )
    remember(memory, me, "Melanie: We went camping last summer.", session_id="s1")
    ranked = _ranked(memory, "How often do Melanie and her husband work out together?")
    assert ranked[:2] == [question.entry.pk, answer.entry.pk]
    version = EntryVersion.objects.get(entry=answer.entry)
    assert version.body == "Melanie: Three times a week; it keeps us on track."
    assert "husband" in version.searchable_text.split()[version.term_count :]


def test_a_turn_of_another_session_lends_it_no_words(memory, me):
    remember(memory, me, "Mel: How long have you been married?", session_id="s1")
    reply = remember(memory, me, "Caroline: 5 years already!", session_id="s2")
    version = EntryVersion.objects.get(entry=reply.entry)
    assert version.searchable_text.split() == ["carolin", "5", "year", "alreadi"]


def test_term_statistics_count_each_version_once_and_a_recount_agrees(memory, me):
    remember(memory, me, "Deploys run at noon, deploys never run at night.")
    remember(memory, me, "The deploy pipeline owns migrations.")
    stats = collection(memory.pk, ["deploy", "night", "absent"])
    assert stats.versions == 2
    assert dict(TermStat.objects.filter(memory=memory).values_list("term", "df"))["deploy"] == 2
    before = sorted(TermStat.objects.filter(memory=memory).values_list("term", "df"))
    corpus = LexicalCorpus.objects.get(memory=memory)
    recount_terms()
    assert sorted(TermStat.objects.filter(memory=memory).values_list("term", "df")) == before
    again = LexicalCorpus.objects.get(memory=memory)
    assert (again.versions, again.tokens) == (corpus.versions, corpus.tokens)
    # The rarer term weighs more; a term the Memory never held weighs the most.
    assert stats.weight("night") > stats.weight("deploy")
    assert stats.weight("absent") > stats.weight("night")


def test_search_hits_follow_the_lexical_rarity_order(memory, me, settings):
    settings.STEWARD_EMBEDDINGS = {**settings.STEWARD_EMBEDDINGS, "PROVIDER": None}
    for i in range(8):
        remember(memory, me, f"Our team meets every week in room {i}.")
    rare = remember(memory, me, "The quarterly offsite meets in Lisbon.")
    hits = search(memory, actor=me, query="where does the quarterly offsite meet").hits
    assert hits[0].entry_id == rare.entry.uid


def test_the_context_is_history_a_reindex_recomputes_after_the_turn_before_is_revised(memory, me):
    from memory import actions
    from memory.search.reindex import reanalyze_versions

    question = remember(memory, me, "Mel: How long have you been married?", session_id="s1")
    reply = remember(memory, me, "Caroline: 5 years already!", session_id="s1")
    actions.revise_entry(
        memory, actor=me, entry_uid=question.entry.uid, body="Mel: Where did you two meet?"
    )
    # The reply was indexed beside the question as it read then; the reindex agrees.
    assert reanalyze_versions(check=True).changed == 0
    version = EntryVersion.objects.get(entry=reply.entry)
    assert "marri" in version.searchable_text.split()[version.term_count :]


@pytest.mark.parametrize("answer_sensitivity", ["internal", "restricted"])
def test_a_more_sensitive_question_lends_its_words_to_no_answer(memory, me, answer_sensitivity):
    """A caller cleared for the answer but not for the question must not find the answer by
    the question's words: a turn lends words only to a turn at least as sensitive, in the
    writer, in a batch and in the reindex alike."""
    from memory.actors import Actor
    from memory.search.reindex import reanalyze_versions

    remember(
        memory,
        Actor.system(),
        "Mel: Did you visit the oncologist last week?",
        session_id="s1",
        sensitivity="restricted",
    )
    answer = remember(
        memory,
        Actor.system(),
        "Caroline: Yes, on Tuesday, and everything looked fine.",
        session_id="s1",
        sensitivity=answer_sensitivity,
    )
    version = EntryVersion.objects.get(entry=answer.entry)
    lent = "oncolog" in version.searchable_text.split()
    assert lent == (answer_sensitivity == "restricted")
    reanalyze_versions()
    version.refresh_from_db()
    assert ("oncolog" in version.searchable_text.split()) == lent
    if answer_sensitivity == "internal":
        assert not search(memory, actor=me, query="oncologist").hits


def test_text_written_without_spaces_is_not_one_word():
    from memory.lexical_index import ANSWER_WORDS, is_short_answer, is_short_question

    assert is_short_question("週末は何をしますか？")
    assert not is_short_question("日本語の長い文章です。" * 10 + "どう思いますか？")
    assert not is_short_answer("とても長い返事です。" * ANSWER_WORDS)


def test_in_one_batch_a_more_sensitive_question_lends_no_words(memory, me):
    from memory.actions.batch import add_entries
    from memory.actors import Actor

    question = {
        "body": "Mel: Did you visit the oncologist last week?",
        "session_id": "s1",
        "kind": "fact",
    }
    answer = {
        "body": "Caroline: Yes, on Tuesday, and everything looked fine.",
        "session_id": "s1",
        "kind": "fact",
    }
    outcome = add_entries(
        memory,
        actor=Actor.system(),
        entries=[
            {**question, "sensitivity": "restricted"},
            {**answer, "sensitivity": "internal"},
            {**question, "body": question["body"].replace("Mel", "Jo"), "sensitivity": "internal"},
            {**answer, "body": answer["body"].replace("Caroline", "Ann")},
        ],
    )
    texts = [
        EntryVersion.objects.get(entry=item.entry).searchable_text.split() for item in outcome.items
    ]
    assert "oncolog" not in texts[1]  # the restricted question lends nothing
    assert "oncolog" in texts[3]  # an internal question lends its words


@pytest.mark.parametrize("lookup", ["writer", "exchanges"])
def test_the_turn_before_is_one_step_of_the_session_index_not_a_sort_of_the_session(
    memory, me, lookup
):
    """Every write of a turn reads the turn before it (its index context), and a reranked search
    reads the question each pooled answer follows. Both walk the entry's (memory, session_id,
    id) index one step backward: under the old (memory, session_id, tier) index they read every
    turn of the session before it and sorted them, and an agent's session grows without bound."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.lexical_index import previous_turn_body
    from memory.search.exchanges import _previous

    turns = [remember(memory, me, f"Turn {i}?", session_id="main") for i in range(3)]
    last = turns[-1].entry.pk
    with CaptureQueriesContext(connection) as read:
        if lookup == "writer":
            assert previous_turn_body(memory.pk, "main", last) == "Turn 1?"
        else:
            assert _previous([last]) == {last: turns[1].entry.pk}
    (statement,) = [q["sql"] for q in read.captured_queries]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A few rows would be read whole; the planner is asked to prefer an index, as it
            # does for a session of thousands of turns.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {statement}")
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {statement}")
        lines = [str(row[-1]) for row in cursor.fetchall()]
    assert "memory_entry_session_turn" in " ".join(lines), lines
    # No sort of the session's turns: at most of one turn's versions, in the index's order.
    assert not [line for line in lines if "TEMP B-TREE FOR ORDER BY" in line], lines
    assert not [line for line in lines if line.lstrip(" ->").startswith("Sort  (")], lines


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_the_first_rows_are_the_same_whatever_the_limit_when_context_counts_half(memory, me, limit):
    """A statement ranks by the full weight of every indexed token, and a term a reply holds
    only through the question before it counts half afterwards: the reply "Yosemite." is second
    by full weight and falls below a turn that says "hiking" and "weekend" itself. The channel
    reads on until no unread row could pass its ``limit``-th (within ``READINGS`` readings), so
    its first rows do not depend on how many were asked for."""
    for i in range(6):
        remember(memory, me, f"Unrelated note number {i} about the garden.", session_id="n")
    question = remember(memory, me, "Mel: Where did you go hiking last weekend?", session_id="s1")
    reply = remember(memory, me, "Caroline: Yosemite.", session_id="s1")
    said = remember(
        memory,
        me,
        "Jon: I went hiking on the weekend with my brother.",
        session_id="s2",
    )
    full = _ranked(memory, "hiking weekend", limit=50)
    assert full[:3] == [question.entry.pk, said.entry.pk, reply.entry.pk], full
    assert _ranked(memory, "hiking weekend", limit=limit) == full[:limit]
