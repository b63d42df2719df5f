"""The analyzer stems Cyrillic, Greek and Armenian words as it stems Latin ones (``memory.text``
``STEMMERS``), so the stored analysis of every version written in those scripts is recomputed.

Only derived columns change (``searchable_text``, ``term_count``; the indexes follow), in batches
of 2000 rows keyset by primary key, each batch in its own transaction (``memory.search.reindex``,
as in migration 0014): the migration is not one transaction, so a large table is never held by
one, and an interrupted run is finished by running it again (a batch rewrites only rows whose
analysis differs). Reversing keeps the new analysis; ``rebuild_projection --reindex`` recomputes
it for whatever analyzer is installed.
"""

from django.db import migrations

from memory.search.reindex import reanalyze_versions


def reindex(apps, schema_editor):
    reanalyze_versions(using=schema_editor.connection.alias, recount=False)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory", "0018_projection_body_bytes")]

    operations = [migrations.RunPython(reindex, migrations.RunPython.noop)]
