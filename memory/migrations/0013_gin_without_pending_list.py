"""PostgreSQL: the lexical GIN index is updated in place (``fastupdate = off``).

With the default pending list, every insert appends to an unsorted list that each full-text
lookup scans linearly until a vacuum merges it: under a steady write load the near-duplicate
check of an add (and every search) paid tens of milliseconds for it. Inserting straight into the
index costs an add a few index pages instead. SQLite is untouched.
"""

from django.db import migrations


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER INDEX memory_entryversion_search_vector SET (fastupdate = off)"
        )
        # Merge what is already pending (the option does not flush it by itself).
        schema_editor.execute(
            "SELECT gin_clean_pending_list('memory_entryversion_search_vector'::regclass)"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER INDEX memory_entryversion_search_vector RESET (fastupdate)")


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_maintenance_lock")]

    operations = [migrations.RunPython(forward, backward)]
