"""Maintenance runs are append-only in the database too (see 0002 and 0004)."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(["memory_maintenancerun"])


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_maintenance_run")]
    operations = [migrations.RunPython(install, remove)]
