"""Django's SQLite backend with the ``sqlite-vec`` extension loaded into every connection.

Many Python builds ship a ``sqlite3`` module that cannot load extensions (no
``enable_load_extension``). Where the ``pysqlite3`` package is installed (``pysqlite3-binary``
on Linux bundles a recent SQLite with FTS5 that can), it stands in for ``sqlite3`` before
Django's backend is imported, so Django's adapters, converters and cursor class all bind to
it. Then every new connection loads ``sqlite-vec`` when both are available; without them the
database works as before and the vector channel falls back to a bounded scan (``manage.py
check`` says so, see ``memory.checks``).
"""

from __future__ import annotations

import sys
from typing import Any

try:  # pragma: no cover - which module is present is decided by the install, not a test
    import pysqlite3  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pysqlite3.dbapi2  # type: ignore[import-untyped, import-not-found, unused-ignore]
except ImportError:
    pass
else:
    if "django.db.backends.sqlite3.base" not in sys.modules:
        sys.modules["sqlite3"] = pysqlite3
        sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2

from django.db.backends.sqlite3 import base as sqlite_base

from lib.append_only import sqlite_authorizer


def load_vector_extension(conn: Any) -> str | None:
    """Load sqlite-vec into ``conn``; its version, or None when it cannot be loaded here."""
    try:
        import sqlite_vec  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None
    if not hasattr(conn, "enable_load_extension"):
        return None
    try:
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        return str(conn.execute("SELECT vec_version()").fetchone()[0])
    except Exception:
        return None


class DatabaseWrapper(sqlite_base.DatabaseWrapper):
    #: The sqlite-vec version loaded into the current connection (None: not loadable).
    vector_extension: str | None = None

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        conn = super().get_new_connection(conn_params)
        self.vector_extension = load_vector_extension(conn)
        # No DROP or ALTER of an append-only table (lib.append_only.sqlite_authorizer).
        conn.set_authorizer(sqlite_authorizer(sqlite_base.Database))  # type: ignore[attr-defined]
        return conn
