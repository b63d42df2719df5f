"""Backup and restore on both backends, each followed by ``verify_integrity`` on the copy:
SQLite through the online backup API (``manage.py backup`` / ``restore``), PostgreSQL through
``pg_dump`` (``manage.py backup``) and ``pg_restore`` into a fresh database."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from memory.models import Entry, Revision
from review.actions import approve_proposal
from review.integrity import verify_memory
from review.management.commands.backup import pg_env
from tests.integrity.test_verify_integrity import consolidate, pair

ROOT = Path(__file__).resolve().parents[2]


def build_history(memory, agent, reviewer) -> None:
    for name in ("alpha", "beta"):
        a, b = pair(memory, agent, f"The {name} job runs")
        p = consolidate(memory, agent, a, b, f"The {name} job runs")
        if name == "alpha":
            approve_proposal(p.pk, actor=reviewer.actor)


def verify_elsewhere(database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "manage.py", "verify_integrity"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's online backup API")
def test_sqlite_backup_verifies_and_restores(memory, agent, reviewer, tmp_path):
    build_history(memory, agent, reviewer)
    entries, revisions = Entry.objects.count(), Revision.objects.count()
    path = tmp_path / "steward-backup.sqlite3"
    call_command("backup", str(path), stdout=io.StringIO())
    checked = verify_elsewhere(f"sqlite:///{path}")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "integrity: ok" in checked.stdout and f"{revisions} revisions" in checked.stdout

    # Later writes are undone by restoring the backup; the restored database is sound.
    pair(memory, agent, "The gamma job runs")
    assert Entry.objects.count() == entries + 2
    call_command("restore", str(path), stdout=io.StringIO())
    assert Entry.objects.count() == entries and Revision.objects.count() == revisions
    memory.refresh_from_db()
    assert verify_memory(memory).findings == []


def test_a_backup_never_overwrites(tmp_path, db):
    from django.core.management.base import CommandError

    path = tmp_path / "exists"
    path.write_text("x")
    with pytest.raises(CommandError):
        call_command("backup", str(path))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_dump / pg_restore")
@pytest.mark.skipif(not shutil.which("pg_restore"), reason="needs postgresql-client")
def test_postgres_dump_restores_into_a_fresh_database_that_verifies(
    memory, agent, reviewer, tmp_path
):
    build_history(memory, agent, reviewer)
    revisions = Revision.objects.count()
    dump = tmp_path / "steward.dump"
    call_command("backup", str(dump), stdout=io.StringIO())
    settings = connection.settings_dict
    target = f"steward_restore_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )
    admin.execute(f'CREATE DATABASE "{target}"')
    try:
        params, env = pg_env(settings)
        done = subprocess.run(
            ["pg_restore", "--exit-on-error", "--no-owner", *params, "--dbname", target, str(dump)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        user = settings["USER"] or "postgres"
        password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
        url = f"postgres://{user}{password}@{settings['HOST']}:{settings['PORT'] or 5432}/{target}"
        checked = verify_elsewhere(url)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"acme: {revisions} revisions" in checked.stdout
        # The restored copy keeps its append-only guards.
        with (
            psycopg.connect(url) as restored,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            restored.execute("TRUNCATE memory_revision CASCADE")
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        admin.close()
