"""The "Needs re-checking" page at ``/memories/<slug>/revalidation/``: the Memory's active
entries whose review date has passed, most recalled first (``memory.revalidation``), with their
owner, confidence and review date. "Load more" follows an opaque keyset cursor like the entry
browser; htmx appends only the rows. Reviewers, auditors and staff may read (403 otherwise; a
Memory out of scope is 404); entries above the reader's clearance are left out. One query per
page."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from lib.errors import DomainError
from lib.list_pages import UrlFilter, list_template, page_links
from lib.pagination import encode_cursor, page_limit

from ..api.revalidation import parse_due_cursor
from ..revalidation import due_heads, due_item, due_page
from .common import entry_label, page_reader


@dataclass
class DueFilter(UrlFilter):
    """The page has no filters; its "Load more" link carries only the cursor and size."""


@login_required
@require_safe
def needs_rechecking(request: HttpRequest, slug: str) -> HttpResponse:
    actor, memory = page_reader(request, slug)
    f = DueFilter()
    rows = []
    cursor: str | None = None
    status = 200
    try:
        heads, after = due_page(
            due_heads(memory, actor=actor, now=timezone.now()),
            cursor=parse_due_cursor(request.GET.get("cursor")),
            limit=page_limit(request.GET),
        )
        rows = [due_item(h) | {"label": entry_label(h.version.body)} for h in heads]
        cursor = encode_cursor(after) if after else None
    except DomainError as exc:
        f.errors = exc.details or {"cursor": [exc.message]}
        status = 422
    context = {
        "memory": memory,
        "nav": "revalidation",
        "f": f,
        "rows": rows,
        **page_links(request, f, cursor),
    }
    template = list_template(request, "memory/revalidation.html", "due-results")
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request", "HX-Target"))
    return response
