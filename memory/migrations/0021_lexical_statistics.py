"""The term statistics BM25 ranks by (``TermStat``, ``LexicalCorpus``), and every version
re-indexed with the turn before it in its session (``memory.lexical_index``).

Only derived data changes: ``searchable_text`` gains the context tokens after the version's own
(``term_count`` still counts its own), through the same bounded reindex as migration 0014, and
the statistics are counted from the stored text.
"""

import django.db.models.deletion
from django.db import migrations, models


def reindex(apps, schema_editor):
    from memory.search.reindex import reanalyze_versions

    # reanalyze_versions recounts the statistics once it has rewritten the text.
    reanalyze_versions(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_fk_indexes_covered_by_composites"),
    ]

    operations = [
        migrations.CreateModel(
            name="LexicalCorpus",
            fields=[
                (
                    "memory",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="memory.memory",
                    ),
                ),
                ("versions", models.PositiveBigIntegerField(default=0)),
                ("tokens", models.PositiveBigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name="TermStat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("term", models.TextField()),
                ("df", models.PositiveBigIntegerField(default=0)),
                (
                    "memory",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="memory.memory",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("memory", "term"), name="uniq_termstat_term")
                ],
            },
        ),
        migrations.RunPython(reindex, migrations.RunPython.noop, elidable=True),
    ]
