"""Decisions, operations and compensations refuse TRUNCATE (PostgreSQL) and DELETE (SQLite) too."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(
    ["review_decision", "review_maintenanceoperation", "review_compensation"],
    remove_only=["_no_erase"],
)


class Migration(migrations.Migration):
    dependencies = [("review", "0003_review_claim"), ("memory", "0011_append_only_erase_guard")]
    operations = [migrations.RunPython(install, remove)]
