"""The lexical channel: full-text candidates with exact term counts on both backends."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection

from ..models import (
    WITHHELD_STATES,
    HeadState,
    Sensitivity,
    Validity,
)
from ..text import tokenize
from .common import (
    ACTIVE,
    CANDIDATES,
    CURRENT,
    HEADS,
    HISTORY,
    Candidate,
    content_terms,
    query_floor,
    query_terms,
)

#: Seconds the lexeme frequencies read from ``pg_stats`` are reused within a process.
STATS_TTL = 300.0
_stats: dict[str, Any] = {"at": -STATS_TTL, "freq": {}}


def _lexeme_frequencies() -> dict[str, float]:
    """PostgreSQL's own estimate of each common lexeme's share of rows (``ANALYZE`` of the
    stored tsvector); lexemes outside the list are rarer than every lexeme in it."""
    now = time.monotonic()
    if now - _stats["at"] >= STATS_TTL:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
                "WHERE tablename = 'memory_entryversion' AND attname = 'search_vector'"
            )
            row = cursor.fetchone()
        elems, freqs = (row or (None, None))[:2]
        _stats["freq"] = dict(zip(elems or [], freqs or [], strict=False))
        _stats["at"] = now
    return _stats["freq"]  # type: ignore[no-any-return]


def prefilter_terms(terms: Sequence[str], floor: int) -> list[str]:
    """The terms the full-text index is asked for: any ``n - floor + 1`` of the ``n`` terms.

    Exact by the pigeonhole principle: a text containing none of them contains at most
    ``floor - 1`` terms, so it is below the floor anyway. The rarest terms (PostgreSQL's
    lexeme statistics) are chosen, so a common word does not pull in most of the Memory; the
    statistics only decide speed, never the result.
    """
    keep = len(terms) - max(floor, 1) + 1
    if keep >= len(terms):
        return list(terms)
    freq = _lexeme_frequencies()
    ranked = sorted(range(len(terms)), key=lambda i: (freq.get(terms[i], 0.0), i))
    return [terms[i] for i in sorted(ranked[: max(keep, 0)])]


def _tsquery(terms: Sequence[str]) -> str:
    return " | ".join(f"'{t}'" for t in terms)


#: Most term pairs written into one index condition (12 terms make 66).
MAX_PAIRS = 66


def _matched_condition(terms: Sequence[str], min_matched: int) -> str:
    """An index condition every text holding ``min_matched`` of ``terms`` meets ("" when none
    narrows anything). Pigeonhole, as in :func:`prefilter_terms`: such a text holds one or
    more of the rarest ``n - min_matched + 1`` terms, and two or more of the rarest
    ``n - min_matched + 2``. The pairs' form leaves far fewer rows to count on the heap; it is
    used while the pairs stay few. Exact either way: it changes the time, never the rows."""
    if min_matched <= 0:
        return ""
    pool = prefilter_terms(terms, min_matched - 1) if min_matched >= 2 else []
    if len(pool) >= 2 and len(pool) * (len(pool) - 1) // 2 <= MAX_PAIRS:
        return " | ".join(f"('{a}' & '{b}')" for i, a in enumerate(pool) for b in pool[i + 1 :])
    wide = prefilter_terms(terms, min_matched)
    return _tsquery(wide) if wide != list(terms) else ""


def _postgres_sql(
    memory_pk: int,
    terms: Sequence[str],
    content: Sequence[str],
    floor: int,
    min_matched: int,
    joins: str,
    where: Sequence[str],
    where_params: Sequence[Any],
) -> tuple[str, list[Any]]:
    """The channel's query on PostgreSQL, in one level: the GIN lookup (any of the rarest
    content terms, see ``prefilter_terms``), the per-term counts on the row's stored tsvector
    (a lexeme is present exactly when the analyzer token is; one heap visit per row beats one
    index probe per term), the floor and the view's filters, ordered by the count. No
    subquery joined back to the versions: the planner sorts the matches once and reads the
    joined filters only until the limit is reached."""
    hit = "(v.search_vector @@ %s::tsquery)::int"
    hits = " + ".join(hit for _ in terms)
    content_hits = " + ".join(hit for _ in content)
    prefilter = prefilter_terms(content, floor)
    query = _tsquery(prefilter)
    query = f"({query}) & ({wide})" if (wide := _matched_condition(terms, min_matched)) else query
    lexemes = [f"'{t}'" for t in terms]
    conditions = ["v.search_vector @@ %s::tsquery", "v.memory_id = %s"]
    params: list[Any] = [query, memory_pk]
    # A row the lookup found holds one of the prefilter's content terms: with a floor of one
    # and every content term in the lookup, the count is implied and is not computed per row.
    if not (floor <= 1 and list(prefilter) == list(content)):
        conditions.append(f"({content_hits}) >= %s")
        params += [*(f"'{t}'" for t in content), floor]
    if min_matched > 0:
        conditions.append(f"({hits}) >= %s")
        params += [*lexemes, min_matched]
    # One term: every row matches it once, so the count orders nothing.
    order = "" if len(terms) == 1 else f"({hits}) DESC, "
    sql = f"""
        SELECT v.entry_id, v.id
        FROM memory_entryversion v{joins}
        WHERE {" AND ".join([*conditions, *where])}
        ORDER BY {order}v.term_count ASC, v.entry_id ASC, v.id ASC
        LIMIT %s
    """
    return sql, [*params, *where_params, *(lexemes if order else [])]


def _scored_sql(
    memory_pk: int, terms: Sequence[str], content: Sequence[str], floor: int, min_matched: int
) -> tuple[str, list[Any]]:
    """SQLite's subquery of (id, matched, content_matched): versions containing at least
    ``floor`` of the ``content`` terms and ``min_matched`` of all ``terms``, with the number of
    distinct query terms (and of content terms) they contain — exact, like PostgreSQL's
    counts (:func:`_postgres_sql`), so both backends rank alike.

    The counts come from the FTS5 posting lists themselves (one MATCH per term, each
    intersected with the Memory's scope token, grouped), so no text is read before the
    admission floor has been applied and a Memory never walks another Memory's postings.
    Terms are analyzer tokens (letters, marks, digits, underscores), so quoting them as
    lexemes is safe on both backends.
    """
    is_content = set(content)
    union = " UNION ALL ".join(
        f"SELECT rowid AS id, {int(t in is_content)} AS content FROM memory_entryversion_fts "
        "WHERE memory_entryversion_fts MATCH %s"
        for t in terms
    )
    sql = (
        f"SELECT id, COUNT(*) AS matched, SUM(content) AS content_matched FROM ({union}) "
        "AS per_term GROUP BY id HAVING SUM(content) >= %s AND COUNT(*) >= %s"
    )
    # Each term is intersected with the Memory's scope token (migration 0010).
    scope = f'scope:"m{int(memory_pk)}" AND searchable_text:'
    return sql, [*(f'{scope}"{t}"' for t in terms), floor, min_matched]


def _view_scope(
    view: str, sensitivities: Sequence[str] | None, exclude_entry_pks: Iterable[int]
) -> tuple[str, list[str], list[Any]]:
    """The joins, conditions and parameters that scope the channel's rows to ``view``, to the
    caller's clearance and away from the excluded entries."""
    joins = ""
    where: list[str] = []
    where_params: list[Any] = []
    if view in (ACTIVE, CURRENT, HEADS, CANDIDATES):
        joins += " JOIN memory_head h ON h.version_id = v.id"
    if view in (ACTIVE, CURRENT, CANDIDATES):
        where.append("h.state = %s")
        where_params.append(HeadState.CANDIDATE if view == CANDIDATES else HeadState.ACTIVE)
    # The projection carries the entry's (immutable) sensitivity and its head state: one join
    # serves the validity, withheld-state and clearance filters.
    restricted = sensitivities is not None and set(Sensitivity.values) - set(sensitivities)
    if view in (CURRENT, HISTORY) or restricted:
        joins += " JOIN memory_lifecycleprojection p ON p.entry_id = v.entry_id"
    if view == CURRENT:
        where.append("p.validity IN (%s, %s)")
        where_params += [Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
    if view == HISTORY:
        # Every version of an entry stays out while the entry is a candidate or quarantined.
        where.append("p.state NOT IN (%s, %s)")
        where_params += list(WITHHELD_STATES)
    if restricted and sensitivities is not None:
        where.append(f"p.sensitivity IN ({', '.join(['%s'] * len(sensitivities))})")
        where_params += list(sensitivities)
    excluded = sorted(set(exclude_entry_pks))
    if excluded:
        where.append(f"v.entry_id NOT IN ({', '.join(['%s'] * len(excluded))})")
        where_params += excluded
    return joins, where, where_params


def lexical_channel(
    memory_pk: int,
    terms: Sequence[str],
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    exclude_entry_pks: Iterable[int] = (),
    min_matched: int = 0,
) -> list[Candidate]:
    """Lexical candidates of ``memory_pk`` for already-analyzed ``terms``, best first.

    ``view`` scopes the rows (ACTIVE / CURRENT / HISTORY / CANDIDATES); ``sensitivities`` (when
    given) is the caller's clearance, applied in the same query so nothing above it is ever
    ranked. One query, whatever the size of the Memory (plus, at most every ``STATS_TTL``
    seconds per process on PostgreSQL, one read of the lexeme statistics). A text is admitted
    when it contains the admission floor's number of content terms (``common.content_terms``)
    and, for a caller that can discard texts with fewer matching terms anyway, ``min_matched``
    terms.
    Ties of the number of matched terms go to the text with fewer tokens (``term_count``).
    """
    if not terms or limit <= 0 or min_matched > len(terms):
        return []
    content = content_terms(terms)
    floor = query_floor(terms)
    joins, where, where_params = _view_scope(view, sensitivities, exclude_entry_pks)
    if connection.vendor == "postgresql":
        sql, params = _postgres_sql(
            memory_pk, terms, content, floor, min_matched, joins, where, where_params
        )
    else:
        scored, scored_params = _scored_sql(memory_pk, terms, content, floor, min_matched)
        where = ["v.memory_id = %s", "m.content_matched >= %s", "m.matched >= %s", *where]
        sql = f"""
            SELECT v.entry_id, v.id
            FROM ({scored}) m
            JOIN memory_entryversion v ON v.id = m.id{joins}
            WHERE {" AND ".join(where)}
            ORDER BY m.matched DESC, v.term_count ASC, v.entry_id ASC, v.id ASC
            LIMIT %s
        """
        params = [*scored_params, memory_pk, floor, min_matched, *where_params]
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Candidate(e, v, i) for i, (e, v) in enumerate(rows, start=1)]


def lexical_candidates(
    memory_pk: int,
    text: str,
    *,
    limit: int = 20,
    exclude_entry_pks: Iterable[int] = (),
    min_jaccard: float = 0.0,
) -> list[int]:
    """Pks of entries whose *active head version* matches ``text`` lexically, best first.

    Uses the admission floor of DESIGN.md §6; at most ``limit`` results; never padded. For the
    bounded near-duplicate check at admission (DESIGN.md §7): no clearance filter (the check is
    the system's, scoped to the Memory), and nothing is written. With ``min_jaccard``, texts
    that cannot reach that Jaccard similarity of distinct tokens are left out (they would be
    discarded by the caller anyway): the candidates that remain are the same, found faster.
    """
    terms = query_terms(text)
    found = lexical_channel(
        memory_pk,
        terms,
        view=ACTIVE,
        limit=limit,
        exclude_entry_pks=exclude_entry_pks,
        min_matched=jaccard_min_matched(len(set(tokenize(text))), len(terms), min_jaccard),
    )
    return [c.entry_pk for c in found]


def jaccard_min_matched(n_tokens: int, n_terms: int, tau: float) -> int:
    """Fewest query terms a text must contain to reach Jaccard ``tau`` with the query text.

    Jaccard(A, B) = |A∩B| / |A∪B| ≥ tau needs |A∩B| ≥ tau·|A| (|A∪B| ≥ |A|, A the query's
    ``n_tokens`` distinct tokens); at most ``n_tokens - n_terms`` of them are not among the
    searched terms (the term cap), so the matched terms number at least the difference.
    """
    if tau <= 0 or n_tokens <= 0:
        return 0
    return max(0, math.ceil(tau * n_tokens - 1e-9) - (n_tokens - n_terms))
