"""App config for the memory core: registers the L1 maintenance jobs (``l1``, ``rebuild``)."""

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from . import checks, maintenance, tasks  # noqa: F401 - checks registers itself

        maintenance.register_job("l1", maintenance._run_decay, tasks.l1_decay_scan)
        maintenance.register_job(
            "rebuild", maintenance.run_projection_rebuild, tasks.rebuild_projection, gated=False
        )
