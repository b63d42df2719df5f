"""The lexical channel: full-text candidates with exact term counts on both backends."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from django.conf import settings
from django.db import connection

from ..lexical_index import Collection, collection
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
    content_and_floor,
    query_terms,
    setting,
)
from .filters import RecallFilters

#: Most admitted rows one tier ranks (``LEXICAL_TIER_ROWS``): its newest versions.
TIER_ROWS = 2000

#: The bound of an exact reading: more rows than any Memory holds.
EVERY_ROW = 2**62

#: Seconds the lexeme frequencies read from ``pg_stats`` are reused within a process.
STATS_TTL = 300.0
_stats: dict[str, Any] = {"at": -STATS_TTL, "freq": {}}


def _lexeme_frequencies() -> dict[str, float]:
    """PostgreSQL's own estimate of each common lexeme's share of rows (``ANALYZE`` of the
    stored tsvector, every Memory's); lexemes outside the list are rarer than every lexeme in
    it."""
    now = time.monotonic()
    if now - _stats["at"] >= STATS_TTL:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples "
                "FROM pg_class c LEFT JOIN pg_stats s ON s.tablename = c.relname "
                "AND s.attname = 'search_vector' WHERE c.relname = 'memory_entryversion'"
            )
            row = cursor.fetchone()
        elems, freqs, rows = (row or (None, None, None))[:3]
        _stats["freq"] = dict(zip(elems or [], freqs or [], strict=False))
        _stats["rows"] = max(float(rows or 0), 0.0)
        _stats["at"] = now
    return _stats["freq"]  # type: ignore[no-any-return]


def _scans(terms: Sequence[str], versions: int) -> bool:
    """Whether a lookup of ``terms`` reads a Memory of ``versions`` rows better row by row than
    through the full-text index: the index's postings hold every Memory's rows, so a common
    word's lookup for a small Memory beside a large one reads the large one's postings too
    (PostgreSQL's estimate of them: the lexemes' shares of the table's rows). About as costly
    per row either way, measured: a Memory of 10,000 versions beside one of 1,000,000 read its
    own rows in 9–11 ms against 46–102 ms through the index for a lookup of four common words."""
    freq = _lexeme_frequencies()
    postings = sum(freq.get(t, 0.0) for t in terms) * float(_stats.get("rows", 0.0))
    return 0 < versions < postings


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


#: Most groups of terms (``'a' & 'b'``) written into one tier's exact index condition; past
#: it the index scan costs more than counting the terms on the rows.
MAX_GROUPS = 12


def _at_least(terms: Sequence[str], count: int) -> list[str]:
    """The groups of ``count`` of ``terms``: a text holds ``count`` or more of the terms
    exactly when it holds every term of one group."""
    return [" & ".join(f"'{t}'" for t in group) for group in combinations(terms, count)]


def _tier_condition(
    terms: Sequence[str], content: Sequence[str], floor: int, tier: Tier
) -> str | None:
    """The tier's rows as one full-text condition (None when it would take more than
    ``MAX_GROUPS`` groups): ``floor`` of the content terms, ``tier.low`` of all terms and
    fewer than ``tier.high``. Exact, like the counts of :func:`_postgres_sql`, and estimated
    by PostgreSQL from its lexeme statistics, so the planner knows how many rows a common
    tier holds and reads them newest first."""
    stops = len(terms) - len(content)
    counts: list[tuple[Sequence[str], int]] = []
    # The floor is implied by the tier's fewest terms unless stop words can make them up ...
    if tier.low - stops < floor:
        counts.append((content, floor))
    # ... and the tier's fewest terms by the floor when it asks for as many.
    if tier.low > floor or not counts:
        counts.append((terms, tier.low))
    if tier.high is not None:
        counts.append((terms, tier.high))
    if sum(math.comb(len(ts), n) for ts, n in counts) > MAX_GROUPS:
        return None
    parts = [_at_least(ts, n) for ts, n in counts]
    below = parts.pop() if tier.high is not None else []
    query = " & ".join("(" + " | ".join(f"({g})" for g in groups) + ")" for groups in parts)
    return f"{query} & !({' | '.join(f'({g})' for g in below)})" if below else query


def _postgres_sql(
    memory_pk: int,
    terms: Sequence[str],
    weights: Sequence[int],
    content: Sequence[str],
    floor: int,
    tier: Tier,
    joins: str,
    where: Sequence[str],
    where_params: Sequence[Any],
) -> tuple[str, list[Any]]:
    """One tier's rows on PostgreSQL (see :func:`_ranked_sql`).

    Mostly one exact full-text condition (:func:`_tier_condition`) served by the GIN index.
    With too many term groups for it: the GIN lookup (any of the rarest content terms, see
    ``prefilter_terms``, and the pigeonhole condition of the tier's fewest matched terms, see
    ``_matched_condition``) and the per-term counts on the row's stored tsvector (a lexeme is
    present exactly when the analyzer token is; one heap visit per row beats one index probe
    per term) for the floor and the tier. Then the view's filters."""
    hit = "(v.search_vector @@ %s::tsquery)::int"
    hits = " + ".join(hit for _ in terms)
    lexemes = [f"'{t}'" for t in terms]
    exact = _tier_condition(terms, content, floor, tier)
    conditions = ["v.search_vector @@ %s::tsquery", "v.memory_id = %s"]
    params: list[Any] = [exact, memory_pk]
    if exact is None:
        content_hits = " + ".join(hit for _ in content)
        prefilter = prefilter_terms(content, floor)
        query = _tsquery(prefilter)
        if wide := _matched_condition(terms, tier.low):
            query = f"({query}) & ({wide})"
        params[0] = query
        # A row the lookup found holds one of the prefilter's content terms: with a floor of
        # one and every content term in the lookup, the count is implied.
        if not (floor <= 1 and list(prefilter) == list(content)):
            conditions.append(f"({content_hits}) >= %s")
            params += [*(f"'{t}'" for t in content), floor]
        # The floor on the content terms already implies as many matched terms.
        if tier.low > floor:
            conditions.append(f"({hits}) >= %s")
            params += [*lexemes, tier.low]
        if tier.high is not None:
            conditions.append(f"({hits}) < %s")
            params += [*lexemes, tier.high]
    # The BM25 weight of the row's matched terms (integers: exact in any order). One term:
    # every row holds it, so the weight is the term's.
    weight_params: list[str | int]
    if len(terms) == 1:
        weight, weight_params = "%s", [weights[0]]
    else:
        weight = " + ".join("(v.search_vector @@ %s::tsquery)::int * %s" for _ in terms)
        weight_params = [p for t, w in zip(lexemes, weights, strict=True) for p in (t, w)]
    sql = f"""
        SELECT v.entry_id, v.id, v.term_count, ({weight}) AS weight, v.searchable_text
        FROM memory_entryversion v{joins}
        WHERE {" AND ".join([*conditions, *where])}
    """
    return sql, [*weight_params, *params, *where_params]


