"""``manage.py restore PATH``: replace the SQLite database's content with a backup made by
``manage.py backup`` (the online backup API, in the other direction). Stop the web and worker
processes first: connections that stay open would keep reading the old pages.

PostgreSQL is restored with ``pg_restore`` into an empty database (docs/reliability.md), not by
this command. Run ``verify_integrity`` afterwards.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection


class Command(BaseCommand):
    help = "Restore the SQLite database from a backup file written by manage.py backup."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The backup file.")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if connection.vendor != "sqlite":
            raise CommandError(
                "manage.py restore is for SQLite; restore PostgreSQL with pg_restore into an "
                "empty database (docs/reliability.md)."
            )
        if not path.is_file():
            raise CommandError(f"No backup file {path}.")
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            ok = source.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise CommandError(f"{path} fails SQLite's integrity check: {ok}")
            connection.ensure_connection()
            source.backup(connection.connection)
        finally:
            source.close()
        self.stdout.write(f"restored from {path}")
