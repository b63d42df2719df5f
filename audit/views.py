"""Browser pages of the audit trail: the global log, the entry timeline and the revision page.

Read-only pages for reviewers, auditors and staff (anonymous visitors are sent to the login page,
anyone else gets 403). They accept only GET and HEAD, so no audit page can change anything. One URL
per page: the log renders either the whole page or, for htmx, the named partial that changed —
``results`` when the filters change, ``rows`` for "Load more". Filters and the cursor live in the
query string, so every view of the log is a shareable URL and works without JavaScript.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from lib.auth import actor_from_request
from lib.errors import DomainError
from lib.list_pages import list_template, page_links
from lib.pagination import keyset_page
from memory.actors import Actor
from memory.audit import ACTIONS
from memory.models import Memory

from . import events, pages
from .events import AuditFilter

AuditPage = Callable[..., HttpResponse]


def audit_page(view: AuditPage) -> Callable[..., HttpResponse]:
    """Login required, GET/HEAD only, and the audit readers' roles; passes the actor on."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        actor = actor_from_request(request)
        if not events.may_read_audit(actor):
            raise PermissionDenied("Only reviewers, auditors and staff may read the audit trail.")
        response = view(request, actor, *args, **kwargs)
        patch_vary_headers(response, ("HX-Request",))
        return response

    return login_required(require_safe(wrapper))


@audit_page
def audit_log(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``/audit/``: every event in the reader's scope, newest first, filtered by the URL."""
    errors: dict[str, Any] = {}
    rows: list[Any] = []
    cursor: str | None = None
    status = 200
    try:
        f = events.parse_audit_filter(actor, request.GET)
        rows, cursor = keyset_page(
            events.audit_events_for(actor, f), request.GET, key="pk", descending=True
        )
        events.redact(rows, actor)
    except DomainError as exc:
        f = AuditFilter(
            raw={k: request.GET.get(k, "") for k in events.FILTER_PARAMS if request.GET.get(k)}
        )
        errors = exc.details or {"filter": [exc.message]}
        status = 422
    context = {
        "nav": "audit",
        "f": f,
        "errors": errors,
        "events": rows,
        **page_links(request, f, cursor),
        "memories": list(Memory.objects.visible_to(actor).order_by("slug").only("slug", "name")),
        "actions": sorted(ACTIONS),
        "kinds": events.KINDS,
        "export_csv": f.query_string(format="csv"),
        "export_jsonl": f.query_string(format="jsonl"),
    }
    template = list_template(request, "audit/log.html", "audit-results")
    return render(request, template, context, status=status)


@audit_page
def entry_timeline(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``/memories/<slug>/entries/<entry_id>/``: versions with word diffs, lifecycle intervals,
    relations, evidence snapshots, proposals and decisions, and every audit event about it;
    for reviewers, the Quarantine or Release form (posted to ``review.entry_views``)."""
    return render_timeline(request, actor, slug, entry_id)


def render_timeline(
    request: HttpRequest,
    actor: Actor,
    slug: str,
    entry_id: str,
    *,
    status: int = 200,
    govern: dict[str, Any] | None = None,
    partial: str = "",
) -> HttpResponse:
    """The entry timeline as ``actor`` may see it (404 page otherwise). ``govern`` is a refused
    entry form — ``{"form", "error", "reason", "values"}`` — when ``review.entry_views`` shows
    the page again with what went wrong; ``partial`` names the one part of the page an htmx
    form replaces (``recheck``)."""
    try:
        page = pages.entry_timeline(actor, pages.get_visible_memory(actor, slug), entry_id)
    except DomainError as exc:
        return _not_found(request, exc)
    context = {
        "nav": "audit",
        "t": page,
        "can_govern": actor.is_reviewer,
        # Who may confirm and require re-verification: the REST endpoints' rules
        # (memory.actions.require_confirmer, require_reviewer).
        "can_confirm": actor.can_write_entries or actor.is_reviewer,
        "can_reverify": actor.is_reviewer,
        "govern": govern or {},
    }
    template = "audit/timeline.html" + (f"#{partial}" if partial else "")
    return render(request, template, context, status=status)


@audit_page
def revision_detail(request: HttpRequest, actor: Actor, slug: str, number: int) -> HttpResponse:
    """``/memories/<slug>/revisions/<n>/``: who, when, why, and each change before → after."""
    return _memory_page(
        request, actor, slug, "audit/revision.html", "p", pages.revision_page, number
    )


def _memory_page(
    request: HttpRequest,
    actor: Actor,
    slug: str,
    template: str,
    name: str,
    build: Callable[[Actor, Memory, Any], Any],
    key: Any,
) -> HttpResponse:
    """A page about one record of a visible Memory; 404 for anything the actor cannot see."""
    try:
        page = build(actor, pages.get_visible_memory(actor, slug), key)
    except DomainError as exc:
        return _not_found(request, exc)
    return render(request, template, {"nav": "audit", name: page})


def _not_found(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return render(
        request, "audit/not_found.html", {"nav": "audit", "message": exc.message}, status=404
    )