def _scored_sql(
    memory_pk: int,
    terms: Sequence[str],
    weights: Sequence[int],
    content: Sequence[str],
    floor: int,
    tier: Tier,
) -> tuple[str, list[Any]]:
    """SQLite's subquery of (id, matched, content_matched): versions containing at least
    ``floor`` of the ``content`` terms and a number of all ``terms`` within ``tier``, with the
    number of distinct query terms (and of content terms) they contain — exact, like PostgreSQL's
    counts (:func:`_postgres_sql`), so both backends rank alike.

    The counts come from the FTS5 posting lists themselves (one MATCH per term, each
    intersected with the Memory's scope token, grouped), so no text is read before the
    admission floor has been applied and a Memory never walks another Memory's postings.
    Terms are analyzer tokens (letters, marks, digits, underscores), so quoting them as
    lexemes is safe on both backends.
    """
    is_content = set(content)
    union = " UNION ALL ".join(
        f"SELECT rowid AS id, {int(t in is_content)} AS content, {int(w)} AS weight "
        "FROM memory_entryversion_fts WHERE memory_entryversion_fts MATCH %s"
        for t, w in zip(terms, weights, strict=True)
    )
    below = "" if tier.high is None else " AND COUNT(*) < %s"
    sql = (
        f"SELECT id, SUM(weight) AS weight, COUNT(*) AS matched, SUM(content) AS content_matched "
        f"FROM ({union}) "
        f"AS per_term GROUP BY id HAVING SUM(content) >= %s AND COUNT(*) >= %s{below}"
    )
    # Each term is intersected with the Memory's scope token (migration 0010).
    scope = f'scope:"m{int(memory_pk)}" AND searchable_text:'
    high = [] if tier.high is None else [tier.high]
    return sql, [*(f'{scope}"{t}"' for t in terms), floor, tier.low, *high]


def _sqlite_tiers_sql(
    memory_pk: int,
    terms: Sequence[str],
    weights: Sequence[int],
    content: Sequence[str],
    floor: int,
    read: Sequence[Tier],
    joins: str,
    where: Sequence[str],
    where_params: Sequence[Any],
    *,
    bound: int,
    limit: int,
    length: tuple[int, int],
) -> tuple[str, list[Any]]:
    """The tiers of ``read`` in one SQLite statement: the admitted rows with their matched
    count and weight (:func:`_scored_sql`, the posting lists read once), ranked by BM25 like
    :func:`_ranked_sql`. With ``bound`` at :data:`EVERY_ROW` (search) every admitted row is
    ranked, as :func:`_postgres_exact` does; below it each tier ranks its ``bound`` newest rows
    (a window), as :func:`_ranked_sql` does on PostgreSQL for the write path's check."""
    lowest = min(t.low for t in read)
    scored, scored_params = _scored_sql(memory_pk, terms, weights, content, floor, Tier(lowest))
    a, c = length
    if bound >= EVERY_ROW:
        # Every admitted row ranked: no window to number the newest.
        sql = f"""
            SELECT v.entry_id, v.id, m.weight, v.term_count, v.searchable_text
            FROM ({scored}) m
            JOIN memory_entryversion v ON v.id = m.id{joins}
            WHERE {" AND ".join(["v.memory_id = %s", *where])}
            ORDER BY CAST(m.weight AS DOUBLE PRECISION) / (%s + %s * v.term_count) DESC,
                v.entry_id ASC, v.id ASC
            LIMIT %s
        """
        return sql, [*scored_params, memory_pk, *where_params, a, c, limit]
    cases = " ".join(f"WHEN m.matched >= {int(t.low)} THEN {i}" for i, t in enumerate(read))
    sql = f"""
        WITH r AS (
            SELECT v.entry_id, v.id, v.term_count, m.weight, v.searchable_text,
                CASE {cases} ELSE {len(read)} END AS tier
            FROM ({scored}) m
            JOIN memory_entryversion v ON v.id = m.id{joins}
            WHERE {" AND ".join(["v.memory_id = %s", *where])}
        ), b AS (
            SELECT r.*, ROW_NUMBER() OVER (PARTITION BY r.tier ORDER BY r.id DESC) AS newest
            FROM r
        )
        SELECT b.entry_id, b.id, b.weight, b.term_count, b.searchable_text FROM b
        WHERE b.newest <= %s
        ORDER BY CAST(b.weight AS DOUBLE PRECISION) / (%s + %s * b.term_count) DESC,
            b.entry_id ASC, b.id ASC
        LIMIT %s
    """
    return sql, [*scored_params, memory_pk, *where_params, bound, a, c, limit]


