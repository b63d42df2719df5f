"""WSGI entry point (gunicorn config.wsgi).

The embedding model loads here, at process start, not on the first request that needs it
(which used to wait 20-30 s). With ``gunicorn --preload`` it loads once in the master and every
worker inherits it; ``/readyz`` answers 503 until it has loaded. The other warm-up steps (in
:mod:`config.warmup`) make the first requests cost what later ones do.
"""

import logging
import os

from django.core.wsgi import get_wsgi_application

from config.warmup import warm_recall, warm_templates, warm_writes

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

try:
    from django.urls import get_resolver

    from memory.embeddings import warm_up
    from memory.search.common import query_terms

    get_resolver().url_patterns  # noqa: B018 - imports every view module now, not on a request
    # The reverse map every link on a page reads (built on the first reverse(): 0.14 s).
    get_resolver().reverse_dict  # noqa: B018
    query_terms("warm up the analyzer")  # the word segmenter and the stemmers
    warm_templates()
    warm_writes()
    warm_up()
    warm_recall()  # and a proposal page's render
except Exception:  # the process still serves lexically; /readyz says the model is not loaded
    logging.getLogger(__name__).exception("The embedding model could not be loaded at start.")
