"""Drop the single-column foreign-key indexes that a composite index or unique constraint
already leads with: the composite serves every lookup by that column, and each index dropped
is one fewer to update (and, on a new connection, to load) on every write.

Only the index goes: ``AlterField`` would make SQLite copy the table (dropping its append-only
triggers), so the state change is separate from the database's.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_stem_by_script"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="entryversion",
                    name="entry",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="versions",
                        to="memory.entry",
                    ),
                ),
                migrations.AlterField(
                    model_name="entryversion",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="evidence",
                    name="version",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="evidence",
                        to="memory.entryversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="head",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="heads",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="lifecycleprojection",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="maintenancelock",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="maintenancerun",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="maintenance_runs",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="relation",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="relations",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="revision",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="revisions",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="sourcedeclaration",
                    name="source",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="declarations",
                        to="memory.source",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_entry_memory_id_feccc5cf",
                    reverse_sql='CREATE INDEX memory_entry_memory_id_feccc5cf ON memory_entry ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_entryversion_entry_id_4c13ad7e",
                    reverse_sql='CREATE INDEX memory_entryversion_entry_id_4c13ad7e ON memory_entryversion ("entry_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_entryversion_memory_id_5fe5c726",
                    reverse_sql='CREATE INDEX memory_entryversion_memory_id_5fe5c726 ON memory_entryversion ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_evidence_version_id_74c4fbb7",
                    reverse_sql='CREATE INDEX memory_evidence_version_id_74c4fbb7 ON memory_evidence ("version_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_head_memory_id_f705c24b",
                    reverse_sql='CREATE INDEX memory_head_memory_id_f705c24b ON memory_head ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_lifecycleprojection_memory_id_372adcc2",
                    reverse_sql='CREATE INDEX memory_lifecycleprojection_memory_id_372adcc2 ON memory_lifecycleprojection ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_maintenancelock_memory_id_715c471d",
                    reverse_sql='CREATE INDEX memory_maintenancelock_memory_id_715c471d ON memory_maintenancelock ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_maintenancerun_memory_id_870ef7af",
                    reverse_sql='CREATE INDEX memory_maintenancerun_memory_id_870ef7af ON memory_maintenancerun ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_relation_memory_id_7a89fce5",
                    reverse_sql='CREATE INDEX memory_relation_memory_id_7a89fce5 ON memory_relation ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_revision_memory_id_d2e8d3bb",
                    reverse_sql='CREATE INDEX memory_revision_memory_id_d2e8d3bb ON memory_revision ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_sourcedeclaration_source_id_6965e24a",
                    reverse_sql='CREATE INDEX memory_sourcedeclaration_source_id_6965e24a ON memory_sourcedeclaration ("source_id")',
                ),
            ],
        ),
    ]
