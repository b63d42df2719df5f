"""What the lexical index holds for a version, and the term statistics BM25 ranks by.

**A turn indexed with its context.** A conversation is many short turns leaning on each other:
"5 years already!" answers "How long have you been married?" only beside the turn before it.
So a version of an entry written in a session is indexed with the words of the turn before it in
that session (the latest version of the session's previous entry, at most ``CONTEXT_TOKENS`` of
its tokens) when it is short (``SHORT_TURN_TOKENS``) or answers a short question
(:func:`answers_a_question`: "Three times a week; it keeps us on track." after "How often do you
all work out together?"). The stored body stays exact; ``searchable_text`` is
the version's own tokens followed by those context tokens, and ``term_count`` counts only its
own, so whatever reads a version's words (the maintenance passes' similarity, the BM25 length)
reads
``own_tokens(searchable_text, term_count)``. Both full-text backends index the whole text, so a
reply is found by what it answers, on SQLite and PostgreSQL alike.

**Term statistics.** BM25 weighs a matched term by its rarity in the Memory: ``TermStat`` counts
the indexed versions holding each term (own or context tokens, as the index matches them) and
``LexicalCorpus`` the versions and their own tokens. The writer records each new version under
the Memory lock (one upsert per version, one per batch); versions are never deleted, so the
counts only grow. ``manage.py rebuild_projection --reindex`` recounts them from the stored text.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections

from lib.identity import SENSITIVITY_ORDER, Sensitivity

from .text import tokenize

#: Most tokens of the previous turn a version is indexed with.
CONTEXT_TOKENS = 48
#: Only a turn of at most this many tokens of its own is indexed with the turn before it: a
#: short reply ("5 years already!", "Yes, last Tuesday") means little alone, while a longer
#: turn indexed with its neighbour's words lets the neighbour's matches outrank the turn that
#: holds them (measured in docs/recall-evaluation.md, "Conversations").
SHORT_TURN_TOKENS = 6

#: A turn that answers a question is indexed with it: a question of at most
#: ``QUESTION_WORDS`` words (its text ends with a question mark) followed by an answer of at
#: most ``ANSWER_WORDS``. Longer turns — an assistant's reply, a pasted document — stand on
#: their own words (docs/recall-evaluation.md, "Exchanges"); the reranker reads the same
#: exchanges (``memory.search.exchanges``).
QUESTION_WORDS = 40
ANSWER_WORDS = 100
#: What a question turn ends with (after trailing spaces and closing quotes or brackets).
QUESTION_MARKS = ("?", "？")

#: Okapi BM25's constants (Robertson's defaults, as in Lucene and every peer's baseline).
K1 = 1.2
B = 0.75

#: A term's weight is its BM25 idf in thousandths, an integer: summed exactly, in any order,
#: on both backends, so the ranks are identical on SQLite and PostgreSQL.
WEIGHT_SCALE = 1000


def context_tokens() -> int:
    return int(getattr(settings, "STEWARD_SEARCH", {}).get("CONTEXT_TOKENS", CONTEXT_TOKENS))


def own_tokens(searchable_text: str, term_count: int) -> list[str]:
    """A version's own analyzer tokens (its stored text less the context it is indexed with)."""
    return searchable_text.split()[:term_count]


def lends_words(previous: str, sensitivity: str | None) -> bool:
    """Whether a turn of sensitivity ``previous`` may lend its words to the index of a turn of
    ``sensitivity`` (None: unknown, any): never to a less sensitive one, or a caller cleared
    for the reply but not for the question would find the reply by the question's words.
    An entry's sensitivity never changes, so neither does the answer."""
    if sensitivity is None:
        return True
    return SENSITIVITY_ORDER[Sensitivity(previous)] <= SENSITIVITY_ORDER[Sensitivity(sensitivity)]


def previous_turn_body(
    memory_pk: int,
    session_id: str,
    entry_pk: int | None,
    *,
    sensitivity: str | None = None,
    before_version: int | None = None,
    using: str = DEFAULT_DB_ALIAS,
) -> str | None:
    """The body of the turn before ``entry_pk`` in ``session_id``: the session's entry created
    last before it, in its latest version written before ``before_version`` (the version being
    indexed; None while it is being written, when every stored version is older). So the
    context a version is indexed with is a fact of the history, the same when the reindex
    recomputes it after the turn before was revised. None when that turn is more sensitive
    than ``sensitivity`` (the indexed turn's, :func:`lends_words`). One indexed query; None
    outside a session."""
    if not session_id:
        return None
    conditions = ["e.memory_id = %s", "e.session_id = %s"]
    params: list[int | str] = [memory_pk, session_id]
    if entry_pk is not None:
        conditions.append("e.id < %s")
        params.append(entry_pk)
    if before_version is not None:
        conditions.append("v.id < %s")
        params.append(before_version)
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT v.body, e.sensitivity FROM memory_entry e "
            "JOIN memory_entryversion v ON v.entry_id = e.id "
            f"WHERE {' AND '.join(conditions)} ORDER BY e.id DESC, v.id DESC LIMIT 1",
            params,
        )
        row = cursor.fetchone()
    return row[0] if row and lends_words(row[1], sensitivity) else None


