"""Where the audit pages link to: one place that knows the URL of every record they mention.

Pages built by this app are reversed by name. Pages built elsewhere (the proposal page, the
operation page, a maintenance run) are linked only once a route for them exists, so a log row
that mentions operation 7 becomes a link to ``/operations/7/`` the moment the review engine adds
that page, and stays plain text until then.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import Resolver404, resolve, reverse

#: Documented browser paths (API.md "Browser pages") of records other apps render.
EXTERNAL_PAGES = {
    "proposal": "/review/proposals/{id}/",
    "operation": "/operations/{id}/",
    "run": "/maintenance/runs/{id}/",
}


def log_url(**params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return reverse("audit-log") + (f"?{query}" if query else "")


def entry_url(slug: str, uid: str) -> str:
    return reverse("audit-entry-timeline", kwargs={"slug": slug, "entry_id": uid})


def revision_url(slug: str, number: int) -> str:
    return reverse("audit-revision", kwargs={"slug": slug, "number": number})


def page_url(kind: str, pk: Any) -> str | None:
    """The page of a proposal, operation or run — or None while no route serves it."""
    if pk in (None, ""):
        return None
    path = EXTERNAL_PAGES[kind].format(id=pk)
    try:
        resolve(path)
    except Resolver404:
        return None
    return path
