"""Re-analyzing stored versions: ``searchable_text`` and ``term_count`` recomputed from ``body``.

Both columns are derived from a version's immutable body by the analyzer (``memory.text``), so
when the analyzer changes (a new release, ``STEWARD_ANALYZER``) they are recomputed in place:
the versions stay the same rows, nothing authoritative changes. Rows are read in bounded
batches, keyset by primary key (no OFFSET, no long-running cursor); a batch rewrites only the
rows whose analysis differs, in its own transaction, through
``lib.append_only.rewriting_derived_columns`` (``EntryVersion`` stays append-only for everything
else). The indexes follow by themselves: PostgreSQL recomputes the generated ``search_vector``,
and on SQLite the update trigger of migration 0014 replaces the row's FTS5 entry. Idempotent: a
second run changes nothing. A run that may write ends with ``ANALYZE`` of the table on
PostgreSQL (``memory.db_stats.analyze``). Used by migration 0014 and ``manage.py
rebuild_projection --reindex`` (``--check`` counts the stale rows without writing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from lib.append_only import rewriting_derived_columns

from ..db_stats import analyze
from ..lexical_index import indexed_with_context, previous_turn_body, record_versions

BATCH_SIZE = 2000
TABLE = "memory_entryversion"


@dataclass
class ReindexReport:
    """How many versions were read, and how many had (or, checking, would get) a new analysis."""

    rows: int = 0
    changed: int = 0


def count_versions(using: str = DEFAULT_DB_ALIAS) -> int:
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {TABLE}")
        return int(cursor.fetchone()[0])


def reanalyze_versions(
    *,
    using: str = DEFAULT_DB_ALIAS,
    batch_size: int = BATCH_SIZE,
    check: bool = False,
    progress: Callable[[int], None] | None = None,
    recount: bool = True,
) -> ReindexReport:
    """Recompute ``searchable_text`` and ``term_count`` of every version, ``batch_size`` rows at a
    time; with ``check`` nothing is written. ``progress`` gets each batch's row count. Then the
    term statistics are recounted from the new text (``recount``: not before the migration that
    creates their tables).

    Raw SQL only (no model), so a migration can call it with the schema of its own state.
    """
    connection = connections[using]
    report = ReindexReport()
    last = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT v.id, v.body, v.searchable_text, v.term_count, v.memory_id, "
                f"e.session_id, e.id, e.sensitivity "
                f"FROM {TABLE} v JOIN memory_entry e ON e.id = v.entry_id "
                "WHERE v.id > %s ORDER BY v.id LIMIT %s",
                [last, max(1, batch_size)],
            )
            rows = cursor.fetchall()
        if not rows:
            if not check and recount:
                recount_terms(using=using)
                # New analysis, new token statistics: the lexical queries plan from them.
                analyze([TABLE], using=using)
            return report
        last = rows[-1][0]
        changes = []
        for pk, body, text, term_count, memory_pk, session_id, entry_pk, sensitivity in rows:
            context = previous_turn_body(
                memory_pk,
                session_id,
                entry_pk,
                sensitivity=sensitivity,
                before_version=pk,
                using=using,
            )
            new_text, new_count = indexed_with_context(body, context)
            if new_text != text or new_count != term_count:
                changes.append((new_text, new_count, pk))
        if changes and not check:
            _rewrite(connection, changes)
        report.rows += len(rows)
        report.changed += len(changes)
        if progress is not None:
            progress(len(rows))


def _rewrite(connection: BaseDatabaseWrapper, changes: list[tuple[str, int, int]]) -> None:
    with (
        transaction.atomic(using=connection.alias),
        rewriting_derived_columns(connection, TABLE),
        connection.cursor() as cursor,
    ):
        cursor.executemany(
            f"UPDATE {TABLE} SET searchable_text = %s, term_count = %s WHERE id = %s", changes
        )


def recount_terms(*, using: str = DEFAULT_DB_ALIAS, batch_size: int = BATCH_SIZE) -> int:
    """Recount every Memory's term statistics (``memory.lexical_index``) from the stored text,
    ``batch_size`` versions at a time (keyset by primary key), in one transaction: readers see
    the old counts or the new ones. Returns the versions counted."""
    connection = connections[using]
    counted = 0
    with transaction.atomic(using=using):
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memory_termstat")
            cursor.execute("DELETE FROM memory_lexicalcorpus")
        last = 0
        while True:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT id, memory_id, searchable_text, term_count FROM {TABLE} "
                    "WHERE id > %s ORDER BY id LIMIT %s",
                    [last, max(1, batch_size)],
                )
                rows = cursor.fetchall()
            if not rows:
                return counted
            last = rows[-1][0]
            by_memory: dict[int, list[tuple[str, int]]] = {}
            for _, memory_pk, text, term_count in rows:
                by_memory.setdefault(memory_pk, []).append((text, term_count))
            for memory_pk, texts in by_memory.items():
                record_versions(memory_pk, texts, using=using)
            counted += len(rows)
