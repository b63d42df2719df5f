"""PostgreSQL: a Memory's versions in the order of their length (``term_count``), then entry
and id — the order BM25 ranks the rows of one common word in.

A row's BM25 score is its matched terms' weight over ``A + C·dl``: among the rows holding a
word most rows hold ("the"), the best are the shortest. The exact lexical channel reads such a
lookup shortest first along this index and stops as soon as no longer row could enter
(``memory.search.lexical._walk_by_length``), instead of ranking hundreds of thousands of rows.
SQLite ranks from the FTS5 posting lists and is untouched.
"""

from django.db import migrations

NAME = "memory_entryversion_length_order"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {NAME} ON memory_entryversion "
            "(memory_id, term_count, entry_id, id)"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0027_entry_session_turn_order")]

    operations = [migrations.RunPython(forward, backward)]
