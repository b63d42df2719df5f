"""PostgreSQL: keep the lexical tsvector in a stored generated column with its own GIN index.

0005 indexed the expression ``steward_tsvector(searchable_text)``. Whenever the planner chose to
*filter* rows with that expression instead of probing the index (it does, for a common term in a
large Memory), it re-tokenized every row. A stored generated column computes the tsvector once,
at insert, so both the index probe and any filter are cheap. The column is derived from
``searchable_text`` by the database itself: the writer does not change, and ``EntryVersion`` stays
append-only (adding the column rewrites the table; it fires no row triggers). SQLite is untouched.
"""

from django.db import migrations

PG_FORWARD = [
    """
    ALTER TABLE memory_entryversion ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (steward_tsvector(searchable_text)) STORED
    """,
    "CREATE INDEX memory_entryversion_search_vector ON memory_entryversion USING gin (search_vector)",
    "DROP INDEX IF EXISTS memory_entryversion_lexical",
]
PG_BACKWARD = [
    """
    CREATE INDEX IF NOT EXISTS memory_entryversion_lexical ON memory_entryversion
    USING gin (steward_tsvector(searchable_text))
    """,
    "DROP INDEX IF EXISTS memory_entryversion_search_vector",
    "ALTER TABLE memory_entryversion DROP COLUMN IF EXISTS search_vector",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in PG_FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in PG_BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_entry_embedding")]
    operations = [migrations.RunPython(forward, backward)]
