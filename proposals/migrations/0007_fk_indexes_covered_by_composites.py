"""The same as ``memory`` 0020, for this app's tables: only the covered indexes are dropped."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_fk_indexes_covered_by_composites"),
        ("proposals", "0006_rejection_reason_labels"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="proposal",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="proposals",
                        to="memory.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="proposalamendment",
                    name="proposal",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="amendments",
                        to="proposals.proposal",
                    ),
                ),
                migrations.AlterField(
                    model_name="proposalcomment",
                    name="proposal",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="comments",
                        to="proposals.proposal",
                    ),
                ),
                migrations.AlterField(
                    model_name="proposaltarget",
                    name="proposal",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="targets",
                        to="proposals.proposal",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS proposals_proposal_memory_id_b9a37cac",
                    reverse_sql='CREATE INDEX proposals_proposal_memory_id_b9a37cac ON proposals_proposal ("memory_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS proposals_proposalamendment_proposal_id_ecde4e99",
                    reverse_sql='CREATE INDEX proposals_proposalamendment_proposal_id_ecde4e99 ON proposals_proposalamendment ("proposal_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS proposals_proposalcomment_proposal_id_ad894c00",
                    reverse_sql='CREATE INDEX proposals_proposalcomment_proposal_id_ad894c00 ON proposals_proposalcomment ("proposal_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS proposals_proposaltarget_proposal_id_585f9a19",
                    reverse_sql='CREATE INDEX proposals_proposaltarget_proposal_id_585f9a19 ON proposals_proposaltarget ("proposal_id")',
                ),
            ],
        ),
    ]
