"""The audit hash chain (memory.audit_chain): an append-only seal per audit event; the events
written before it are sealed here, in id order."""

import django.db.models.deletion
from django.db import migrations, models

from memory.audit_chain import install_guards, remove_guards, seal_all_existing


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0023_batch_import_key"),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditSeal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.BigIntegerField(blank=True, null=True, unique=True)),
                ("digest", models.CharField(max_length=64)),
                ("chain", models.CharField(blank=True, default="", max_length=64)),
                (
                    "event",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="seal",
                        to="memory.auditevent",
                    ),
                ),
            ],
            options={"abstract": False},
        ),
        migrations.RunPython(install_guards, remove_guards),
        migrations.RunPython(seal_all_existing, migrations.RunPython.noop),
    ]
