"""The audit table is append-only in the database too (see 0002)."""

from django.db import migrations

from lib.append_only import triggers

install, remove = triggers(["memory_auditevent"])


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_audit_event")]
    operations = [migrations.RunPython(install, remove)]
