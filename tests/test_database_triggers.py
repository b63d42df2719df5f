"""Every append-only table and the SQLite search index keep their database triggers after all
migrations (a later migration that rebuilds a table on SQLite would silently drop them)."""

from __future__ import annotations

import pytest
from django.db import connection

APPEND_ONLY = [
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
]


def _triggers() -> set[str]:
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cur.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        return {row[0] for row in cur.fetchall()}


@pytest.mark.django_db
def test_append_only_triggers_survive_every_migration():
    missing = [t for t in APPEND_ONLY if f"{t}_append_only" not in _triggers()]
    assert missing == []


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 index is SQLite's")
def test_sqlite_search_index_triggers_exist():
    assert {"memory_entryversion_fts_ai", "memory_entryversion_fts_ad"} <= _triggers()
