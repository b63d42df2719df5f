"""Set-based candidate generation for the maintenance passes: the bounded lexical neighbourhoods
of a whole keyset batch of entries in a fixed number of queries (issue #16).

:class:`Neighbourhoods` answers, for a batch of head rows, each entry's nearest entries by the
terms they share, from the analyzer tokens the index already stores (``searchable_text``; the
PostgreSQL ``search_vector`` GIN index, the SQLite FTS5 table ``memory_entryversion_fts``):

1. Each entry's terms are its stored tokens, distinct, in first-seen order, bounded like a
   query's (``memory.search.query_terms``: at most ``MAX_QUERY_TERMS``, none over
   ``MAX_TERM_BYTES``) — no re-analysis of the body.
2. Document frequency: the number of versions of the Memory holding the term, counted by the
   index and capped at ``postings_cap + 1`` (one query for the batch's terms not counted yet in
   this run; the counts are kept for the run). A term held by more than ``postings_cap``
   versions is too common to pair on and is never looked up. The same query reads the posting
   list of every term held by at most ``postings_cap`` versions, so it also gives, exactly and
   for free, how many heads of the view hold it (:attr:`Neighbourhoods.held`, kept for the run).
3. Keys: each entry's ``key_terms`` most informative terms — content terms (not stop words,
   ``memory.text.stop_terms``: a Korean or Japanese particle is a syllable held by half the
   Memory; nor, in an entry holding a content word, terms written only in hiragana — the
   lexical channel's own ``memory.search.content_terms``), held by another head of the view
   than the entry's own (a term no other entry holds finds nothing: spending a key on it left
   a long restatement, whose rare terms are mostly its own wording, without a single useful
   key) — rarest first (heads holding, then versions holding, then the term).
4. Postings: one query returns, for every distinct key of the batch not kept from an earlier
   batch, the heads of the view (active heads, or every head) holding it — at most
   ``postings_cap`` per key. Up to ``postings_budget`` posting rows are kept for the next
   batches (a run reads the Memory as of when it read each list, like any keyset walk).
5. In Python: per entry, the entries sharing its keys, with the number of keys shared. An entry
   qualifies when it shares at least the admission floor of the lexical channel of its
   *content* terms, as far as its keys can tell: a neighbour sharing the floor's number of
   content terms shares at least that number less the content terms other entries hold that
   are not keys (too common, or past ``key_terms``) of the keys — at least one. Best first by
   keys shared, then entry id, at most ``limit``. The floor is the channel's own function,
   ``memory.search.query_floor``, of all the entry's terms (step 1), not of its keys: the
   floor counts the entry's content words (a CJK run by its words in ICU's dictionary, rebuilt
   from the run's bigrams in the analyzer's order, which the terms keep), and only the number
   it gives is compared with the keys shared, as the channel compares it with the content
   terms matched.

In a Memory where no term is held by more than ``postings_cap`` versions and no entry has more
than ``key_terms`` content terms that other entries hold, the entries qualifying are exactly the
lexical channel's (``lexical_channel`` with the entry's terms and the same floor), ranked by the
same count of content terms; only the tie-break differs (entry id; the channel prefers fewer
tokens first). Every figure comes from the stored tokens and exact posting lists, never from
planner statistics (PostgreSQL's lexeme statistics are estimates over every Memory), so SQLite
and PostgreSQL give identical neighbourhoods. Work per batch is bounded by (distinct keys) ×
``postings_cap`` rows.

What a pass needs of a neighbour before comparing bodies (kind, state, session, stored tokens)
is read by :meth:`Neighbourhoods.neighbours` (:class:`Neighbour`, one query, up to
``NEIGHBOURS_KEPT`` rows reused by later batches); full head rows only for the pairs that pass.

Vector neighbours, when an embedding provider is configured, are added per entry after the
lexical ones (``base.neighbourhoods``): the vector index has no batched lookup.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from django.db import connection

from memory.lexical_index import own_tokens
from memory.models import HeadState, Memory
from memory.search.common import MAX_TERM_BYTES, content_and_floor, setting
from memory.text import stop_terms

#: A term held by more versions of the Memory than this pairs nothing (too common).
POSTINGS_CAP = 100
#: Rarest terms of an entry its neighbours are looked up by.
KEY_TERMS = 8
#: Neighbours taken from the lexical channel for one entry (as ``base.NEIGHBOURS``).
LIMIT = 20
#: Posting rows one run keeps between batches at most.
POSTINGS_BUDGET = 200_000
#: Neighbour rows (:class:`Neighbour`) one run keeps between batches at most.
NEIGHBOURS_KEPT = 50_000


def stored_terms(searchable_text: str) -> list[str]:
    """The query terms of a stored token stream: distinct tokens, first-seen order, bounded
    like ``memory.search.query_terms`` (which analyzes a body into the same tokens)."""
    distinct = dict.fromkeys(searchable_text.split())
    # A character is at most 4 bytes: only a long token needs encoding to be measured.
    short = MAX_TERM_BYTES // 4
    terms = [t for t in distinct if len(t) <= short or len(t.encode("utf-8")) <= MAX_TERM_BYTES]
    return terms[: setting("MAX_QUERY_TERMS", 64)]


def own_text(searchable_text: str | None, term_count: int) -> str:
    """A version's own stored tokens, space-joined: its ``searchable_text`` less the context
    tokens it is indexed with (``memory.lexical_index``)."""
    return " ".join(own_tokens(searchable_text or "", term_count))


def token_set(searchable_text: str) -> frozenset[str]:
    """The distinct analyzer tokens of a stored token stream (what ``lexical_similarity`` of
    ``memory.dedupe`` compares, without analyzing the body again)."""
    return frozenset(searchable_text.split())


class Neighbour:
    """What a pass needs to know of a neighbour before it compares bodies: the entry's kind,
    session and current-state flag, the head's state and its reason, the head version's stored
    tokens. Full rows (``base.load_heads``) are read only for the pairs that pass. (A slotted
    class: a run builds tens of thousands.)"""

    __slots__ = (
        "current_state",
        "entry_pk",
        "kind",
        "searchable_text",
        "session_id",
        "state",
        "state_reason",
    )

    def __init__(
        self,
        entry_pk: int,
        kind: str,
        session_id: str,
        current_state: bool,
        state: str,
        state_reason: str,
        searchable_text: str,
    ) -> None:
        self.entry_pk = entry_pk
        self.kind = kind
        self.session_id = session_id
        self.current_state = current_state
        self.state = state
        self.state_reason = state_reason
        self.searchable_text = searchable_text

    @property
    def tokens(self) -> frozenset[str]:
        # Made on each use, not kept: a run keeps up to ``NEIGHBOURS_KEPT`` rows, and their
        # token sets would triple what they hold.
        return token_set(self.searchable_text)


def load_neighbours(memory: Memory, entry_pks: Iterable[int]) -> dict[int, Neighbour]:
    """:class:`Neighbour` rows of ``entry_pks`` in ``memory``, in one query (the pks passed as
    one array or JSON parameter, however many)."""
    pks = sorted(set(entry_pks))
    if not pks:
        return {}
    columns = (
        "h.entry_id, e.kind, e.session_id, e.current_state, h.state, h.state_reason, "
        "v.searchable_text, v.term_count"
    )
    joins = (
        "FROM memory_head h JOIN memory_entry e ON e.id = h.entry_id "
        "JOIN memory_entryversion v ON v.id = h.version_id"
    )
    if connection.vendor == "postgresql":
        # One text parameter split by the server: a list parameter is adapted item by item.
        sql = (
            f"SELECT {columns} {joins} WHERE h.memory_id = %s "
            "AND h.entry_id = ANY(string_to_array(%s, ',')::bigint[])"
        )
        params: list[int | str] = [memory.pk, ",".join(map(str, pks))]
    else:
        sql = (
            f"SELECT {columns} {joins} WHERE h.memory_id = %s "
            "AND h.entry_id IN (SELECT value FROM json_each(%s))"
        )
        params = [memory.pk, json.dumps(pks)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # A version's own tokens: the words of the turn before it it is indexed with are not its.
    return {
        int(pk): Neighbour(
            int(pk), kind, session or "", bool(cs), state, reason or "", own_text(text, count)
        )
        for pk, kind, session, cs, state, reason, text, count in rows
    }


@dataclass
class Neighbourhoods:
    """Lexical neighbourhoods of keyset batches of one Memory's entries (module docstring).

    ``heads``: among every head (a finished session's notes are inactive) instead of active
    heads. The document frequencies counted are kept for the whole run.
    """

    memory: Memory
    heads: bool = False
    limit: int = LIMIT
    postings_cap: int = POSTINGS_CAP
    key_terms: int = KEY_TERMS
    #: Posting rows kept between batches (terms recur from batch to batch); past it the kept
    #: lists are dropped, so the memory held stays bounded.
    postings_budget: int = POSTINGS_BUDGET
    frequencies: dict[str, int] = field(default_factory=dict)
    #: Heads of the view holding each term held by at most ``postings_cap`` versions (the
    #: length of its posting list, read with its frequency).
    held: dict[str, int] = field(default_factory=dict)
    #: Lexical queries run, and posting rows read, so far.
    queries: int = 0
    postings_read: int = 0
    _postings_kept: dict[str, list[int]] = field(default_factory=dict)
    _kept_rows: int = 0
    _neighbours_kept: dict[int, Neighbour] = field(default_factory=dict)

    def neighbours(self, entry_pks: Iterable[int]) -> dict[int, Neighbour]:
        """:func:`load_neighbours` of ``entry_pks``, the rows read for an earlier batch of the
        run reused (at most ``NEIGHBOURS_KEPT`` kept): at most one query."""
        kept = self._neighbours_kept
        pks = set(entry_pks)
        out = {pk: kept[pk] for pk in pks if pk in kept}
        missing = pks - set(out)
        if missing:
            loaded = load_neighbours(self.memory, missing)
            if len(kept) + len(loaded) > NEIGHBOURS_KEPT:
                kept.clear()
            if len(loaded) <= NEIGHBOURS_KEPT:
                kept.update(loaded)
            out.update(loaded)
        return out

    # --- SQL ---------------------------------------------------------------------------------

    def _count(self, terms: Sequence[str]) -> dict[str, list[int]]:
        """Counts (capped at ``postings_cap + 1``) of versions of the Memory holding each term,
        into :attr:`frequencies`, and the postings (heads of the view) of each term held by at
        most ``postings_cap`` versions, read from the same capped lists: one query."""
        if connection.vendor == "postgresql":
            sql, params = self._count_query_postgresql(terms)
        else:
            sql, params = self._count_query_sqlite(terms)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        self.queries += 1
        postings: dict[str, list[int]] = {}
        for term, n, held in rows:
            self.frequencies[str(term)] = int(n)
            if held is None:
                continue
            if isinstance(held, str):
                held = [int(e) for e in held.split(",")] if held else []
            postings[str(term)] = list(held)
            self.held[str(term)] = len(held)
            self.postings_read += len(held)
        return postings

    def _count_query_postgresql(self, terms: Sequence[str]) -> tuple[str, list[int | str]]:
        """The SQL and parameters of :meth:`_count` on PostgreSQL."""
        cap = self.postings_cap + 1
        state = "" if self.heads else " AND h.state = %s"
        state_params: list[int | str] = [] if self.heads else [HeadState.ACTIVE]
        # The versions holding the term (at most cap), then the heads of the view among
        # them, only when the term is rare enough to be a key.
        sql = f"""
                SELECT t.term, c.n, CASE WHEN c.n <= %s THEN (
                    SELECT coalesce(array_agg(h.entry_id), '{{}}')
                    FROM memory_head h WHERE h.version_id = ANY(c.ids){state}
                ) END
                FROM unnest(string_to_array(%s, ' ')) AS t(term)
                CROSS JOIN LATERAL (
                    SELECT count(*) AS n, array_agg(x.id) AS ids FROM (
                        SELECT v.id FROM memory_entryversion v
                        WHERE v.search_vector @@ ('''' || t.term || '''')::tsquery
                        AND v.memory_id = %s
                        LIMIT %s
                    ) AS x
                ) AS c
            """
        params: list[int | str] = [
            self.postings_cap,
            *state_params,
            " ".join(terms),
            self.memory.pk,
            cap,
        ]
        return sql, params

    def _count_query_sqlite(self, terms: Sequence[str]) -> tuple[str, list[int | str]]:
        """The SQL and parameters of :meth:`_count` on SQLite."""
        cap = self.postings_cap + 1
        state = "" if self.heads else " AND h.state = %s"
        state_params: list[int | str] = [] if self.heads else [HeadState.ACTIVE]
        # The scope token keeps the match inside the Memory: the version row (wide: body
        # and tokens) is never read, only the narrow head row, found by its version (the
        # unary + keeps the planner off the (memory, state) index, which would walk every
        # head of the Memory for each term).
        unindexed_state = state.replace("h.state", "+h.state")
        sql = f"""
                WITH c AS MATERIALIZED (
                    SELECT j.value AS term, (
                        SELECT json_group_array(hit.vid) FROM (
                            SELECT rowid AS vid FROM memory_entryversion_fts
                            WHERE memory_entryversion_fts MATCH (%s || '"' || j.value || '"')
                            LIMIT %s
                        ) AS hit
                    ) AS ids
                    FROM json_each(%s) AS j
                )
                SELECT c.term, json_array_length(c.ids) AS n,
                    CASE WHEN json_array_length(c.ids) <= %s THEN (
                        SELECT coalesce(group_concat(h.entry_id), '')
                        FROM json_each(c.ids) AS p
                        CROSS JOIN memory_head h ON h.version_id = p.value
                        WHERE +h.memory_id = %s{unindexed_state}
                    ) END
                FROM c
            """
        scope = f'scope:"m{int(self.memory.pk)}" AND searchable_text:'
        params: list[int | str] = [
            scope,
            cap,
            json.dumps(list(terms)),
            self.postings_cap,
            self.memory.pk,
            *state_params,
        ]
        return sql, params

    def _postings(self, keys: Sequence[str]) -> list[tuple[str, int]]:
        """``(term, entry_pk)`` of the heads of the view holding each key, in one query (at
        most ``postings_cap`` rows per key: a key is held by at most that many versions)."""
        state = "" if self.heads else " AND h.state = %s"
        state_params: list[int | str] = [] if self.heads else [HeadState.ACTIVE]
        if connection.vendor == "postgresql":
            sql = f"""
                SELECT t.term, p.entry_id
                FROM unnest(string_to_array(%s, ' ')) AS t(term)
                CROSS JOIN LATERAL (
                    SELECT h.entry_id
                    FROM memory_entryversion v
                    JOIN memory_head h ON h.version_id = v.id
                    WHERE v.search_vector @@ ('''' || t.term || '''')::tsquery
                        AND v.memory_id = %s{state}
                ) AS p
            """
            params: list[int | str] = [
                " ".join(keys),
                self.memory.pk,
                *state_params,
            ]
        else:
            # The scope token keeps the match inside the Memory: the version row (wide: body
            # and tokens) is never read, only the narrow head row, found by its version (the
            # unary + keeps the planner off the (memory, state) index, which would walk every
            # head of the Memory for each term).
            unindexed_state = state.replace("h.state", "+h.state")
            sql = f"""
                SELECT j.value, h.entry_id
                FROM json_each(%s) AS j
                JOIN memory_entryversion_fts f
                    ON f.memory_entryversion_fts MATCH (%s || '"' || j.value || '"')
                CROSS JOIN memory_head h ON h.version_id = f.rowid
                WHERE +h.memory_id = %s{unindexed_state}
            """
            scope = f'scope:"m{int(self.memory.pk)}" AND searchable_text:'
            params = [json.dumps(list(keys)), scope, self.memory.pk, *state_params]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        self.queries += 1
        self.postings_read += len(rows)
        return [(str(t), int(e)) for t, e in rows]

    # --- The batch ---------------------------------------------------------------------------

    def _keep(self, lists: Mapping[str, list[int]]) -> None:
        """Keep posting lists for the next batches, at most ``postings_budget`` rows in all
        (past it the kept lists are dropped first)."""
        kept = self._postings_kept
        rows = sum(len(v) for v in lists.values())
        if self._kept_rows + rows > self.postings_budget:
            kept.clear()
            self._kept_rows = 0
        if rows <= self.postings_budget:
            kept.update(lists)
            self._kept_rows += rows

    def keys(self, terms: Sequence[str]) -> list[str]:
        """The ``key_terms`` most informative of an entry's ``terms`` (their frequencies must be
        counted; the entry is a head of the view): content terms (:func:`content`) held by at
        most ``postings_cap`` versions and by another head than the entry's own, rarest first."""
        return self._keys(content(terms)[0])

    def _keys(self, found: Sequence[str]) -> list[str]:
        """:meth:`keys` of an entry's content terms ``found``."""
        held, frequencies = self.held, self.frequencies
        usable = [
            t for t in found if held.get(t, 0) >= 2 and frequencies.get(t, 0) <= self.postings_cap
        ]
        usable.sort(key=lambda t: (held[t], frequencies[t], t))
        return usable[: self.key_terms]

    def of(self, texts: Mapping[int, str]) -> dict[int, list[int]]:
        """``{entry_pk: [neighbour pks, best first]}`` for a batch of ``{entry_pk:
        searchable_text}``: at most two queries whatever the batch's size — the frequencies of
        the terms not counted yet in this run, the postings of the keys not kept from an
        earlier batch (none when there are none)."""
        terms = {pk: stored_terms(text) for pk, text in texts.items()}
        entries = {pk: content(ts) for pk, ts in terms.items()}
        keys, postings = self._keys_and_postings(terms, {pk: c for pk, (c, _) in entries.items()})
        return self._rank(entries, keys, postings)

    def _keys_and_postings(
        self, terms: Mapping[int, Sequence[str]], contents: Mapping[int, Sequence[str]]
    ) -> tuple[dict[int, list[str]], dict[str, list[int]]]:
        """Each entry's keys and the posting list of every key (steps 2–4 of the module
        docstring): from the index, with what earlier batches of the run read."""
        known = self.frequencies
        unknown = sorted({t for ts in terms.values() for t in ts if t not in known})
        counted = self._count(unknown) if unknown else {}
        keys = {pk: self._keys(c) for pk, c in contents.items()}
        needed = {k for ks in keys.values() for k in ks}
        kept = self._postings_kept
        postings = {k: kept[k] for k in needed if k in kept}
        postings.update((k, counted[k]) for k in needed if k in counted)
        wanted = sorted(needed - set(postings))
        fetched: dict[str, list[int]] = {}
        if wanted:
            fetched = {k: [] for k in wanted}
            for term, entry_pk in self._postings(wanted):
                fetched[term].append(entry_pk)
            postings.update(fetched)
        self._keep({**counted, **fetched})
        return keys, postings

    def _rank(
        self,
        entries: Mapping[int, tuple[list[str], int]],
        keys: Mapping[int, list[str]],
        postings: Mapping[str, list[int]],
    ) -> dict[int, list[int]]:
        """Step 5 of the module docstring: per entry, the entries qualifying by the content
        keys they share, best first."""
        out: dict[int, list[int]] = {}
        for pk, ks in keys.items():
            need = self._need(*entries[pk], ks)
            if need <= 0:
                out[pk] = []
                continue
            shared = Counter(chain.from_iterable(postings.get(k, ()) for k in ks))
            shared.pop(pk, None)
            qualified = [n for n, c in shared.items() if c >= need]
            qualified.sort(key=lambda n: (-shared[n], n))
            out[pk] = qualified[: self.limit]
        return out

    def _need(self, content: Sequence[str], floor: int, keys: Sequence[str]) -> int:
        """How many of its ``keys`` an entry's neighbour must hold (0: none can qualify): the
        admission ``floor`` of the entry's terms, less its ``content`` terms that other entries
        may hold but are not keys (a neighbour may hold those instead), at least one."""
        if not keys:
            return 0
        key_set = set(keys)
        # Held by another head, or too common to be counted: a neighbour may hold it.
        elsewhere = sum(1 for t in content if t not in key_set and self.held.get(t, 2) >= 2)
        return max(1, floor - elsewhere)


def content(terms: Sequence[str]) -> tuple[list[str], int]:
    """An entry's content terms, in order, and the admission floor of its ``terms``: the
    lexical channel's own (``memory.search.content_and_floor``), except that an entry made only
    of stop words has no content term (the channel then counts every term; a pass pairs on
    none of them)."""
    found, floor = content_and_floor(terms)
    stops = stop_terms()
    return [t for t in found if t not in stops], floor


#: A scope of more entries than this is not indexed in memory (:func:`scoped_neighbourhoods`).
SCOPE_MAX = 20_000


@dataclass
class ScopedNeighbourhoods(Neighbourhoods):
    """Lexical neighbourhoods among a bounded scope of entries only, e.g. the promotion pass's
    eligible working notes (nothing outside them can pair with a note): the scope's light rows
    (:class:`Neighbour`) are read once, and its frequencies and posting lists are counted from
    their stored tokens in memory — no index lookup per term, and the neighbours' rows are
    already read. Frequencies are the number of the scope's heads holding a term; otherwise the
    same keys, floor and ranking as :class:`Neighbourhoods`, and identical on every backend.
    Built by :func:`scoped_neighbourhoods`, which bounds the scope by ``SCOPE_MAX``."""

    #: The entries of the scope (read once, by :func:`scoped_neighbourhoods`).
    scope: frozenset[int] = frozenset()
    _index: dict[str, list[int]] = field(default_factory=dict)

    def load(self, rows: Mapping[int, Neighbour]) -> None:
        """Index the scope's rows: frequencies of every term of the scope, posting lists of the
        terms held by at most ``postings_cap`` of its heads."""
        index: dict[str, list[int]] = {}
        for pk in sorted(rows):
            for term in rows[pk].tokens:
                index.setdefault(term, []).append(pk)
        self.frequencies = {t: len(pks) for t, pks in index.items()}
        self.held = dict(self.frequencies)
        self._index = {t: pks for t, pks in index.items() if len(pks) <= self.postings_cap}
        self.postings_read = sum(len(pks) for pks in self._index.values())
        self._neighbours_kept = dict(rows)
        self.scope = frozenset(rows)

    def _keys_and_postings(
        self, terms: Mapping[int, Sequence[str]], contents: Mapping[int, Sequence[str]]
    ) -> tuple[dict[int, list[str]], dict[str, list[int]]]:
        keys = {pk: self._keys(c) for pk, c in contents.items()}
        index = self._index
        needed = {k for ks in keys.values() for k in ks}
        return keys, {k: index[k] for k in needed if k in index}


def scoped_neighbourhoods(
    memory: Memory, scope: Iterable[int], *, heads: bool = True, limit: int = LIMIT
) -> Neighbourhoods:
    """A finder among the entries ``scope`` (pks, at most ``SCOPE_MAX`` + 1 are taken): a
    :class:`ScopedNeighbourhoods` when the scope is within ``SCOPE_MAX``, else the index-backed
    :class:`Neighbourhoods` over the view (``heads``), which bounds what it reads per batch."""
    pks = list(scope)
    if len(pks) > SCOPE_MAX:
        return Neighbourhoods(memory, heads=heads, limit=limit)
    finder = ScopedNeighbourhoods(memory, heads=heads, limit=limit)
    if pks:
        finder.load(load_neighbours(memory, pks))
        finder.queries = 1
    return finder
