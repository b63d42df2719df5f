"""Database-enforced append-only tables.

PostgreSQL refuses UPDATE and DELETE on these tables with a trigger (TRUNCATE, used only by
test teardown, stays possible). SQLite refuses UPDATE; DELETE is left to Python there because
the test runner empties tables with DELETE.
"""

from django.db import migrations

from lib.append_only import triggers

APPEND_ONLY_TABLES = [
    "memory_entryversion",
    "memory_evidence",
    "memory_revision",
    "memory_revisionchange",
    "memory_sourcedeclaration",
]

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION steward_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


_install_triggers, _remove_triggers = triggers(APPEND_ONLY_TABLES)


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PG_FUNCTION, params=None)
    _install_triggers(apps, schema_editor)


def remove(apps, schema_editor):
    _remove_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [migrations.RunPython(install, remove)]
