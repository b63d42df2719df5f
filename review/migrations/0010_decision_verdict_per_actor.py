"""One verdict of each kind per reviewer and proposal revision: a reviewer who asked for changes
may still reject that revision (it clashed with the constraint and answered 500)."""

from django.db import migrations, models

from lib.append_only import triggers

# SQLite rebuilds the table to change a constraint, which drops its append-only triggers; they
# are installed again (idempotent on PostgreSQL).
install, remove = triggers(["review_decision"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0024_audit_seal"),
        ("proposals", "0007_fk_indexes_covered_by_composites"),
        ("review", "0009_fk_indexes_covered_by_composites"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="decision",
            name="one_decision_per_actor_and_revision",
        ),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.UniqueConstraint(
                fields=("proposal", "proposal_revision", "actor_id", "verdict"),
                name="one_verdict_per_actor_and_revision",
            ),
        ),
        migrations.RunPython(install, migrations.RunPython.noop),
    ]
