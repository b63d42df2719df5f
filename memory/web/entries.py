"""The entry browser at ``/memories/<slug>/entries/``: every entry of a Memory the reader may see,
newest first, with its validity (active, superseded by its successor, in conflict, inactive,
candidate, quarantined — the lifecycle projection's, so a superseded entry never reads "active"),
head state, kind, tier, pin and the lifecycle projection's importance.

Filters live in the URL (``state``, ``validity``, ``kind``, ``pinned``), so every view is a
shareable link and works without JavaScript; "Load more" follows an opaque keyset cursor
(``lib.pagination``) like the audit log, and htmx swaps only the rows. ``q`` is a text search
through the recall pipeline (``memory.search.search``: the ``history`` view, plus ``candidates``),
at most :data:`SEARCH_LIMIT` hits, best first, with the same filters applied; quarantined entries
are in no recall view, so a text search never finds them (the state filter without ``q`` lists
them).

Reviewers, auditors and staff may read (403 otherwise; a Memory out of scope is 404). Entries
above the reader's clearance are left out (``Entry.objects.visible_to``). One page is a fixed
number of queries: the entries with head, head version and projection in one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe

from lib.errors import DomainError
from lib.list_pages import UrlFilter, list_template, page_links
from lib.pagination import keyset_page
from lib.wording import one_of

from .. import selectors
from ..actors import Actor
from ..choices import Validity
from ..models import Entry, HeadState, Kind, Memory
from ..search import search
from .common import entry_label, page_reader

#: Most hits a text search shows (the recall pipeline's own maximum).
SEARCH_LIMIT = 50
PINNED = ("yes", "no")
FILTER_PARAMS = ("state", "validity", "kind", "pinned", "q")
#: The validity filter's choices, as the page names them (only a current entry is "active").
VALIDITY_CHOICES = [
    (Validity.CURRENT, "Active (current)"),
    (Validity.SUPERSEDED, "Superseded"),
    (Validity.UNRESOLVED_CONFLICT, "In conflict"),
    (Validity.INACTIVE, "Inactive"),
    (Validity.CANDIDATE, "Candidate"),
    (Validity.QUARANTINED, "Quarantined"),
]


@dataclass
class EntryFilter(UrlFilter):
    state: str = ""
    validity: str = ""
    kind: str = ""
    pinned: str = ""
    q: str = ""


def parse_filter(params: Any) -> EntryFilter:
    f = EntryFilter()
    choices = {
        "state": HeadState.values,
        "validity": Validity.values,
        "kind": Kind.values,
        "pinned": list(PINNED),
    }
    for name, allowed in choices.items():
        value = (params.get(name) or "").strip()
        if value and value not in allowed:
            f.errors[name] = [one_of(allowed)]
        else:
            setattr(f, name, value)
    f.q = (params.get("q") or "").strip()[:500]
    return f


def filtered(actor: Actor, memory: Memory, f: EntryFilter) -> Any:
    """The entries ``actor`` may see in ``memory`` under ``f`` (state, validity, kind, pinned:
    the list filters of ``GET …/entries``, :func:`memory.selectors.entries`); a page's rows are
    read through :func:`with_rows`."""
    pinned = f.pinned == "yes" if f.pinned else None
    return selectors.entries(
        actor, memory, state=f.state, validity=f.validity, kind=f.kind, pinned=pinned
    )


def with_rows(qs: Any) -> Any:
    """``qs`` with what a row needs joined in (head, head version, projection)."""
    return qs.filter(head__isnull=False).select_related(
        "head__version", "projection__successor_entry"
    )


def row(entry: Entry) -> dict[str, Any]:
    head = entry.head
    projection = getattr(entry, "projection", None)
    return {
        "entry_id": entry.uid,
        "kind": entry.kind,
        "tier": entry.tier,
        "state": head.state,
        "reason": head.state_reason,
        # Only a current entry is "active": a superseded one names its successor.
        "validity": projection.validity
        if projection is not None
        else (Validity.CURRENT if head.state == HeadState.ACTIVE else head.state),
        "validity_reason": projection.validity_reason if projection is not None else "",
        "successor": projection.successor_entry.uid
        if projection is not None and projection.successor_entry is not None
        else "",
        "pinned": head.pinned,
        "importance": projection.importance if projection is not None else None,
        "version": head.version.number,
        "label": entry_label(head.version.body),
        "created_at": entry.created_at,
    }


def _search(actor: Actor, memory: Memory, f: EntryFilter) -> list[Entry]:
    """Entries whose text matches ``f.q`` (recall pipeline, best first, one row per entry),
    then the state / kind / pinned filters (one query)."""
    views = ["history"] + (["candidates"] if actor.sees_withheld else [])
    order: list[int] = []
    for view in views:
        for hit in search(memory, actor=actor, query=f.q, view=view, limit=SEARCH_LIMIT).hits:
            if hit.entry_pk not in order:
                order.append(hit.entry_pk)
    hits = filtered(actor, memory, f).filter(pk__in=order[:SEARCH_LIMIT])
    by_pk = {e.pk: e for e in with_rows(hits)}
    return [by_pk[pk] for pk in order[:SEARCH_LIMIT] if pk in by_pk]


@login_required
@require_safe
def entry_list(request: HttpRequest, slug: str) -> HttpResponse:
    actor, memory = page_reader(request, slug)
    f = parse_filter(request.GET)
    entries: list[Entry] = []
    cursor: str | None = None
    status = 200
    if f.errors:
        status = 422
    else:
        try:
            if f.q:
                entries = _search(actor, memory, f)
            else:
                entries, cursor = keyset_page(
                    filtered(actor, memory, f),
                    request.GET,
                    key="pk",
                    descending=True,
                    load=with_rows,
                )
        except DomainError as exc:
            f.errors = exc.details or {"filter": [exc.message]}
            status = 422
    context = {
        "memory": memory,
        "nav": "entries",
        "f": f,
        "rows": [row(e) for e in entries],
        **page_links(request, f, cursor),
        "searching": bool(f.q),
        "search_limit": SEARCH_LIMIT,
        "states": HeadState.values,
        "validities": VALIDITY_CHOICES,
        "kinds": Kind.values,
    }
    template = list_template(request, "memory/entries.html", "entry-results")
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request", "HX-Target"))
    return response
