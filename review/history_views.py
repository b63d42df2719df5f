"""Browser pages of an entry's and a revision's history: the entry page (its timeline, with the
reviewers' forms) and the revision page.

Read-only pages for the audit trail's readers — reviewers, auditors and staff (anonymous
visitors are sent to the login page, anyone else gets 403); they accept only GET and HEAD. The
forms of the entry page post to ``review.entry_views``, which shows the page again with what went
wrong (:func:`render_timeline`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from lib.auth import reader_page
from lib.errors import DomainError
from lib.identity import Actor
from memory.audit_events import READERS_ONLY, may_read_audit
from memory.models import Memory

from . import history

#: The history pages are the audit trail's: its readers may see them.
history_page = reader_page(may_read_audit, READERS_ONLY)


@history_page
def entry_timeline(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``/memories/<slug>/entries/<entry_id>/``: versions with word diffs, lifecycle intervals,
    relations, evidence snapshots, proposals and decisions, and every audit event about it;
    for reviewers, the Quarantine or Release form (posted to :mod:`review.entry_views`)."""
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
        page = history.entry_timeline(actor, history.get_visible_memory(actor, slug), entry_id)
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


@history_page
def revision_detail(request: HttpRequest, actor: Actor, slug: str, number: int) -> HttpResponse:
    """``/memories/<slug>/revisions/<n>/``: who, when, why, and each change before → after."""
    return _memory_page(
        request, actor, slug, "audit/revision.html", "p", history.revision_page, number
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
        page = build(actor, history.get_visible_memory(actor, slug), key)
    except DomainError as exc:
        return _not_found(request, exc)
    return render(request, template, {"nav": "audit", name: page})


def _not_found(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return render(
        request, "audit/not_found.html", {"nav": "audit", "message": exc.message}, status=404
    )