def _ranked_sql(
    rows: str, rows_params: list[Any], bound: int, limit: int, length: tuple[int, int]
) -> tuple[str, list[Any]]:
    """One tier ranked, on both backends: the tier's ``bound`` newest rows (highest version id)
    ordered by BM25 (``memory.lexical_index.Collection.score``: the integer weight of the
    matched terms over the integer length term ``A + C·dl``, one division of exact integers in
    double precision on either backend), then entry id, then version id. A tier holding no more
    than ``bound`` rows is ranked whole. The bound lets PostgreSQL walk the versions newest
    first and stop, instead of reading and sorting every row that holds a common term."""
    a, c = length
    sql = f"""
        SELECT t.entry_id, t.id, t.weight, t.term_count, t.searchable_text
        FROM ({rows} ORDER BY v.id DESC LIMIT %s) t
        ORDER BY CAST(t.weight AS DOUBLE PRECISION) / (%s + %s * t.term_count) DESC,
            t.entry_id ASC, t.id ASC
        LIMIT %s
    """
    return sql, [*rows_params, bound, a, c, limit]


@dataclass(frozen=True)
class Tier:
    """The rows holding at least ``low`` and fewer than ``high`` (None: any number) of the
    query's terms."""

    low: int
    high: int | None = None


#: Cumulative document frequencies of the rarest content terms the first statements of an
#: exact search read on PostgreSQL (:func:`_postgres_exact`); the last reads every term needed.
EXACT_STEPS = (2000, 20000)

#: A lookup of more rows than this (by the terms' document frequencies) is ranked before the
#: view's joins (:func:`_postgres_exact`): its ``RANK_FIRST_POOL × limit`` best rows, then only
#: those the view admits. ``STEWARD_SEARCH["LEXICAL_RANK_FIRST_ROWS"]`` overrides it.
RANK_FIRST_ROWS = 20000
RANK_FIRST_POOL = 4

#: Rows of the Memory a walk in length order (:func:`_walk_by_length`) reads before it gives up
#: (``STEWARD_SEARCH["LEXICAL_WALK_ROWS"]``, 0 turns it off): it may return the lookup's share
#: of them, and the rest are read and filtered away. Its statements return ``2 × limit`` rows
#: (at least ``WALK_FIRST``), then each ``WALK_WIDER`` times as many as the one before.
WALK_ROWS = 8192
WALK_FIRST = 64
WALK_WIDER = 4
#: The least share of a Memory's versions expected to hold every query term the Memory holds
#: (their document frequencies multiplied) for a walk in length order: past it the best rows
#: hold nearly every term and sit among the shortest; below it they are few and spread over
#: every length, and the walk would read (and filter) a large part of the Memory.
WALK_SHARE = 0.02


def _walkable(terms: Sequence[str], stats: Collection) -> bool:
    """Whether the rows holding every held term of the query are common enough to be found by
    a walk in length order (:data:`WALK_SHARE`)."""
    if stats.versions <= 0:
        return False
    share = 1.0
    for term in terms:
        if df := stats.dfs.get(term, 0):
            share *= df / stats.versions
    return share >= WALK_SHARE


#: Readings of one search's lexical channel: the statements rank by the full weight of every
#: indexed token, and a term a row holds only through its context counts half
#: (:func:`_rescored`), so when a row of the first ``limit`` lost weight that way, a row left
#: unread could pass it. The first reading keeps ``READ_FIRST`` times the rows asked for; when
#: a row left unread could still enter (:func:`_settled`), the statement is read again for
#: ``READ_WIDER`` times as many, at most ``READINGS`` times in all. On LoCoMo's 1,012 questions
#: a first reading of ``limit`` rows left 631 unsettled; of twice ``limit``, one.
READINGS = 3
READ_FIRST = 2
READ_WIDER = 4


