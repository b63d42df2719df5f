"""The entry's session index in turn order: (memory, session_id, id) instead of (memory,
session_id, tier). A turn's previous turn in its session — read on every write of a turn and for
the reranker's exchanges — was found by reading every turn of the session before it and sorting
them (a session an agent writes all of its turns into grows without bound); it is now one step of
this index backward. The session filter uses the same index's first two columns."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0026_shared_cache_table"),
    ]

    # The new index is built before the old one is dropped: on PostgreSQL, building takes a lock
    # that lets reads through, and the drop's exclusive lock is then held only until the commit
    # right after it, not for the whole build.
    operations = [
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                fields=["memory", "session_id", "id"], name="memory_entry_session_turn"
            ),
        ),
        migrations.RemoveIndex(model_name="entry", name="memory_entr_memory__4e3193_idx"),
    ]
