"""What the benchmark scripts share before Django is set up (imported first, as
``python bench/<script>.py`` puts ``bench/`` on the import path): the repository root on the
import path, the settings and database a script runs against, the commands of the processes it
starts, and the staff, Memory and source a load starts from."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: A Celery worker of the project in one process (the caller adds queues and log options).
CELERY_WORKER = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo"]


def setup_django(
    *,
    database_url: str | None = None,
    default_database: str | None = None,
    fresh_sqlite: Path | None = None,
    broker: bool = True,
) -> None:
    """Set Django up with the project's settings. The database: ``database_url`` when given;
    else ``DATABASE_URL``; else ``fresh_sqlite`` (emptied first) or ``default_database``.
    ``broker=False`` drops ``CELERY_BROKER_URL`` (tasks run in the process)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if database_url is not None:
        os.environ["DATABASE_URL"] = database_url
    elif "DATABASE_URL" not in os.environ and fresh_sqlite is not None:
        fresh_sqlite.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{fresh_sqlite}"
    elif default_database is not None:
        os.environ.setdefault("DATABASE_URL", default_database)
    if not broker:
        os.environ.pop("CELERY_BROKER_URL", None)
    import django

    django.setup()


def staff_with_memories(username: str, *memories: tuple[str, str]) -> Any:
    """A staff user's actor, the Memories ``(slug, name)`` it creates, the ``repo`` source
    (repository-attested, verified) and the ``reviewer`` group; returns ``(actor, group)``."""
    from django.contrib.auth.models import Group, User

    from memory import actions
    from memory.actors import Actor

    staff = Actor.for_user(User.objects.create_user(username, is_staff=True))
    for slug, name in memories:
        actions.create_memory(actor=staff, slug=slug, name=name)
    actions.register_source(
        actor=staff,
        name="repo",
        description="Repository",
        declaration={"authority": "repository_attested", "verification": "verified"},
    )
    return staff, Group.objects.get_or_create(name="reviewer")[0]
