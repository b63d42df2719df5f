"""A database that cannot be reached answers 503 ``service_unavailable`` with ``Retry-After``.

A lost PostgreSQL connection (the server restarting, a backend terminated, the network gone, a
refused connect) or an SQLite file that is locked past the busy timeout or cannot be opened is
not a fault of the request: the client may try again. The API answers it in the error envelope
(API.md), the pages with a page that says so, never with a 500 (``lib.errors`` for DRF views,
``lib.views.server_error`` for everything else: middleware, pages, the login form).

Which errors count: Django's ``InterfaceError`` (a connection already closed) and
``OperationalError`` raised by psycopg (PostgreSQL's "operational" class: connection failures,
administrator shutdown, cancelled statements, serialization and deadlock failures — all worth a
retry); on SQLite only the result codes of an unavailable file (busy, locked, cannot open, I/O
error, full, read-only, not a database), since SQLite also reports a bad statement as an
``OperationalError`` and that stays a 500.
"""

from __future__ import annotations

from django.conf import settings
from django.db import InterfaceError, OperationalError

#: SQLite result codes (``sqlite_errorname``, extended codes by prefix) that mean the file is
#: unavailable, not that the statement is wrong.
SQLITE_UNAVAILABLE = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_CANTOPEN",
    "SQLITE_IOERR",
    "SQLITE_FULL",
    "SQLITE_READONLY",
    "SQLITE_NOTADB",
    "SQLITE_PROTOCOL",
)
#: The same, by message, for an SQLite build whose exceptions carry no result code.
SQLITE_MESSAGES = (
    "database is locked",
    "database table is locked",
    "unable to open database file",
    "disk i/o error",
    "database or disk is full",
    "attempt to write a readonly database",
    "file is not a database",
)

MESSAGE = "The database is unavailable just now. Try again shortly."


def retry_after() -> int:
    """Seconds a client should wait before retrying (``STEWARD_UNAVAILABLE_RETRY_AFTER``)."""
    return int(getattr(settings, "STEWARD_UNAVAILABLE_RETRY_AFTER", 5))


def database_unavailable(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from or while handling) says the database
    cannot be reached now."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, InterfaceError):
            return True
        if isinstance(exc, OperationalError) and _driver_unavailable(exc.__cause__):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _driver_unavailable(cause: BaseException | None) -> bool:
    if cause is None:
        return False
    module = type(cause).__module__
    if module.startswith("psycopg"):
        return True
    if "sqlite" in module:
        name = str(getattr(cause, "sqlite_errorname", "") or "")
        if name:
            return name.startswith(SQLITE_UNAVAILABLE)
        return str(cause).lower().startswith(SQLITE_MESSAGES)
    return False
