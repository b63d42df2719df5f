"""``manage.py backup PATH``: a consistent copy of the live database, taken while it serves.

SQLite: the online backup API (``sqlite3.Connection.backup``) copies page by page into ``PATH``
(a SQLite file); writers may go on meanwhile and the copy is one consistent snapshot.
PostgreSQL: ``pg_dump --format=custom`` into ``PATH`` (one transaction snapshot; restore it with
``pg_restore`` into an empty database, see docs/reliability.md). Run ``verify_integrity`` on the
restored copy before trusting it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection


def pg_env(settings_dict: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """libpq connection arguments and environment for pg_dump / pg_restore."""
    args = []
    if settings_dict.get("HOST"):
        args += ["--host", str(settings_dict["HOST"])]
    if settings_dict.get("PORT"):
        args += ["--port", str(settings_dict["PORT"])]
    if settings_dict.get("USER"):
        args += ["--username", str(settings_dict["USER"])]
    env = dict(os.environ)
    if settings_dict.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings_dict["PASSWORD"])
    return args, env


class Command(BaseCommand):
    help = "Write a consistent backup of the live database to PATH (SQLite file or pg_dump)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="Where to write the backup (must not exist).")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if path.exists():
            raise CommandError(f"{path} exists; a backup never overwrites a file.")
        if connection.vendor == "sqlite":
            connection.ensure_connection()
            target = sqlite3.connect(path)
            try:
                with target:
                    connection.connection.backup(target)
            finally:
                target.close()
        elif connection.vendor == "postgresql":
            params, env = pg_env(connection.settings_dict)
            cmd = [
                "pg_dump",
                "--format=custom",
                "--file",
                str(path),
                *params,
                str(connection.settings_dict["NAME"]),
            ]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise CommandError(f"pg_dump failed: {done.stderr.strip()}")
        else:
            raise CommandError(f"No backup method for {connection.vendor}.")
        self.stdout.write(f"backup written: {path} ({path.stat().st_size} bytes)")
