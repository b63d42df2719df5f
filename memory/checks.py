"""System checks of the memory core: the vector channel's index (``memory.vectors``).

Warnings, never errors: without an index the vector channel still works, by a bounded scan of
the cached embeddings, and the ranking trace says how much each query compared.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Warning, register
from django.db import DatabaseError, connection


@register()
def vector_index(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from django.conf import settings
    from django.utils.module_loading import import_string

    from . import vectors

    path = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("PROVIDER")
    if not path:
        return []
    provider = import_string(path)  # the class: its key and dimensions, no model loaded
    found: list[CheckMessage] = []
    if provider.dimensions != vectors.DIMENSIONS:
        found.append(
            Warning(
                f"The embedding provider {provider.key} makes {provider.dimensions}-dimensional "
                f"vectors; the vector index holds {vectors.DIMENSIONS}.",
                hint="Its vectors are searched by the bounded scan, not the index.",
                id="memory.W011",
            )
        )
    try:
        if "memory_indexedvector" not in connection.introspection.table_names():
            return found  # not migrated yet: migrate creates the index where it can
        kind = vectors.index_kind()
        pgvector = connection.vendor == "postgresql" and vectors.pgvector_available(connection)
    except DatabaseError:  # no database yet (before the first migrate): nothing to say
        return found
    if kind == vectors.SCAN:
        if connection.vendor == "sqlite" and getattr(connection, "vector_extension", None):
            why = (
                "sqlite-vec is loaded but the index table is missing",
                "Run: manage.py migrate, then manage.py rebuild_projection --vectors.",
            )
        elif connection.vendor == "sqlite":
            why = (
                "this SQLite cannot load the sqlite-vec extension",
                "Install pysqlite3-binary and sqlite-vec (make install does).",
            )
        elif pgvector:
            why = (
                "the pgvector extension is available but the index table is missing",
                "Run: manage.py migrate, then manage.py rebuild_projection --vectors.",
            )
        else:
            why = (
                "this PostgreSQL has no pgvector extension",
                "Install pgvector on the server, then run manage.py migrate and "
                "manage.py rebuild_projection --vectors.",
            )
        found.append(
            Warning(
                f"No vector index: {why[0]}. Semantic recall, each add's near-duplicate check "
                "and each maintenance pass's vector neighbours scan up to "
                "STEWARD_SEARCH['VECTOR_SCAN_MAX'] vectors per lookup (newest first).",
                hint=why[1],
                id="memory.W010",
            )
        )
    return found
