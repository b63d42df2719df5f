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


def warm_recall() -> None:
    """One read-only recall on the first Memory (search never writes), so a worker's first
    search finds the recall pipeline's modules and caches ready; the connection it opened is
    closed (before gunicorn forks its workers; gunicorn.conf.py runs it again in each worker,
    after the fork). A failure leaves the process serving, cold."""
    from django.db import connections

    from memory.actors import Actor
    from memory.models import EntryVersion, Memory
    from memory.search import configured_reranker, search

    try:
        reranker = configured_reranker()
        if reranker is not None and hasattr(reranker, "warm"):
            reranker.warm()  # its model loads and runs once now, not in the first search
        memory = Memory.objects.order_by("pk").first()
        if memory is not None:
            # A query of real words (the newest entry's text): the lexical channel then reads
            # its index and the model embeds a sentence-long text, as a reviewer's first
            # search and the proposal page's recall preview do (a two-word query left ~0.1 s
            # of that to the first request).
            latest = (
                EntryVersion.objects.filter(entry__memory=memory)
                .order_by("-pk")
                .values_list("body", flat=True)
                .first()
            )
            for query in ("warm up", (latest or "")[:300]):
                if query:
                    search(memory, actor=Actor.system("warm-up"), query=query, limit=10)
    except Exception:  # a database not migrated yet: serve cold rather than not at all
        logging.getLogger(__name__).exception("The recall warm-up failed.")
    finally:
        connections.close_all()


def warm_templates() -> None:
    """Compile every project template once (the cached loader keeps them, and ``--preload``
    hands them to every worker): a page's first render otherwise parses its template and
    includes — the proposal page's first request cost about 5× a warm one."""
    from pathlib import Path
    from typing import cast

    from django.conf import settings
    from django.template import TemplateDoesNotExist, TemplateSyntaxError
    from django.template.loader import get_template

    folders: list[Path] = [Path(d) for d in cast(list[str], settings.TEMPLATES[0]["DIRS"])]
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.html")):
            try:
                get_template(str(path.relative_to(folder)))
            except (TemplateDoesNotExist, TemplateSyntaxError):  # a fragment not meant alone
                continue


try:
    from django.urls import get_resolver

    from memory.embeddings import warm_up
    from memory.search.common import query_terms

    get_resolver().url_patterns  # noqa: B018 - imports every view module now, not on a request
    # The reverse map every link on a page reads (built on the first reverse(): 0.14 s).
    get_resolver().reverse_dict  # noqa: B018
    query_terms("warm up the analyzer")  # the word segmenter and the stemmers
    warm_templates()
    warm_up()
    warm_recall()
except Exception:  # the process still serves lexically; /readyz says the model is not loaded
    logging.getLogger(__name__).exception("The embedding model could not be loaded at start.")
