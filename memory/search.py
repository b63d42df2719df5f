"""Current-state recall: channels, validity before fusion, RRF, the coarse pool (DESIGN.md §6).

Lexical channel
    FTS5 on SQLite, a GIN-indexed tsvector on PostgreSQL, both over the analyzer's tokens in
    ``EntryVersion.searchable_text`` (migration 0005). The full-text index only *finds* rows
    containing at least one query term; the admission floor and the order are computed with the
    same portable SQL on both backends, so SQLite and PostgreSQL return the same candidates in the
    same order:

    - admission floor: a query of n ≤ 2 distinct terms needs 1 matching term, a longer one
      max(2, ⌈0.25·n⌉);
    - order: more distinct matching terms first, then shorter texts (fewer tokens), then entry
      id, then version id — a total order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from .models import HeadState, Validity
from .text import distinct_terms

# Longest lexeme a PostgreSQL tsvector holds; longer tokens are not indexed there, so neither
# backend searches for them.
MAX_TERM_BYTES = 2046


def setting(name: str, default: int) -> int:
    """A search constant from ``settings.STEWARD_SEARCH`` (seeds live in config/settings.py)."""
    return int(getattr(settings, "STEWARD_SEARCH", {}).get(name, default))


def query_terms(text: str) -> list[str]:
    """Distinct analyzer terms of a query, first-seen order, bounded in number and length."""
    terms = [t for t in distinct_terms(text) if len(t.encode("utf-8")) <= MAX_TERM_BYTES]
    return terms[: setting("MAX_QUERY_TERMS", 64)]


def admission_floor(n_terms: int) -> int:
    """Distinct query terms a text must contain to be a lexical candidate."""
    if n_terms <= 2:
        return 1
    return max(2, math.ceil(0.25 * n_terms))


def channel_cap(k: int) -> int:
    """Most candidates one channel may contribute: max(4k, 32)."""
    return max(4 * k, setting("CHANNEL_MIN", 32))


# --- Lexical channel ------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One channel hit: an entry version at a 1-based rank within its channel."""

    entry_pk: int
    version_pk: int
    rank: int


# Views the lexical channel can scope to.
ACTIVE = "active"  # head versions of active entries (the near-duplicate check)
CURRENT = "current"  # head versions whose validity is current or unresolved_conflict
HISTORY = "history"  # every version of every entry


def _match_sql(terms: Sequence[str]) -> tuple[str, str]:
    """The backend's full-text predicate (any term) and its one parameter."""
    if connection.vendor == "postgresql":
        query = " | ".join(f"'{t}'" for t in terms)
        return "steward_tsvector(v.searchable_text) @@ %s::tsquery", query
    query = " OR ".join(f'"{t}"' for t in terms)
    return (
        "v.id IN (SELECT rowid FROM memory_entryversion_fts "
        "WHERE memory_entryversion_fts MATCH %s)",
        query,
    )


def lexical_channel(
    memory_pk: int,
    terms: Sequence[str],
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    exclude_entry_pks: Iterable[int] = (),
) -> list[Candidate]:
    """Lexical candidates of ``memory_pk`` for already-analyzed ``terms``, best first.

    ``view`` scopes the rows (ACTIVE / CURRENT / HISTORY); ``sensitivities`` (when given) is
    the caller's clearance, applied in the same query so nothing above it is ever ranked. One
    query, whatever the size of the Memory.
    """
    if not terms or limit <= 0:
        return []
    floor = admission_floor(len(terms))
    find = "strpos" if connection.vendor == "postgresql" else "instr"
    hits = " + ".join(
        f"(CASE WHEN {find}(' ' || v.searchable_text || ' ', %s) > 0 THEN 1 ELSE 0 END)"
        for _ in terms
    )
    match_sql, match_param = _match_sql(terms)
    params: list[Any] = [f" {t} " for t in terms]
    joins = ""
    where = [match_sql, "v.memory_id = %s"]
    params += [match_param, memory_pk]
    if view in (ACTIVE, CURRENT):
        joins += " JOIN memory_head h ON h.version_id = v.id"
        where.append("h.state = %s")
        params.append(HeadState.ACTIVE)
    if view == CURRENT:
        joins += " JOIN memory_lifecycleprojection p ON p.entry_id = v.entry_id"
        where.append("p.validity IN (%s, %s)")
        params += [Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
    if sensitivities is not None:
        joins += " JOIN memory_entry e ON e.id = v.entry_id"
        where.append(f"e.sensitivity IN ({', '.join(['%s'] * len(sensitivities))})")
        params += list(sensitivities)
    excluded = sorted(set(exclude_entry_pks))
    if excluded:
        where.append(f"v.entry_id NOT IN ({', '.join(['%s'] * len(excluded))})")
        params += excluded
    sql = f"""
        SELECT entry_id, id FROM (
            SELECT v.entry_id AS entry_id, v.id AS id, ({hits}) AS matched,
                   length(v.searchable_text) - length(replace(v.searchable_text, ' ', ''))
                       AS gaps
            FROM memory_entryversion v{joins}
            WHERE {" AND ".join(where)}
        ) scored
        WHERE matched >= %s
        ORDER BY matched DESC, gaps ASC, entry_id ASC, id ASC
        LIMIT %s
    """
    params += [floor, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Candidate(e, v, i) for i, (e, v) in enumerate(rows, start=1)]


def lexical_candidates(
    memory_pk: int, text: str, *, limit: int = 20, exclude_entry_pks: Iterable[int] = ()
) -> list[int]:
    """Pks of entries whose *active head version* matches ``text`` lexically, best first.

    Uses the admission floor of DESIGN.md §6; at most ``limit`` results; never padded. For the
    bounded near-duplicate check at admission (DESIGN.md §7): no clearance filter (the check is
    the system's, scoped to the Memory), and nothing is written.
    """
    found = lexical_channel(
        memory_pk,
        query_terms(text),
        view=ACTIVE,
        limit=limit,
        exclude_entry_pks=exclude_entry_pks,
    )
    return [c.entry_pk for c in found]
