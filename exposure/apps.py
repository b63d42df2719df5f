"""App config of the exposure ledger: listens to ``memory.effects.served`` and attaches its
Celery task to the ledger's hand-off."""

from django.apps import AppConfig


class ExposureConfig(AppConfig):
    name = "exposure"
    verbose_name = "Exposure ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memory import effects

        from . import ledger, tasks

        ledger.queue.use_task(tasks.write_exposures.delay)
        effects.served.connect(ledger.record)
