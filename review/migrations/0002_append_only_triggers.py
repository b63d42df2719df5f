"""Decisions, operations and compensations are append-only in the database too."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(["review_decision", "review_maintenanceoperation", "review_compensation"])


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial"), ("memory", "0002_append_only_triggers")]
    operations = [migrations.RunPython(install, remove)]
