"""Audit events found by entry and by revision without reading a Memory's whole trail.

- ``(memory_id, revision_number)`` and ``(memory_id, proposal_id)``: a revision's events (the
  revision page) and the events of the proposals touching an entry (its timeline) were a scan
  of every event of every Memory.
- PostgreSQL: a GIN index on ``entry_ids``. The entry filter of the audit log,
  ``GET /api/v1/audit/events?entry=`` and the export is a containment test
  (``entry_ids @> '["<uid>"]'``); without an index PostgreSQL read the events newest first until
  it had a page of matches, so an entry with a handful of events in a Memory of a million made
  every such request read the whole table. ``jsonb_path_ops`` indexes exactly what ``@>``
  needs. SQLite (the list stored as text, matched with ``LIKE``) is untouched.
"""

from django.db import migrations, models

GIN = "memory_auditevent_entry_ids_gin"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {GIN} ON memory_auditevent "
            "USING gin (entry_ids jsonb_path_ops)"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {GIN}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0016_governance_states")]

    operations = [
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(
                fields=["memory_id", "revision_number"], name="memory_audi_memory__01a229_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(
                fields=["memory_id", "proposal_id"], name="memory_audi_memory__faab06_idx"
            ),
        ),
        migrations.RunPython(forward, backward),
    ]
