"""App config for the memory core: registers its maintenance jobs (``maintenance.JOBS``: ``l1``,
``rebuild``, ``revalidation``) and lifts the SQLite schema guard of append-only tables while
migrations run."""

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        # checks registers itself; tasks makes the jobs' Celery tasks.
        from . import checks, jobs, maintenance, tasks  # noqa: F401

        for job in maintenance.JOBS:
            jobs.register_job(job)
        # Migrations may drop and remake append-only tables on SQLite (lib.append_only).
        from django.db.models.signals import post_migrate, pre_migrate

        from lib.append_only import lift_schema_guard_for_migrations, restore_schema_guard

        pre_migrate.connect(lift_schema_guard_for_migrations, dispatch_uid="steward-guard-lift")
        post_migrate.connect(restore_schema_guard, dispatch_uid="steward-guard-restore")
