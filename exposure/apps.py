"""App config of the exposure ledger: listens to ``memory.effects.served``."""

from django.apps import AppConfig


class ExposureConfig(AppConfig):
    name = "exposure"
    verbose_name = "Exposure ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memory import effects

        from . import ledger, tasks  # noqa: F401 - tasks registers the Celery tasks

        effects.on_served(ledger.record)
