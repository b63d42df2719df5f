"""Browser pages of the memory core: the search playground for reviewers and auditors.

``/memories/<slug>/search/`` runs the same recall agents get (memory.search) and shows the hits
with their lifecycle annotation and the RankingTrace: baseline rank → final rank, the rule codes
behind each shift, and how many candidates the validity filter withheld. A plain GET form that
works without JavaScript; with htmx only the results region is swapped (``#results`` partial).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from lib.errors import DomainError

from ..ranking import INTENTS
from ..search import VIEWS, search
from .common import page_reader

LIMITS = (5, 10, 20, 50)


@login_required
@require_safe
def search_playground(request: HttpRequest, slug: str) -> HttpResponse:
    """Reviewers, auditors and staff only (403 otherwise); unknown Memory → 404."""
    actor, memory = page_reader(
        request, slug, denied="Only reviewers, auditors and staff may use the search playground."
    )
    query = request.GET.get("q", "").strip()
    view = request.GET.get("view") or "current"
    view = view if view in VIEWS else "current"
    intent = request.GET.get("intent") or ""
    intent = intent if intent in INTENTS else ""
    limit = _limit(request.GET.get("limit"))
    form = {"q": query, "view": view, "intent": intent, "limit": limit}
    context: dict[str, Any] = {
        "memory": memory,
        "form": form,
        "views": VIEWS,
        "intents": INTENTS,
        "limits": LIMITS,
        "result": None,
        "error": "",
        "nav": "search",
    }
    status = 200
    if query:
        try:
            context["result"] = search(
                memory,
                actor=actor,
                query=query[:8192],
                limit=limit,
                view=view,
                intent=intent or None,
                trace=True,
            )
        except DomainError as exc:
            context["error"] = exc.message
            status = 422
    template = "memory/search.html"
    htmx = getattr(request, "htmx", None)
    if htmx and not htmx.boosted:
        template += "#results"
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _limit(raw: str | None) -> int:
    try:
        value = int(raw or 10)
    except ValueError:
        return 10
    return value if value in LIMITS else 10
