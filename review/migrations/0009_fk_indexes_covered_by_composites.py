"""The same as ``memory`` 0020, for this app's tables: only the covered indexes are dropped."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("proposals", "0007_fk_indexes_covered_by_composites"),
        ("review", "0008_rejection_reason_labels"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="decision",
                    name="proposal",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decisions",
                        to="proposals.proposal",
                    ),
                ),
                migrations.AlterField(
                    model_name="savedview",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="saved_views",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS review_decision_proposal_id_a5a6a52b",
                    reverse_sql='CREATE INDEX review_decision_proposal_id_a5a6a52b ON review_decision ("proposal_id")',
                ),
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS review_savedview_user_id_07d0e775",
                    reverse_sql='CREATE INDEX review_savedview_user_id_07d0e775 ON review_savedview ("user_id")',
                ),
            ],
        ),
    ]
