"""App config for the memory core: registers its maintenance jobs (``maintenance.JOBS``: ``l1``,
``rebuild``, ``revalidation``) and the ``model`` readiness probe of ``/readyz``, connects memory's
own listeners to its effects (``memory.effects``: vectors after a write, the promotion pass after
a session end, recall events after a read) and lifts the SQLite schema guard of append-only
tables while migrations run."""

from django.apps import AppConfig

from lib.health import Probe, register_probe


def model_probe() -> Probe:
    """``/readyz`` waits until the embedding model is loaded (nothing to load without one)."""
    # memory.embeddings defines models: it cannot be imported while the app registry loads this.
    from .embeddings import provider_loaded

    loaded = provider_loaded()
    return Probe("loaded" if loaded else "loading", loaded)


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        # checks registers itself; tasks makes the jobs' Celery tasks.
        from . import checks, effects, jobs, maintenance, recall_events, tasks  # noqa: F401

        for job in maintenance.JOBS:
            jobs.register_job(job)
        effects.versions_written.connect(tasks.queue_vectors)
        effects.session_ended.connect(maintenance.after_session_end)
        effects.served.connect(recall_events.served)
        recall_events.queue.use_task(tasks.fold_recall_events.delay)
        register_probe("model", model_probe)
        # Migrations may drop and remake append-only tables on SQLite (lib.append_only).
        from django.db.models.signals import post_migrate, pre_migrate

        from lib.append_only import lift_schema_guard_for_migrations, restore_schema_guard

        pre_migrate.connect(lift_schema_guard_for_migrations, dispatch_uid="steward-guard-lift")
        post_migrate.connect(restore_schema_guard, dispatch_uid="steward-guard-restore")
