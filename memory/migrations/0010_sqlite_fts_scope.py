"""SQLite: scope the FTS5 index by Memory.

0005 indexed only the tokens, so a search in a small Memory walked the posting lists of every
Memory in the database before filtering by ``memory_id``. The index now also holds one scope
token per row (``m<memory_id>``, in its own column, so no body word can collide with it) and each
per-term MATCH is ``scope AND term``: FTS5 intersects the two posting lists by seeking, and a
Memory pays for its own rows only. The index stays external-content (no second copy of the
text): it reads from a view over ``memory_entryversion`` that adds the scope column. PostgreSQL is
untouched (its GIN rows are filtered by ``memory_id`` through a bitmap AND or a scan per Memory).
"""

from django.db import migrations

SQLITE_FORWARD = [
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ai",
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ad",
    "DROP TABLE IF EXISTS memory_entryversion_fts",
    """
    CREATE VIEW memory_entryversion_fts_source AS
    SELECT id, searchable_text, 'm' || memory_id AS scope FROM memory_entryversion
    """,
    """
    CREATE VIRTUAL TABLE memory_entryversion_fts USING fts5(
        searchable_text,
        scope,
        content='memory_entryversion_fts_source',
        content_rowid='id',
        tokenize="ascii tokenchars '_'"
    )
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ai AFTER INSERT ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(rowid, searchable_text, scope)
        VALUES (new.id, new.searchable_text, 'm' || new.memory_id);
    END
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ad AFTER DELETE ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(memory_entryversion_fts, rowid, searchable_text, scope)
        VALUES ('delete', old.id, old.searchable_text, 'm' || old.memory_id);
    END
    """,
    "INSERT INTO memory_entryversion_fts(memory_entryversion_fts) VALUES ('rebuild')",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ai",
    "DROP TRIGGER IF EXISTS memory_entryversion_fts_ad",
    "DROP TABLE IF EXISTS memory_entryversion_fts",
    "DROP VIEW IF EXISTS memory_entryversion_fts_source",
    """
    CREATE VIRTUAL TABLE memory_entryversion_fts USING fts5(
        searchable_text, content='memory_entryversion', content_rowid='id',
        tokenize="ascii tokenchars '_'"
    )
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ai AFTER INSERT ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(rowid, searchable_text)
        VALUES (new.id, new.searchable_text);
    END
    """,
    """
    CREATE TRIGGER memory_entryversion_fts_ad AFTER DELETE ON memory_entryversion BEGIN
        INSERT INTO memory_entryversion_fts(memory_entryversion_fts, rowid, searchable_text)
        VALUES ('delete', old.id, old.searchable_text);
    END
    """,
    "INSERT INTO memory_entryversion_fts(memory_entryversion_fts) VALUES ('rebuild')",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in SQLITE_FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in SQLITE_BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_maintenance_run_append_only")]
    operations = [migrations.RunPython(forward, backward)]