def _walk_statements(
    first: int = WALK_FIRST, wider: int = WALK_WIDER, rows: int = WALK_ROWS
) -> int:
    """Most statements one walk in length order reads before it gives up."""
    count, size, read = 0, first, 0
    while read < rows:
        read += min(size, rows - read)
        size *= wider
        count += 1
    return count


#: Most statements one channel call reads (besides the term statistics) with the default steps:
#: in each reading, each step's lookup walked shortest first and, when the walk gives up, ranked
#: first and, when too few of its best rows are admitted, again with the view's joins inside
#: the ranking.
MAX_STATEMENTS = READINGS * (_walk_statements() + 4) * (len(EXACT_STEPS) + 1)


def essential_sizes(
    complete: Sequence[str], dfs: dict[str, int], steps: Sequence[int] = EXACT_STEPS
) -> list[int]:
    """How many of ``complete`` (rarest first) each statement of :func:`_postgres_exact` looks
    up: the most whose document frequencies add up to at most each of ``steps``
    (``STEWARD_SEARCH["LEXICAL_EXACT_STEPS"]``, default :data:`EXACT_STEPS`; at least one
    term), then all of them."""
    sizes: list[int] = []
    for cap in steps:
        count, total = 0, 0
        for term in complete:
            if count and total + dfs.get(term, 0) > cap:
                break
            total += dfs.get(term, 0)
            count += 1
        if count < len(complete) and count not in sizes:
            sizes.append(count)
    return [*sizes, len(complete)]


#: Most groups of terms (``'a' & 'b'``) a pruned lookup (:func:`_pruned`) is written with;
#: past it the lookup is ranked whole. ``STEWARD_SEARCH["LEXICAL_PRUNE_GROUPS"]``; 0 turns the
#: pruning off. At most ``PRUNE_TERMS`` held terms are grouped.
PRUNE_GROUPS = 12
PRUNE_TERMS = 8


def groups_reaching(
    weighted: Sequence[tuple[str, int]], need: int, cap: int
) -> list[list[str]] | None:
    """The smallest sets of terms whose weights add up to ``need`` or more (a text reaches
    ``need`` exactly when it holds every term of one of them), heaviest first; None when there
    are more than ``cap``. Depth first in the order of weight: a set is kept as soon as it
    reaches ``need``, so dropping any of its terms falls below."""
    items = sorted(weighted, key=lambda tw: (-tw[1], tw[0]))
    rest = [0] * (len(items) + 1)
    for i in range(len(items) - 1, -1, -1):
        rest[i] = rest[i + 1] + items[i][1]
    found: list[list[str]] = []

    def extend(start: int, chosen: list[str], total: int) -> bool:
        for i in range(start, len(items)):
            if total + rest[i] < need:
                return True
            term, weight = items[i]
            if total + weight >= need:
                found.append([*chosen, term])
                if len(found) > cap:
                    return False
            elif not extend(i + 1, [*chosen, term], total + weight):
                return False
        return True

    if need <= 0 or not extend(0, [], 0):
        return None
    return found


def _holding(group: Sequence[str], stats: Collection) -> float:
    """How many of the Memory's versions hold every term of ``group``, were the terms
    independent."""
    share = 1.0
    for term in group:
        share *= stats.dfs.get(term, 0) / max(stats.versions, 1)
    return share * stats.versions


def _pruned(
    cursor: Any,
    joined: str,
    head: Sequence[Any],
    tail: Sequence[Any],
    before: Sequence[tuple[int, int, int, int, str]],
    *,
    terms: Sequence[str],
    weights: Sequence[int],
    memory_pk: int,
    limit: int,
    stats: Collection,
    max_groups: int,
    looked_up: int,
) -> list[tuple[int, int, int, int, str]] | None:
    """The ``limit`` best admitted rows of every admitted row, ranking only those that can pass
    a score already reached; None when no such score is known or the rows that can pass it
    take more than ``max_groups`` groups of terms to write, or more rows (by the terms' document
    frequencies) than the lookup it replaces, ``looked_up``.

    The score reached: the ``limit``-th of admitted rows ranked before — the previous lookup's
    (``before``), else the rows holding every term the Memory holds. The ``limit``-th best of
    every admitted row scores at least as much, so it holds terms weighing at least that score
    times ``A + C·dl`` at the Memory's shortest length: the rows holding one of the
    :func:`groups_reaching` that weight hold every row that can enter. Exact, like ranking every
    admitted row; a query of several common words ranks a few thousand rows instead of hundreds
    of thousands."""
    weighted = list(dict(zip(terms, weights, strict=True)).items())
    held = [t for t, _ in weighted if stats.dfs.get(t, 0) > 0]
    if len(held) < 2 or len(weighted) > PRUNE_TERMS:
        return None  # one term the Memory holds: its rows are the lookup, nothing to prune
    reached = list(before)
    if len(reached) < limit:
        # The rows holding every term the Memory holds (admitted ones, ranked): the best, when
        # there are enough of them. (Any admitted rows would do: the statistics decide only how
        # fast, never which rows.)
        cursor.execute(joined, [*head, " & ".join(f"'{t}'" for t in held), *tail])
        reached = cursor.fetchall()
        if len(reached) < limit:
            return None
    a, c = stats.length_terms()
    kth = _kth(reached, limit, stats)
    cursor.execute(
        "SELECT v.term_count FROM memory_entryversion v WHERE v.memory_id = %s "
        "ORDER BY v.term_count LIMIT 1",
        [memory_pk],
    )
    shortest = int(cursor.fetchone()[0])
    # One part in a billion below: a row scoring the same as the score reached is kept.
    need = math.floor(kth * (a + c * shortest) * (1 - 1e-9))
    groups = groups_reaching(weighted, need, max_groups)
    # No narrower than the lookup it replaces (a single common word's group is the lookup):
    # ranking the lookup is served better by the paths after this one. A group's rows are
    # estimated as if its terms were independent (only the time depends on it).
    if groups is None or sum(_holding(g, stats) for g in groups) >= looked_up:
        return None
    query = " | ".join("(" + " & ".join(f"'{t}'" for t in g) + ")" for g in groups)
    cursor.execute(joined, [*head, query, *tail])
    return cursor.fetchall()


