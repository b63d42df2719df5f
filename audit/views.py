"""Browser page of the audit trail: the global log (an entry's and a revision's history pages
are review's: ``review.history_views``).

Read-only pages for reviewers, auditors and staff (anonymous visitors are sent to the login page,
anyone else gets 403). They accept only GET and HEAD, so no audit page can change anything. One URL
per page: the log renders either the whole page or, for htmx, the named partial that changed —
``results`` when the filters change, ``rows`` for "Load more". Filters and the cursor live in the
query string, so every view of the log is a shareable URL and works without JavaScript.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from lib.auth import reader_page
from lib.errors import DomainError
from lib.identity import Actor
from lib.list_pages import list_template, page_links
from lib.pagination import keyset_page
from memory.audit import ACTIONS
from memory.audit_events import READERS_ONLY
from memory.models import Memory

from . import events
from .events import AuditFilter

#: Login required, GET/HEAD only, and the audit readers' roles; passes the actor on.
audit_page = reader_page(events.may_read_audit, READERS_ONLY)


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
