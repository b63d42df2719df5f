"""WSGI entry point (gunicorn config.wsgi).

The embedding model loads here, at process start, not on the first request that needs it
(which used to wait 20-30 s). With ``gunicorn --preload`` it loads once in the master and every
worker inherits it; ``/readyz`` answers 503 until it has loaded.
"""

import logging
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

try:
    from memory.embeddings import warm_up

    warm_up()
except Exception:  # the process still serves lexically; /readyz says the model is not loaded
    logging.getLogger(__name__).exception("The embedding model could not be loaded at start.")
