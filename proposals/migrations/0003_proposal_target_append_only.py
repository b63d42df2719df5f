"""A proposal's targets (the recorded pre-state) are append-only in the database too."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(["proposals_proposaltarget"])


class Migration(migrations.Migration):
    dependencies = [("proposals", "0002_inbox_indexes"), ("memory", "0011_append_only_erase_guard")]
    operations = [migrations.RunPython(install, remove)]