def _words(body: str) -> int:
    """A text's length in words: its spaced words, or its analyzer tokens when more (text
    written without spaces — a CJK run counts its unigrams and bigrams — is not one word)."""
    return max(len(body.split()), len(tokenize(body)))


def is_short_question(body: str) -> bool:
    text = body.rstrip().rstrip("\"'”’)]")
    return text.endswith(QUESTION_MARKS) and _words(body) <= QUESTION_WORDS


def is_short_answer(body: str) -> bool:
    return _words(body) <= ANSWER_WORDS


def answers_a_question(body: str, previous: str | None) -> bool:
    """Whether the turn ``body`` answers the short question ``previous`` (the turn before it)."""
    return previous is not None and is_short_question(previous) and is_short_answer(body)


def indexed_with_context(body: str, context: str | None) -> tuple[str, int]:
    """``(searchable_text, term_count)`` of a version: its own tokens, then — for a short turn
    (``SHORT_TURN_TOKENS``) or an answer to a short question (:func:`answers_a_question`) — at
    most ``CONTEXT_TOKENS`` tokens of the turn before it; ``term_count`` counts its own."""
    own = tokenize(body)
    short = len(own) <= SHORT_TURN_TOKENS or answers_a_question(body, context)
    extra = tokenize(context)[: context_tokens()] if (context and short) else []
    return " ".join([*own, *extra]), len(own)


def record_versions(
    memory_pk: int, rows: Sequence[tuple[str, int]], *, using: str = DEFAULT_DB_ALIAS
) -> None:
    """Count new indexed versions ``(searchable_text, term_count)`` into the Memory's term
    statistics: two statements whatever the number of rows. The caller holds the Memory lock."""
    if not rows:
        return
    df: Counter[str] = Counter()
    for text, _ in rows:
        df.update(set(text.split()))
    tokens = sum(count for _, count in rows)
    with connections[using].cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_lexicalcorpus (memory_id, versions, tokens) VALUES (%s, %s, %s) "
            "ON CONFLICT (memory_id) DO UPDATE SET versions = memory_lexicalcorpus.versions + "
            "excluded.versions, tokens = memory_lexicalcorpus.tokens + excluded.tokens",
            [memory_pk, len(rows), tokens],
        )
        items = sorted(df.items())
        for start in range(0, len(items), 500):
            chunk = items[start : start + 500]
            values = ", ".join(["(%s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO memory_termstat (memory_id, term, df) VALUES {values} "
                "ON CONFLICT (memory_id, term) DO UPDATE SET df = memory_termstat.df + excluded.df",
                [p for term, n in chunk for p in (memory_pk, term, n)],
            )


@dataclass(frozen=True)
class Collection:
    """What BM25 needs of a Memory for one query: its size, mean own length, and each query
    term's integer weight (:data:`WEIGHT_SCALE` × idf)."""

    versions: int
    mean_length: float
    weights: dict[str, int]
    #: How many of the Memory's versions hold each query term (0: none).
    dfs: dict[str, int] = field(default_factory=dict)

    def weight(self, term: str) -> int:
        return self.weights.get(term, idf_weight(self.versions, 0))

    def length_terms(self) -> tuple[int, int]:
        """``(A, C)`` of the length factor: BM25's ``(k1 + 1) / (1 + k1·(1 - b + b·dl/avgdl))``
        orders rows exactly like ``1 / (A + C·dl)`` with the integers
        ``A`` = 1000·avgdl·(1 + k1·(1 - b)) and ``C`` = 1000·k1·b — so a row's score is
        ``W / (A + C·dl)`` with ``W`` the integer sum of its matched terms' weights: one IEEE
        division of exact integers on either backend."""
        a = round(1000 * max(self.mean_length, 1.0) * (1 + K1 * (1 - B)))
        return a, round(1000 * K1 * B)

    def score(self, weight_sum: int, length: int) -> float:
        a, c = self.length_terms()
        return weight_sum * 1.0 / (a + c * length)


def idf_weight(versions: int, df: int) -> int:
    """BM25's idf, ln(1 + (N - df + 0.5) / (df + 0.5)), in thousandths (at least 1)."""
    n = max(versions, df)
    return max(1, round(WEIGHT_SCALE * math.log(1 + (n - df + 0.5) / (df + 0.5))))


def collection(memory_pk: int, terms: Iterable[str]) -> Collection:
    """The Memory's statistics for ``terms``: one query."""
    terms = list(dict.fromkeys(terms))
    marks = ", ".join(["%s"] * len(terms)) or "NULL"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT NULL, c.versions, c.tokens FROM memory_lexicalcorpus c WHERE c.memory_id = %s "
            "UNION ALL SELECT t.term, t.df, 0 FROM memory_termstat t "
            f"WHERE t.memory_id = %s AND t.term IN ({marks})",
            [memory_pk, memory_pk, *terms],
        )
        rows = cursor.fetchall()
    versions, tokens = 0, 0
    df: dict[str, int] = {}
    for term, count, total in rows:
        if term is None:
            versions, tokens = int(count), int(total)
        else:
            df[term] = int(count)
    mean = tokens / versions if versions else 1.0
    return Collection(
        versions=versions,
        mean_length=mean,
        weights={t: idf_weight(versions, df.get(t, 0)) for t in terms},
        dfs={t: df.get(t, 0) for t in terms},
    )
