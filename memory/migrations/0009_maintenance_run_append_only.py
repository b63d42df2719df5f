"""Maintenance runs are append-only in the database too (see 0002 and 0004)."""

from django.db import migrations


def install(apps, schema_editor):
    table = "memory_maintenancerun"
    vendor = schema_editor.connection.vendor
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
    suffix = " ON memory_maintenancerun" if schema_editor.connection.vendor == "postgresql" else ""
    schema_editor.execute("DROP TRIGGER IF EXISTS memory_maintenancerun_append_only" + suffix)


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_maintenance_run")]
    operations = [migrations.RunPython(install, remove)]