def _walk_settled(
    kth: tuple[float, int, int], last: tuple[int, int, int], *, best_weight: int, stats: Collection
) -> bool:
    """Whether no row left unread by a walk in length order could pass ``kth`` (its ``(score,
    entry, id)``), the last row read being ``last`` (its ``(length, entry, id)``). A row not
    read comes after ``last`` in the order of (length, entry, id), so it is at least as long
    and scores at most ``best_weight`` at that length; scoring exactly that, it has the same
    length and a higher (entry, id) than ``last``, and ranks after ``kth`` when ``kth``'s
    (entry, id) is not above ``last``'s."""
    a, c = stats.length_terms()
    length, entry, version = last
    bound = best_weight * 1.0 / (a + c * length)
    score, at_entry, at_version = kth
    return score > bound or (score == bound and (at_entry, at_version) <= (entry, version))


def _walk_by_length(
    cursor: Any,
    rows_sql: str,
    rows_params: Sequence[Any],
    *,
    best_weight: int,
    limit: int,
    stats: Collection,
    budget: int,
) -> tuple[list[tuple[int, int, int, int, str]], bool]:
    """The ``limit`` best rows of ``rows_sql`` by BM25, read shortest first, and True; when that
    takes more than ``budget`` rows, the best of those read, and False.

    A row's score is ``W / (A + C·dl)``: no row scores more than ``best_weight`` (every term
    matched) at its length. The rows are read in the order of the index on ``(memory, term
    count, entry, id)``, shortest first, and the reading stops when the ``limit``-th best row
    read scores above what a row of the next length could (or as much, and comes first in the
    order's tie-break): no row left unread can enter. A common word ("the") is held by most
    rows, so its best rows are the shortest few, found without ranking every row that holds it.
    Exact, like the statement that ranks every row; only the work differs. (``best_weight``
    counts the terms the Memory held when its statistics were read: a version committed since,
    holding a term no version held, is found by the next search, as if this one had run before
    it.)"""
    kept: list[tuple[float, int, int, int, int, str]] = []  # (-score, entry, id, W, dl, text)
    after = (-1, -1, -1)
    size, read = max(WALK_FIRST, 2 * limit), 0
    while True:
        size = min(size, budget - read) if budget > read else 0
        if size <= 0:
            return [(e, v, w, dl, text) for _, e, v, w, dl, text in kept], False
        cursor.execute(
            f"""SELECT w.entry_id, w.id, w.weight, w.term_count, w.searchable_text FROM ({rows_sql}
                AND (v.term_count, v.entry_id, v.id) > (%s, %s, %s)
                ORDER BY v.term_count, v.entry_id, v.id LIMIT %s) w
                ORDER BY w.term_count, w.entry_id, w.id""",
            [*rows_params, *after, size],
        )
        chunk = cursor.fetchall()
        read += len(chunk)
        kept += [
            (-stats.score(int(w), int(dl)), e, v, int(w), int(dl), t) for e, v, w, dl, t in chunk
        ]
        kept.sort()
        del kept[limit:]
        if len(chunk) < size:
            break  # every row read
        entry, version, _, length, _ = chunk[-1]
        after = (int(length), int(entry), int(version))
        if len(kept) < limit:
            size *= WALK_WIDER
            continue
        if _walk_settled(
            (-kept[-1][0], kept[-1][1], kept[-1][2]), after, best_weight=best_weight, stats=stats
        ):
            break
        size *= WALK_WIDER
    return [(e, v, w, dl, text) for _, e, v, w, dl, text in kept], True


def _kth(found: Sequence[tuple[int, int, int, int, str]], limit: int, stats: Collection) -> float:
    """The score of the ``limit``-th of ``found`` (ranked rows), -1 when there are fewer."""
    if len(found) < limit:
        return -1.0
    return stats.score(int(found[limit - 1][2]), int(found[limit - 1][3]))


