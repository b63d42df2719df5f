"""The Celery application.

Without ``CELERY_BROKER_URL`` tasks run eagerly in-process (the embedded default), so a laptop
needs no broker; with it, a real worker executes them.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("memory_steward")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
