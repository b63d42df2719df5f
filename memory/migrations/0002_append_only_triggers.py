"""Database-enforced append-only tables.

PostgreSQL refuses UPDATE and DELETE on these tables with a trigger (TRUNCATE, used only by
test teardown, stays possible). SQLite refuses UPDATE; DELETE is left to Python there because
the test runner empties tables with DELETE.
"""

from django.db import migrations

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


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_FUNCTION, params=None)
        for table in APPEND_ONLY_TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION steward_append_only();"
            )
    elif vendor == "sqlite":
        for table in APPEND_ONLY_TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only'); END;"
            )


def remove(apps, schema_editor):
    for table in APPEND_ONLY_TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only"
                              + (f" ON {table}" if schema_editor.connection.vendor == "postgresql" else ""))


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [migrations.RunPython(install, remove)]