def _postgres_exact(
    memory_pk: int,
    terms: Sequence[str],
    weights: Sequence[int],
    content: Sequence[str],
    floor: int,
    lowest: int,
    joins: str,
    where: Sequence[str],
    where_params: Sequence[Any],
    *,
    limit: int,
    stats: Collection,
    narrowed: bool = False,
) -> list[tuple[int, int, int, int, str]]:
    """The ``limit`` best admitted rows by BM25 on PostgreSQL, exactly as if every admitted row
    were ranked (MaxScore): every admitted row holds one of ``complete``, the rarest
    ``len(content) - floor + 1`` content terms (pigeonhole). A statement looks up rows holding
    one of the rarest few of them (:func:`essential_sizes`), ranks them and keeps ``limit``;
    a row holding none of those holds only the other terms, so it scores at most their weights
    at the shortest length. When that is below the ``limit``-th score kept, no row left out can
    enter, and the rows are final; otherwise the next statement looks up more terms, the last
    all of ``complete``. The common words are then never looked up while rarer ones fill the
    top.

    A lookup of more than ``RANK_FIRST_ROWS`` rows (a common word's) is ranked on its own, the
    way the bare full-text query ranks it, and only its ``RANK_FIRST_POOL × limit`` best rows
    are held to the floor's term counts and joined to the view's heads, lifecycle and filters:
    every admitted row is one of the lookup's, so the first ``limit`` admitted in that order
    are the exact top whenever there are that many. When fewer are, the lookup is ranked again
    with the counts and joins inside. A search ``narrowed`` by the caller's filters (a session,
    a kind, a time range, a source) keeps them inside: its admitted rows are a small share of a
    common word's by design."""
    weight_of = dict(zip(terms, weights, strict=True))
    a, c = stats.length_terms()
    rarest = sorted(range(len(content)), key=lambda i: (-weight_of[content[i]], i))
    complete = [content[i] for i in rarest[: max(1, len(content) - floor + 1)]]
    hit = "(v.search_vector @@ %s::tsquery)::int"
    lexemes = [f"'{t}'" for t in terms]
    # One term: every row the lookup finds holds it, so the weight is the term's.
    weight_params: list[str | int]
    if len(terms) == 1:
        weight, weight_params = "%s", [weights[0]]
    else:
        weight = " + ".join(f"{hit} * %s" for _ in terms)
        weight_params = [p for t, w in zip(lexemes, weights, strict=True) for p in (t, w)]
    counts: list[str] = []
    count_params: list[Any] = []
    # A row found holds a content term of the lookup: a floor of one is implied.
    if floor > 1:
        counts.append(f"({' + '.join(hit for _ in content)}) >= %s")
        count_params += [*(f"'{t}'" for t in content), floor]
    if lowest > floor:
        counts.append(f"({' + '.join(hit for _ in terms)}) >= %s")
        count_params += [*lexemes, lowest]
    wide = _matched_condition(terms, lowest)
    # The ranking carries ids and numbers only; the texts of the rows kept are read after it
    # (at a million rows of a common word, texts carried through the joins and the sort spilled
    # to disk). The weight is written into the sort key a second time when PostgreSQL pulls the
    # subquery up: fencing it off (``OFFSET 0``) computed it once but ran the scan on one core,
    # twice as slow as the two workers' scans.
    ranked = f"""
        SELECT s.entry_id, s.id, s.weight, s.term_count,
            CAST(s.weight AS DOUBLE PRECISION) / (%s + %s * s.term_count) AS score
        FROM (
            SELECT v.entry_id, v.id, ({weight}) AS weight, v.term_count
            FROM memory_entryversion v{{joins}}
            WHERE {{conditions}}
        ) s
        ORDER BY score DESC, s.entry_id ASC, s.id ASC
        LIMIT %s
    """
    # The lookup on the full-text index, or (a Memory smaller than the postings the index would
    # read for it, a common word's beside a large Memory) on the Memory's own rows: the same
    # match, written as the operator's function so the index is not used (:func:`_scans`).
    built: dict[bool, tuple[list[str], str, str]] = {}
    for scan in (False, True):
        match = (
            "ts_match_vq(v.search_vector, %s::tsquery)"
            if scan
            else "v.search_vector @@ %s::tsquery"
        )
        lookup = [match, "v.memory_id = %s"]
        # Every admitted row of the lookup ranked (the view's joins and filters inside).
        inside = ranked.format(joins=joins, conditions=" AND ".join([*lookup, *counts, *where]))
        joined = f"""
            SELECT r.entry_id, r.id, r.weight, r.term_count, t.searchable_text
            FROM ({inside}) r
            JOIN memory_entryversion t ON t.id = r.id
            ORDER BY r.score DESC, r.entry_id ASC, r.id ASC
        """
        # The lookup's best rows ranked first, whatever the view, then only those admitted: the
        # first ``limit`` admitted in that order are the exact top when there are that many.
        admitted_after = f"""
            SELECT r.entry_id, r.id, r.weight, r.term_count, v.searchable_text
            FROM ({ranked.format(joins="", conditions=" AND ".join(lookup))}) r
            JOIN memory_entryversion v ON v.id = r.id{joins}
            {"WHERE " + " AND ".join([*counts, *where]) if counts or where else ""}
            ORDER BY r.score DESC, r.entry_id ASC, r.id ASC
            LIMIT %s
        """
        built[scan] = (lookup, joined, admitted_after)
    configured = getattr(settings, "STEWARD_SEARCH", {})
    steps = tuple(int(n) for n in configured.get("LEXICAL_EXACT_STEPS") or EXACT_STEPS)
    rank_first = int(configured.get("LEXICAL_RANK_FIRST_ROWS", RANK_FIRST_ROWS))
    walk_rows = int(configured.get("LEXICAL_WALK_ROWS", WALK_ROWS))
    prune_groups = int(configured.get("LEXICAL_PRUNE_GROUPS", PRUNE_GROUPS))
    rows: list[tuple[int, int, int, int, str]] = []
    with connection.cursor() as cursor:
        for size in essential_sizes(complete, stats.dfs, steps):
            essential = complete[:size]
            query = _tsquery(essential)
            if wide:
                query = f"({query}) & ({wide})"
            head = [a, c, *weight_params, query, memory_pk]
            lookup, joined, admitted_after = built[_scans(essential, stats.versions)]
            before, rows = rows, []
            looked_up = sum(stats.dfs.get(t, 0) for t in essential)
            common = not narrowed and looked_up > rank_first
            walked, settled = None, False
            if common and walk_rows > 0 and _walkable(terms, stats):
                # Along the length order's index: the match is written so the full-text index is
                # not used, which PostgreSQL otherwise picks for a lookup it thinks rare, and
                # then sorts every row it found.
                walk_sql = f"""
                    SELECT v.entry_id, v.id, ({weight}) AS weight, v.term_count,
                        v.searchable_text
                    FROM memory_entryversion v{joins}
                    WHERE {" AND ".join([*built[True][0], *counts, *where])}"""
                walked, settled = _walk_by_length(
                    cursor,
                    walk_sql,
                    [*weight_params, query, memory_pk, *count_params, *where_params],
                    best_weight=sum(
                        w for t, w in zip(terms, weights, strict=True) if stats.dfs.get(t)
                    ),
                    limit=limit,
                    stats=stats,
                    # The rows it may return: the lookup's share of ``walk_rows`` read in length
                    # order (at most; the rest are read and filtered away).
                    budget=max(2 * limit, int(walk_rows * min(1.0, looked_up / stats.versions))),
                )
            if common and not settled and prune_groups > 0:
                # Rows of a common word, most of them too weak to enter: only the rows holding
                # enough of the terms to pass a score already reached are ranked (the best rows
                # the walk found, else the previous lookup's).
                pruned = _pruned(
                    cursor,
                    joined,
                    [a, c, *weight_params],
                    [memory_pk, *count_params, *where_params, limit],
                    max(walked or [], before, key=lambda found: _kth(found, limit, stats)),
                    terms=terms,
                    weights=weights,
                    memory_pk=memory_pk,
                    limit=limit,
                    stats=stats,
                    max_groups=prune_groups,
                    looked_up=looked_up,
                )
                if pruned is not None:
                    return pruned
            if settled and walked is not None:
                rows = walked
            elif common:
                pool = RANK_FIRST_POOL * limit
                cursor.execute(admitted_after, [*head, pool, *count_params, *where_params, limit])
                rows = cursor.fetchall()
            if not settled and len(rows) < limit:  # too few admitted (or a small lookup)
                cursor.execute(joined, [*head, *count_params, *where_params, limit])
                rows = cursor.fetchall()
            if size == len(complete):
                break
            rest = sum(weight_of[t] for t in terms if t not in essential)
            if len(rows) >= limit and rest * 1.0 / a < stats.score(
                int(rows[limit - 1][2]), int(rows[limit - 1][3])
            ):
                break
    return rows


