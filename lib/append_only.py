"""Database-enforced append-only tables, for migrations.

PostgreSQL refuses UPDATE and DELETE with a row trigger calling ``steward_append_only()``
(created by memory migration 0002; TRUNCATE, used only by test teardown, stays possible).
SQLite refuses UPDATE; DELETE is left to Python there because the test runner empties tables
with DELETE.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Step = Callable[[Any, Any], None]


def install_sql(table: str, vendor: str) -> str | None:
    if vendor == "postgresql":
        return (
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION steward_append_only();"
        )
    if vendor == "sqlite":
        return (
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only'); END;"
        )
    return None


def drop_sql(table: str, vendor: str) -> str:
    suffix = f" ON {table}" if vendor == "postgresql" else ""
    return f"DROP TRIGGER IF EXISTS {table}_append_only{suffix}"


def triggers(tables: Sequence[str]) -> tuple[Step, Step]:
    """``(install, remove)`` functions for ``migrations.RunPython`` over ``tables``."""

    def install(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            sql = install_sql(table, schema_editor.connection.vendor)
            if sql:
                schema_editor.execute(sql)

    def remove(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            schema_editor.execute(drop_sql(table, schema_editor.connection.vendor))

    return install, remove
