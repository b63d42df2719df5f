"""Question-and-answer exchanges in a conversation, for the reranker (docs/recall.md).

A turn that answers a question often holds few of the words a later search asks with: "Three
times a week; it keeps us on track." answers "How often do you all work out together?", and the
search's words are in the question. When the reranker is on, each pooled turn whose previous
turn in its session is a short question is read *with* that question too
(:attr:`memory.search.hits.Hit.asked`; the cross-encoder keeps the better of the two scores).

The question must be admitted exactly as the pool's own members were — the view's heads and
lifecycle, the caller's clearance and the request's filters (the scope the lexical channel
ranks in) — so nothing recall may not return shapes the order. The pool's members stay the
same (DESIGN §6: the reranker runs over the same members); bringing the answers of pooled
questions into the pool measured better still and is not done (docs/recall-evaluation.md).
Turns are neighbours by their entries' order within a session (``Entry.session_id``), the
order a conversation is written in. Only the ``current`` view is read this way.

"Short" keeps an exchange inside the cross-encoder's window (256 word pieces with the search's
own question): a question of at most ``lexical_index.QUESTION_WORDS`` words and an answer of at
most ``lexical_index.ANSWER_WORDS`` — the exchanges the lexical index reads too
(``lexical_index.answers_a_question``: an answer is indexed with its question's words). A long
turn — an assistant's reply, a document pasted into a chat — is read alone: read after a long
turn that happened to end with a question, a reply was cut off and took that turn's score
(measured in docs/recall-evaluation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from ..lexical_index import is_short_answer, is_short_question
from ..models import Entry
from .filters import RecallFilters
from .hits import Hit
from .lexical import view_scope


def find_exchanges(
    memory_pk: int,
    pool: Sequence[Hit],
    *,
    scope: str,
    sensitivities: Sequence[str] | None,
    filters: RecallFilters | None,
) -> dict[tuple[int, int], str]:
    """The short question each pooled short turn answers, by the hit's key: at most two
    queries when a pooled turn has a session, none otherwise."""
    answering = [h for h in pool if h.session_id and is_short_answer(h.body)]
    if not answering:
        return {}
    before = _previous([h.entry_pk for h in answering])
    admitted = _admitted(memory_pk, set(before.values()), scope, sensitivities, filters)
    asked: dict[tuple[int, int], str] = {}
    for hit in answering:
        question = admitted.get(before.get(hit.entry_pk, 0))
        if question is not None and is_short_question(question):
            asked[hit.key] = question
    return asked


def _previous(entry_pks: Sequence[int]) -> dict[int, int]:
    """Each entry's previous entry in its session (by id), one query."""
    table = Entry._meta.db_table
    marks = ", ".join(["%s"] * len(entry_pks))
    sql = f"""
        SELECT e.id,
            (SELECT MAX(n.id) FROM {table} n WHERE n.memory_id = e.memory_id
                AND n.session_id = e.session_id AND n.id < e.id)
        FROM {table} e
        WHERE e.id IN ({marks}) AND e.session_id <> ''
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, list(entry_pks))
        return {pk: before for pk, before in cursor.fetchall() if before is not None}


def _admitted(
    memory_pk: int,
    entry_pks: set[int],
    scope: str,
    sensitivities: Sequence[str] | None,
    filters: RecallFilters | None,
) -> dict[int, str]:
    """``{entry pk: body}`` of those entries the search's scope admits, one query:
    the lexical channel's own joins and conditions (``lexical.view_scope``)."""
    if not entry_pks:
        return {}
    joins, where, params = view_scope(scope, sensitivities, (), filters)
    marks = ", ".join(["%s"] * len(entry_pks))
    conditions = [f"v.entry_id IN ({marks})", "v.memory_id = %s", *where]
    sql = f"""
        SELECT v.entry_id, v.body
        FROM memory_entryversion v{joins}
        WHERE {" AND ".join(conditions)}
        ORDER BY v.entry_id, v.id
    """
    args: list[Any] = [*sorted(entry_pks), memory_pk, *params]
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        return dict(cursor.fetchall())