def view_scope(
    view: str,
    sensitivities: Sequence[str] | None,
    exclude_entry_pks: Iterable[int],
    filters: RecallFilters | None = None,
) -> tuple[str, list[str], list[Any]]:
    """The joins, conditions and parameters that scope the channel's rows to ``view``, to the
    caller's clearance, to the request's ``filters`` and away from the excluded entries."""
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
    timed = filters is not None and filters.timed
    if view in (CURRENT, HISTORY) or restricted or timed:
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
    if filters is not None:
        f_joins, f_where, f_params = filters.sql(history=view == HISTORY)
        joins += f_joins
        where += f_where
        where_params += f_params
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
    exact: bool = True,
    filters: RecallFilters | None = None,
) -> list[Candidate]:
    """Lexical candidates of ``memory_pk`` for already-analyzed ``terms``, best first.

    ``view`` scopes the rows (ACTIVE / CURRENT / HISTORY / CANDIDATES); ``sensitivities`` (when
    given) is the caller's clearance, applied in the same query so nothing above it is ever
    ranked. A text is admitted when it contains the admission floor's number of content terms
    (``common.content_terms``) and, for a caller that can discard texts with fewer matching
    terms anyway, ``min_matched`` terms.

    Order: BM25 (:mod:`memory.lexical_index`, then :func:`_rescored`), then the lower entry id
    and version id, identical on both backends; read until no unread row could pass the
    ``limit``-th (:func:`_settled`, at most ``READINGS`` readings), so the first rows do not
    depend on ``limit``. ``exact=True`` (search): the ``limit`` best of every admitted row —
    plain BM25 over the same tokens, however large the Memory. SQLite counts every matching
    row's terms from the posting lists in one statement; PostgreSQL looks up the rarest terms
    first and stops when no row holding only the others could enter (:func:`_postgres_exact`, at
    most ``MAX_STATEMENTS`` statements, plus, at most every ``STATS_TTL`` seconds per process,
    one read of the lexeme statistics). ``exact=False``: one statement that ranks only the
    ``LEXICAL_TIER_ROWS`` newest admitted versions (``settings.STEWARD_SEARCH``, at least
    ``limit``) — for the write path's near-duplicate check, which runs on every add and must
    stay cheap whatever the Memory holds.
    """
    if not terms or limit <= 0 or min_matched > len(terms):
        return []
    content, floor = content_and_floor(terms)
    joins, where, where_params = view_scope(view, sensitivities, exclude_entry_pks, filters)
    bound = max(setting("LEXICAL_TIER_ROWS", TIER_ROWS), limit) if not exact else EVERY_ROW
    stats = collection(memory_pk, terms)
    weights = [stats.weight(t) for t in terms]
    lowest = max(floor, min_matched, 1)

    def read(count: int) -> list[tuple[int, int, int, int, str]]:
        """The ``count`` best admitted rows by the full weight of their indexed tokens."""
        if connection.vendor == "postgresql" and exact:
            return _postgres_exact(
                memory_pk,
                terms,
                weights,
                content,
                floor,
                lowest,
                joins,
                where,
                where_params,
                limit=count,
                stats=stats,
                # A Memory's candidates are few by design, like a filtered search's rows.
                narrowed=(filters is not None and filters.active) or view == CANDIDATES,
            )
        query = (memory_pk, terms, weights, content, floor)
        scope = (joins, where, where_params)
        length = stats.length_terms()
        if connection.vendor == "postgresql":
            rows_sql, rows_params = _postgres_sql(*query, Tier(lowest), *scope)
            sql, params = _ranked_sql(rows_sql, rows_params, bound, count, length)
        else:
            sql, params = _sqlite_tiers_sql(
                *query, [Tier(lowest)], *scope, bound=bound, limit=count, length=length
            )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    count = limit * READ_FIRST if exact else limit
    for reading in range(1, READINGS + 1):
        found = read(count)
        # (score, entry id, version id): the channel's order, identical on both backends.
        rows = _rescored(found, terms, weights, stats)
        if not exact or reading == READINGS or _settled(rows, found, count, limit, stats):
            break
        count *= READ_WIDER
    return [Candidate(e, v, i) for i, (_, e, v) in enumerate(rows[:limit], start=1)]


