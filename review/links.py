"""Links from review pages to the history pages of an entry and a revision (``review.history``)."""

from __future__ import annotations

from django.urls import reverse


def entry_href(slug: str, entry_id: str) -> str:
    """The entry's page (its timeline)."""
    return reverse("audit-entry-timeline", kwargs={"slug": slug, "entry_id": entry_id})


def revision_href(slug: str, number: int) -> str:
    return reverse("audit-revision", kwargs={"slug": slug, "number": number})
