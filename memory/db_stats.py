"""Planner statistics after bulk work: :func:`analyze`.

A bulk load or a rebuild changes a table's size and value distribution at once, and both
backends plan from statistics that only ``ANALYZE`` gathers:

- PostgreSQL keeps planning from the old ones while autovacuum is off (or before it gets to the
  table): a lexical query planned with no statistics for a freshly loaded table took 9.5 s
  instead of 23 ms.
- SQLite, without a ``sqlite_stat1`` row for an index, assumes an equality on it is selective:
  it walked a Memory's projection in keyset batches through the ``(memory, state)`` index with a
  sort of every matching row per batch (each batch O(Memory): the decay scan of 100,000 entries
  took 16 s), where with statistics it reads the primary-key range (docs/benchmarks.md).

So every bulk path ends with :func:`analyze` of the tables it filled: ``rebuild_projection``
(write mode), the re-analysis of entry versions (``memory.search.reindex``), the vector backfill
(``rebuild_projection --vectors``), the demo loader and the benchmark seeds. PostgreSQL's
``ANALYZE`` reads a bounded sample (``default_statistics_target``); SQLite's reads the table and
its indexes (0.16 s for 100,000 projection rows here). Both run inside a transaction.

On SQLite only tables of at least :data:`SQLITE_MIN_ROWS` rows are analyzed: below that any plan
is fast, and statistics taken that early would be the first to go stale as the table grows
(nothing refreshes them but the next bulk path; without them SQLite's heuristics never go stale).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import DEFAULT_DB_ALIAS, connections, models

#: The tables a projection rebuild, a bulk load of entries or the demo fills.
MEMORY_TABLES = (
    "memory_entry",
    "memory_entryversion",
    "memory_evidence",
    "memory_revision",
    "memory_revisionchange",
    "memory_head",
    "memory_relation",
    "memory_lifecycleprojection",
)
PROJECTION_TABLES = ("memory_lifecycleprojection",)
#: SQLite tables smaller than this are left to the planner's heuristics (see the module doc).
SQLITE_MIN_ROWS = 10_000
#: The derived vector tables (``memory_vector`` exists only with an index: skipped otherwise).
VECTOR_TABLES = ("memory_entryembedding", "memory_indexedvector", "memory_vector")


def _name(table: str | type[models.Model]) -> str:
    return table if isinstance(table, str) else table._meta.db_table


def analyze(
    tables: Iterable[str | type[models.Model]], *, using: str = DEFAULT_DB_ALIAS
) -> list[str]:
    """Refresh the planner statistics of ``tables`` (names or models): one ``ANALYZE`` of them
    on PostgreSQL; on SQLite one per table of at least :data:`SQLITE_MIN_ROWS` rows; nothing on
    other backends. Tables that do not exist are skipped. Returns the tables analyzed."""
    connection = connections[using]
    names = list(dict.fromkeys(_name(t) for t in tables))
    if not names or connection.vendor not in ("postgresql", "sqlite"):
        return []
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p', 'm') "
                "AND relname = ANY(%s) AND pg_table_is_visible(oid)",
                [names],
            )
            present = {row[0] for row in cursor.fetchall()}
            found = [n for n in names if n in present]
            if found:
                cursor.execute("ANALYZE " + ", ".join(quote(n) for n in found))
            return found
        found = []
        for name in names:
            cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [name])
            if cursor.fetchone() is None:
                continue
            # Reads at most SQLITE_MIN_ROWS rows (a count would read them all).
            cursor.execute(
                f"SELECT 1 FROM {quote(name)} LIMIT 1 OFFSET %s", [max(0, SQLITE_MIN_ROWS - 1)]
            )
            if cursor.fetchone() is not None:
                cursor.execute(f"ANALYZE {quote(name)}")
                found.append(name)
        return found
