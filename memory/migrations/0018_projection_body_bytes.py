"""The projection keeps its head version's body size in bytes, so the inventory's manifest size
is a sum over projection rows instead of a read of every active entry's text."""

from django.db import migrations, models

FILL = {
    "postgresql": (
        "UPDATE memory_lifecycleprojection AS p SET body_bytes = octet_length(v.body) "
        "FROM memory_entryversion AS v WHERE v.id = p.version_id"
    ),
    "sqlite": (
        "UPDATE memory_lifecycleprojection SET body_bytes = ("
        "SELECT length(CAST(v.body AS BLOB)) FROM memory_entryversion AS v "
        "WHERE v.id = memory_lifecycleprojection.version_id)"
    ),
}


def fill(apps, schema_editor):
    schema_editor.execute(FILL[schema_editor.connection.vendor])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0017_audit_entry_lookups"),
    ]

    operations = [
        migrations.AddField(
            model_name="lifecycleprojection",
            name="body_bytes",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
