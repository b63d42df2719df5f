"""The vector index (memory.vectors): which versions it holds, and the index table itself.

SQLite: a sqlite-vec ``vec0`` table, when the extension loads (lib.sqlite_backend). PostgreSQL:
pgvector's ``vector(384)`` column with an HNSW index, when the extension is available. Otherwise
no table: the vector channel scans the cached embeddings (bounded) and ``manage.py check`` warns.
Vectors of existing versions: ``manage.py rebuild_projection --vectors``.
"""

import django.db.models.deletion
from django.db import migrations, models


def create_index(apps, schema_editor):
    from memory.vectors import index_statements

    conn = schema_editor.connection
    for sql in index_statements(conn):
        schema_editor.execute(sql)
    conn._steward_vector_index = None


def drop_index(apps, schema_editor):
    schema_editor.execute("DROP TABLE IF EXISTS memory_vector")
    schema_editor.connection._steward_vector_index = None


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_analyzer_v2"),
    ]

    operations = [
        migrations.CreateModel(
            name="IndexedVector",
            fields=[
                (
                    "version",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="memory.entryversion",
                    ),
                ),
                ("memory_id", models.BigIntegerField(db_index=True)),
                ("provider", models.CharField(max_length=64)),
            ],
        ),
        migrations.RunPython(create_index, drop_index),
    ]
