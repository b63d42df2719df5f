"""An index on the projection's (memory, effective_at) for scoped recall's time range
(``memory.search.filters``): on PostgreSQL a one-month range over 100,000 entries read every
projection row of the table (a parallel sequential scan) before it; with it the planner starts
from the range (EXPLAIN in docs/recall.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0021_lexical_statistics"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="lifecycleprojection",
            index=models.Index(
                fields=["memory", "effective_at"], name="memory_life_memory__2b02d0_idx"
            ),
        ),
    ]
