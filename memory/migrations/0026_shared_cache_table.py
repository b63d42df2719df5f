"""The table of the default cache when ``CACHE_URL`` is unset (Django's database cache): throttle
counters are then shared by every process serving the same database (config/settings.py)."""

from typing import Any

from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "steward_cache"


def create(apps: Any, schema_editor: Any) -> None:
    # Django's own cache table layout (idempotent: an existing table is kept).
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, False)


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0025_governance_fields")]
    operations = [migrations.RunPython(create, drop)]
