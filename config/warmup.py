"""What a process does at start so that its first requests cost what later ones do
(config/wsgi.py runs it; gunicorn.conf.py runs :func:`warm_recall` again in each worker after
the fork). Every step only reads."""

from __future__ import annotations

import logging


def warm_recall() -> None:
    """Read-only recalls on the first Memory (search never writes), so a worker's first search
    finds the recall pipeline's modules and caches ready, then one render of a proposal page
    (:func:`warm_pages`); the connection they opened is closed (before gunicorn forks its
    workers; gunicorn.conf.py runs it again in each worker, after the fork). A failure leaves
    the process serving, cold."""
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
        warm_pages()
    except Exception:  # a database not migrated yet: serve cold rather than not at all
        logging.getLogger(__name__).exception("The recall warm-up failed.")
    finally:
        connections.close_all()


def warm_writes() -> None:
    """Load what an add's first request loaded lazily, so the first write after a start costs
    what the next ones do (it cost 2-3× a warm one): detect-secrets' plugins (imported and
    compiled on the first scan: 0.12 s), the secret masker and the personal-data detectors
    (a text they pass, one with personal data, one with a secret); Celery's task-sending machinery
    (imported on the first ``delay()``), its task registry (bound on first use: 0.04 s) and the
    result backend's class (found through the installed packages' entry points: 0.025 s).
    Nothing is written; no broker or result backend is contacted."""
    from contextlib import suppress
    from importlib import import_module

    from celery.app.backends import by_url

    from config.celery import app
    from lib.errors import DomainError
    from memory.admission import check_stored_text
    from memory.personal_data import KINDS

    for sample in (
        "Warm up the checks of a stored text.",
        "Call +31 20 123 4567 or ops@example.com; card 4111 1111 1111 1111.",
        "The deploy key is AKIA0000000000000000.",
    ):
        with suppress(DomainError):  # the last two are refused, as they should be
            check_stored_text("body", sample, KINDS)
    for name in (
        "celery.app.trace",
        "celery.app.amqp",
        "celery.canvas",
        "celery.backends.base",
        "celery.contrib.django.task",
        "kombu.transport.virtual",
    ):
        import_module(name)
    app.finalize(auto=True)
    by_url(app.conf.result_backend or "disabled", app.loader)


def warm_pages() -> None:
    """Render the first open proposal's page once, read-only, for a staff user that exists only
    in memory (no row, no session, nothing written): a page's first render runs code no other
    warm-up reaches — the page's queries are compiled against models whose field caches are
    still cold, the recall preview searches a text of its own, the static files' manifest is
    read, the context processors and date formats load. The proposal page's first request cost
    up to 2.5× a warm one without it. Nothing to render (no proposal yet): nothing happens."""
    import io

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.handlers.wsgi import WSGIRequest

    from proposals.models import Proposal
    from review.proposal_views import proposal_detail

    proposals = Proposal.objects.order_by("pk").only("pk")
    proposal = proposals.filter(status="pending").first() or proposals.first()
    if proposal is None:
        return
    hosts = [h for h in settings.ALLOWED_HOSTS if h and h[0] not in ".*"]
    request = WSGIRequest(
        {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": f"/review/proposals/{proposal.pk}/",
            "SERVER_NAME": hosts[0] if hosts else "localhost",
            "SERVER_PORT": "80",
            "HTTP_HOST": hosts[0] if hosts else "localhost",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.url_scheme": "http",
        }
    )
    request.user = User(username="warm-up", is_staff=True)
    response = proposal_detail(request, pk=proposal.pk)
    if response.status_code != 200:
        logging.getLogger(__name__).warning(
            "The page warm-up rendered %s, not 200.", response.status_code
        )


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
