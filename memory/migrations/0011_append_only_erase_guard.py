"""Append-only tables refuse TRUNCATE on PostgreSQL and DELETE on SQLite too (see lib.append_only)."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(
    [
        "memory_entryversion",
        "memory_evidence",
        "memory_revision",
        "memory_revisionchange",
        "memory_sourcedeclaration",
        "memory_auditevent",
        "memory_maintenancerun",
    ],
    remove_only=["_no_erase"],
)


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_sqlite_fts_scope")]
    operations = [migrations.RunPython(install, remove)]