def _settled(
    rows: Sequence[tuple[float, int, int]],
    found: Sequence[tuple[int, int, int, int, str]],
    count: int,
    limit: int,
    stats: Collection,
) -> bool:
    """Whether no row the statement left unread could enter the first ``limit`` of ``rows``.

    Every statement ranked all admitted rows by full weight and kept ``count``; a row left unread
    scores at most the last kept row's full weight (the order's tie-break included), and
    :func:`_rescored` only lowers a score. So the first ``limit`` are final when the
    ``limit``-th passes that bound — always when none of them lost weight to context."""
    if len(found) < count or len(rows) < limit:
        return True
    entry, version, weight, length, _ = found[-1]
    bound = stats.score(OWN_SHARE * int(weight), int(length))
    score, at_entry, at_version = rows[limit - 1]
    return score > bound or (score == bound and (at_entry, at_version) <= (entry, version))


#: A term a version holds only through the turn it is indexed with (``memory.lexical_index``)
#: counts this share of its weight, as a fraction ``CONTEXT_SHARE / OWN_SHARE``: a short reply is
#: found by the question before it, but does not outrank the turn holding the words itself.
OWN_SHARE = 2
CONTEXT_SHARE = 1


def _rescored(
    found: Sequence[tuple[int, int, int, int, str]],
    terms: Sequence[str],
    weights: Sequence[int],
    stats: Collection,
) -> list[tuple[float, int, int]]:
    """``(score, entry id, version id)`` of the rows a statement kept, best first: BM25 with a
    term held only in the context tokens counting ``CONTEXT_SHARE / OWN_SHARE`` of its weight
    (integers again, so both backends order alike). A row indexed without context keeps the
    statement's order (its weight is only scaled)."""
    rows = []
    for entry, version, weight, length, text in found:
        tokens = text.split()
        if len(tokens) <= length:
            total = OWN_SHARE * int(weight)
        else:
            own, context = set(tokens[:length]), set(tokens[length:])
            total = sum(
                w * (OWN_SHARE if t in own else CONTEXT_SHARE if t in context else 0)
                for t, w in zip(terms, weights, strict=True)
            )
        rows.append((stats.score(total, length), entry, version))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return rows


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
    One query (``exact=False``: an add runs it, and the best matches of a large Memory come
    from its newest ``LEXICAL_TIER_ROWS`` admitted versions).
    """
    terms = query_terms(text)
    found = lexical_channel(
        memory_pk,
        terms,
        view=ACTIVE,
        limit=limit,
        exclude_entry_pks=exclude_entry_pks,
        min_matched=jaccard_min_matched(len(set(tokenize(text))), len(terms), min_jaccard),
        exact=False,
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
