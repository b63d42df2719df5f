"""Append-only records: refused in Python, and by the database itself."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memory.models import AppendOnlyError, AuditEvent, EntryVersion, Revision
from tests.factories import remember


@pytest.fixture
def written(memory, agent):
    return remember(memory, agent.actor, "Builds are reproducible with Nix")


def test_python_refuses_update_and_delete(written):
    rev = Revision.objects.get()
    rev.reason = "rewritten"
    with pytest.raises(AppendOnlyError):
        rev.save()
    with pytest.raises(AppendOnlyError):
        EntryVersion.objects.get().delete()


@pytest.mark.parametrize(
    "table",
    ["memory_revision", "memory_entryversion", "memory_auditevent", "memory_revisionchange"],
)
def test_raw_sql_update_is_refused_by_the_database(written, table):
    column = {
        "memory_revision": "reason",
        "memory_entryversion": "body",
        "memory_auditevent": "label",
        "memory_revisionchange": "state_reason",
    }[table]
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"UPDATE {table} SET {column} = 'tampered'")
    assert not Revision.objects.filter(reason="tampered").exists()
    assert not EntryVersion.objects.filter(body="tampered").exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="DELETE triggers are PostgreSQL-only")
@pytest.mark.parametrize("table", ["memory_revision", "memory_entryversion", "memory_auditevent"])
def test_raw_sql_delete_is_refused_on_postgresql(written, table):
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"DELETE FROM {table}")
    assert Revision.objects.count() == 1
    assert AuditEvent.objects.filter(action="entry.added").count() == 1
