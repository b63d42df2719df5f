"""Database-enforced append-only tables, for migrations.

Each append-only table gets two triggers:

* ``<table>_append_only`` — a row trigger refusing UPDATE (and DELETE on PostgreSQL);
* ``<table>_no_erase`` — the bypass guard: a statement-level ``BEFORE TRUNCATE`` trigger on
  PostgreSQL (row triggers never fire for TRUNCATE, with or without CASCADE) and a
  ``BEFORE DELETE`` trigger on SQLite (which has no TRUNCATE; its "truncate optimisation" is
  switched off by any DELETE trigger).

Both call ``steward_append_only()`` on PostgreSQL (created by memory migration 0002). Creation is
idempotent (``CREATE OR REPLACE`` / ``IF NOT EXISTS``), so a later migration can re-run the helper
over every table to add a trigger kind that older migrations did not install. The test suite's
table flush lifts the guards for its own statement only (``tests/conftest.py``); nothing in the
product deletes or truncates these tables. One controlled exception: columns *derived* from a
row's own immutable columns may be recomputed inside a transaction through
:func:`rewriting_derived_columns` (the lexical reindex, ``memory.search.reindex``).

SQLite lets any connection drop a trigger or a table, so the project's SQLite connections carry
an *authorizer* (:func:`sqlite_authorizer`, installed by ``lib.sqlite_backend``): it refuses
DROP TABLE, DROP TRIGGER and ALTER TABLE on an append-only table — ``DROP TABLE
memory_auditevent`` fails with "not authorized" — except while the guard is lifted on purpose
(:func:`schema_guard_lifted`: migrations, the reindex above, the test suite's flush). A process
that opens the database file with its own SQLite is not bound by it; ``verify_integrity``'s
content hashes and audit chain find what such a process changed.

The models themselves subclass :class:`lib.models.AppendOnlyModel`, which refuses updates and
deletes in Python too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

Step = Callable[[Any, Any], None]

TRIGGER_SUFFIXES = ("_append_only", "_no_erase")


def install_sql(table: str, vendor: str) -> list[str]:
    """The statements creating both triggers of ``table`` on ``vendor`` (idempotent)."""
    if vendor == "postgresql":
        return [
            f"CREATE OR REPLACE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION steward_append_only();",
            f"CREATE OR REPLACE TRIGGER {table}_no_erase BEFORE TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION steward_append_only();",
        ]
    if vendor == "sqlite":
        return [
            f"CREATE TRIGGER IF NOT EXISTS {table}_append_only BEFORE UPDATE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only: UPDATE refused'); END;",
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_erase BEFORE DELETE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'table {table} is append-only: DELETE refused'); END;",
        ]
    return []


def drop_sql(table: str, vendor: str, suffixes: Sequence[str] = TRIGGER_SUFFIXES) -> list[str]:
    on = f" ON {table}" if vendor == "postgresql" else ""
    return [f"DROP TRIGGER IF EXISTS {table}{name}{on}" for name in suffixes]


def trigger_names(table: str) -> set[str]:
    return {f"{table}{name}" for name in TRIGGER_SUFFIXES}


def triggers(
    tables: Sequence[str], *, remove_only: Sequence[str] = TRIGGER_SUFFIXES
) -> tuple[Step, Step]:
    """``(install, remove)`` functions for ``migrations.RunPython`` over ``tables``.

    ``remove_only`` limits what the reverse step drops (a migration that only added the erase
    guard to tables protected earlier reverses to exactly that earlier state).
    """

    def install(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            for sql in install_sql(table, schema_editor.connection.vendor):
                schema_editor.execute(sql)

    def remove(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            for sql in drop_sql(table, schema_editor.connection.vendor, remove_only):
                schema_editor.execute(sql)

    return install, remove


#: The PostgreSQL setting naming the one table whose derived columns may be rewritten now.
REWRITE_SETTING = "steward.rewrite_derived"


@contextmanager
def rewriting_derived_columns(connection: Any, table: str) -> Iterator[None]:
    """Within the caller's transaction, let the statements in the block UPDATE the *derived*
    columns of ``table`` (memory migration 0014: ``memory_entryversion``'s analyzer output).

    PostgreSQL: the row trigger (``steward_append_only()``) lets an UPDATE through only while the
    transaction-local setting names the table *and* every column but the derived ones is
    unchanged, so body and content stay append-only even here. SQLite: its row trigger refuses
    every UPDATE, so it is dropped and re-created inside the transaction (SQLite's DDL is
    transactional: no other connection ever sees the table without it, and a rollback restores
    it). The caller updates only derived columns.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("rewriting derived columns needs a transaction")
    vendor = connection.vendor
    with connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute("SELECT set_config(%s, %s, true)", [REWRITE_SETTING, table])
        elif vendor == "sqlite":
            with schema_guard_lifted():
                cursor.execute(drop_sql(table, vendor, ["_append_only"])[0])
    yield
    with connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute("SELECT set_config(%s, '', true)", [REWRITE_SETTING])
        elif vendor == "sqlite":
            cursor.execute(install_sql(table, vendor)[0])


# --- SQLite: no DROP or ALTER of a history table ----------------------------------------------

_GUARD_LIFTED: ContextVar[bool] = ContextVar("append_only_schema_guard_lifted", default=False)


@contextmanager
def schema_guard_lifted() -> Iterator[None]:
    """Within it, this thread's SQLite statements may drop or alter append-only tables and
    their triggers (migrations, the reindex, the test suite's flush)."""
    token = _GUARD_LIFTED.set(True)
    try:
        yield
    finally:
        _GUARD_LIFTED.reset(token)


def lift_schema_guard_for_migrations(**kwargs: Any) -> None:
    """``pre_migrate`` receiver: a migration may remake any table (``post_migrate`` restores)."""
    _GUARD_LIFTED.set(True)


def restore_schema_guard(**kwargs: Any) -> None:
    """``post_migrate`` receiver."""
    _GUARD_LIFTED.set(False)


@cache
def append_only_table_names() -> frozenset[str]:
    """Every append-only model's table (subclasses of :class:`lib.models.AppendOnlyModel`)."""
    from django.apps import apps

    # Not at the top: the SQLite backend imports this module while Django creates the first
    # connection, before a model class can be defined.
    from .models import AppendOnlyModel

    return frozenset(
        m._meta.db_table
        for m in apps.get_models()
        if issubclass(m, AppendOnlyModel) and not m._meta.proxy
    )


def sqlite_authorizer(sqlite: Any) -> Callable[[int, str | None, str | None, Any, Any], int]:
    """The authorizer callback for a connection of the ``sqlite`` module: DENY for DROP TABLE,
    DROP TRIGGER and ALTER TABLE on an append-only table while the guard is in place."""
    drop_table = sqlite.SQLITE_DROP_TABLE
    drop_trigger = sqlite.SQLITE_DROP_TRIGGER
    alter = sqlite.SQLITE_ALTER_TABLE
    ok, deny = sqlite.SQLITE_OK, sqlite.SQLITE_DENY

    def authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
        if action in (drop_table, drop_trigger, alter):
            # DROP TABLE: arg1 is the table; DROP TRIGGER: arg2; ALTER TABLE: arg2.
            table = arg1 if action == drop_table else arg2
            if table in append_only_table_names() and not _GUARD_LIFTED.get():
                return deny
        return ok

    return authorize
