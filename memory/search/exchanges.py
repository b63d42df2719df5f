"""Question-and-answer exchanges in a conversation, for the reranker (docs/recall.md).

A turn that answers a question often holds none of the words a later search asks with: "Three
times a week; it keeps us on track." answers "How often do you all work out together?", and
the search's words are in the question. When the reranker is on, the coarse pool is read for
such exchanges before it is reranked:

- a pooled turn whose previous turn in its session is a short question is read *with* that
  question too (:attr:`memory.search.hits.Hit.asked`; the cross-encoder keeps the better of the
  two scores);
- a pooled short question brings the turn after it — its answer — into the pool, read with the
  question the same way.

Both turns must be admitted exactly as the pool's own members were: the view's heads and
lifecycle, the caller's clearance and the request's filters (the same scope the lexical channel
ranks in), so the reranker still only orders what recall may return. Turns are neighbours by
their entries' order within a session (``Entry.session_id``), which is the order a
conversation is written in. Only the ``current`` view is read this way.

"Short" keeps an exchange inside the cross-encoder's window (256 word pieces with the search's
own question): a question of at most :data:`QUESTION_WORDS` words and an answer of at most
:data:`ANSWER_WORDS`. A long turn — an assistant's reply, a document pasted into a chat — is
read alone: read after a long turn that happens to end with a question, a reply was cut off and
took that turn's score (measured in docs/recall-evaluation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.db import connection

from ..models import Entry
from .filters import RecallFilters
from .fusion import Fused
from .hits import Hit
from .lexical import view_scope

#: Most words of a question turn read with its answer, and of an answer read with its question.
QUESTION_WORDS = 40
ANSWER_WORDS = 100
#: What a question turn ends with (after trailing spaces and closing quotes or brackets).
QUESTION_MARKS = ("?", "？")


def is_short_question(body: str) -> bool:
    text = body.rstrip().rstrip("\"'”’)]")
    return text.endswith(QUESTION_MARKS) and len(body.split()) <= QUESTION_WORDS


def is_short_answer(body: str) -> bool:
    return len(body.split()) <= ANSWER_WORDS


@dataclass(frozen=True)
class Exchanges:
    """What the pool's exchanges add: the question each pooled or added turn answers (by the
    hit's key) and the answers to bring into the pool (to load as hits)."""

    asked: dict[tuple[int, int], str]
    answers: list[Fused]


def find_exchanges(
    memory_pk: int,
    pool: Sequence[Hit],
    *,
    scope: str,
    sensitivities: Sequence[str] | None,
    filters: RecallFilters | None,
) -> Exchanges:
    """The pool's exchanges (two queries when a pooled turn has a session, none otherwise)."""
    in_sessions = [h for h in pool if h.session_id]
    if not in_sessions:
        return Exchanges({}, [])
    neighbours = _neighbours([h.entry_pk for h in in_sessions])
    wanted = {pk for pair in neighbours.values() for pk in pair if pk is not None}
    admitted = _admitted(memory_pk, wanted, scope, sensitivities, filters)
    pooled = {h.entry_pk for h in pool}
    asked: dict[tuple[int, int], str] = {}
    answers: list[Fused] = []
    for hit in in_sessions:
        before, after = neighbours.get(hit.entry_pk, (None, None))
        question = admitted.get(before) if before is not None else None
        if question and is_short_question(question[1]) and is_short_answer(hit.body):
            asked[hit.key] = question[1]
        answer = admitted.get(after) if after is not None else None
        if (
            after is not None
            and answer
            and after not in pooled
            and is_short_question(hit.body)
            and is_short_answer(answer[1])
        ):
            pooled.add(after)
            answers.append(Fused(after, answer[0], Fraction(0), {}))
            asked[(after, answer[0])] = hit.body
    return Exchanges(asked, answers)


def _neighbours(entry_pks: Sequence[int]) -> dict[int, tuple[int | None, int | None]]:
    """Each entry's previous and next entry in its session (by id), one query."""
    table = Entry._meta.db_table
    marks = ", ".join(["%s"] * len(entry_pks))
    sql = f"""
        SELECT e.id,
            (SELECT MAX(n.id) FROM {table} n WHERE n.memory_id = e.memory_id
                AND n.session_id = e.session_id AND n.id < e.id),
            (SELECT MIN(n.id) FROM {table} n WHERE n.memory_id = e.memory_id
                AND n.session_id = e.session_id AND n.id > e.id)
        FROM {table} e
        WHERE e.id IN ({marks}) AND e.session_id <> ''
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, list(entry_pks))
        return {pk: (before, after) for pk, before, after in cursor.fetchall()}


def _admitted(
    memory_pk: int,
    entry_pks: set[int],
    scope: str,
    sensitivities: Sequence[str] | None,
    filters: RecallFilters | None,
) -> dict[int, tuple[int, str]]:
    """``{entry pk: (version pk, body)}`` of those entries the search's scope admits, one query:
    the lexical channel's own joins and conditions (``lexical.view_scope``)."""
    if not entry_pks:
        return {}
    joins, where, params = view_scope(scope, sensitivities, (), filters)
    marks = ", ".join(["%s"] * len(entry_pks))
    conditions = [f"v.entry_id IN ({marks})", "v.memory_id = %s", *where]
    sql = f"""
        SELECT v.entry_id, v.id, v.body
        FROM memory_entryversion v{joins}
        WHERE {" AND ".join(conditions)}
        ORDER BY v.entry_id, v.id
    """
    args: list[Any] = [*sorted(entry_pks), memory_pk, *params]
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        return {entry: (version, body) for entry, version, body in cursor.fetchall()}
