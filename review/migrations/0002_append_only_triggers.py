"""Decisions, operations and compensations are append-only in the database too."""

from django.db import migrations

TABLES = ["review_decision", "review_maintenanceoperation", "review_compensation"]


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table in TABLES:
        if vendor == "postgresql":
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION steward_append_only();"
            )
        elif vendor == "sqlite":
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE ON {table} "
                f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only'); END;"
            )


def remove(apps, schema_editor):
    pg = schema_editor.connection.vendor == "postgresql"
    for table in TABLES:
        schema_editor.execute(
            f"DROP TRIGGER IF EXISTS {table}_append_only" + (f" ON {table}" if pg else "")
        )


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial"), ("memory", "0002_append_only_triggers")]
    operations = [migrations.RunPython(install, remove)]
