"""Where the audit pages link to: one place that knows the URL of every record they mention.

Every page is reversed by its URL name. A record with no page of its own (a maintenance run)
is shown as plain text.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

#: URL names of the pages of records other apps render (API.md "Browser pages").
RECORD_PAGES = {
    "proposal": "review-proposal",
    "operation": "review-operation",
}


def log_url(**params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return reverse("audit-log") + (f"?{query}" if query else "")


def entry_url(slug: str, uid: str) -> str:
    return reverse("audit-entry-timeline", kwargs={"slug": slug, "entry_id": uid})


def revision_url(slug: str, number: int) -> str:
    return reverse("audit-revision", kwargs={"slug": slug, "number": number})


def page_url(kind: str, pk: Any) -> str | None:
    """The page of a proposal or operation; None for a record without a page (a run)."""
    name = RECORD_PAGES.get(kind)
    if name is None or pk in (None, ""):
        return None
    return reverse(name, args=[pk])
