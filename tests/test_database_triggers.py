"""Every append-only table and the SQLite search index keep their database triggers after all
migrations (a later migration that rebuilds a table on SQLite would silently drop them), and the
database itself refuses the bypasses: TRUNCATE (also with CASCADE) on PostgreSQL, a raw DELETE or
UPDATE on SQLite.

The list of append-only tables is discovered from the models (every ``AppendOnlyModel``), so a new
append-only table whose migration forgets the triggers fails here."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from lib.append_only import trigger_names
from tests.conftest import append_only_tables

KNOWN = {
    "memory_entryversion",
    "memory_evidence",
    "memory_revision",
    "memory_revisionchange",
    "memory_sourcedeclaration",
    "memory_auditevent",
    "memory_maintenancerun",
    "review_decision",
    "review_maintenanceoperation",
    "review_compensation",
    "proposals_proposaltarget",
}


def _triggers() -> set[str]:
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cur.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        return {row[0] for row in cur.fetchall()}


def test_append_only_models_include_every_history_table():
    assert set(append_only_tables()) >= KNOWN


@pytest.mark.django_db
def test_append_only_triggers_survive_every_migration():
    present = _triggers()
    missing = {t: sorted(trigger_names(t) - present) for t in append_only_tables()}
    assert {t: names for t, names in missing.items() if names} == {}


def _refused(sql: str) -> str:
    with pytest.raises(DatabaseError) as exc, transaction.atomic(), connection.cursor() as cur:
        cur.execute(sql)
    return str(exc.value)


# Row triggers fire only on rows: these tables hold rows after one write (see revision_rows);
# the others carry the very same triggers (test above).
WRITTEN_BY_ONE_ADD = [
    "memory_entryversion",
    "memory_evidence",
    "memory_revision",
    "memory_revisionchange",
    "memory_sourcedeclaration",
    "memory_auditevent",
]


@pytest.mark.django_db
@pytest.mark.parametrize("table", WRITTEN_BY_ONE_ADD)
def test_raw_delete_and_update_are_refused(table, revision_rows):
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        assert cur.fetchone()[0] > 0
    assert "append-only" in _refused(f"DELETE FROM {table}")
    assert "append-only" in _refused(f"UPDATE {table} SET id = id")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
@pytest.mark.parametrize("table", sorted(KNOWN))
def test_truncate_is_refused_even_with_cascade(table):
    _refused(f"TRUNCATE {table}")  # a foreign key or the guard refuses it
    assert "append-only" in _refused(f"TRUNCATE {table} CASCADE")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
def test_truncating_a_parent_with_cascade_is_refused():
    # memory_memory itself is not append-only, but CASCADE would empty every history table.
    assert "append-only" in _refused("TRUNCATE memory_memory CASCADE")


@pytest.fixture
def revision_rows(memory, agent):
    """At least one row in the history tables, so a row trigger has something to fire on."""
    from memory import actions

    actions.add_entry(
        memory,
        actor=agent.actor,
        body="The deploy target is eu-2.",
        kind="fact",
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    )


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 index is SQLite's")
def test_sqlite_search_index_triggers_exist():
    assert {
        "memory_entryversion_fts_ai",
        "memory_entryversion_fts_ad",
        "memory_entryversion_fts_au",
    } <= _triggers()
