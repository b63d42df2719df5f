"""Browser pages of the reviewer inbox: the queue, the polled "new items" badge and the
"Claim next" / release forms.

Every control is a real form first; htmx is layered on top (see ``review.proposal_views``).
Views only translate: they check who may look or act (``review.web``), call one action, and
choose the response.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from lib.pagination import keyset_page
from memory.actors import Actor
from memory.models import Memory

from . import claims, inbox, web
from .exceptions import ValidationFailed
from .forms import REASON_LABELS, reason_options
from .permissions import may_decide

# --- The inbox ---------------------------------------------------------------------------------


@require_safe
@web.readers
def inbox_page(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``/review/``: the queue, filtered and sorted by the URL, one keyset page at a time."""
    now = timezone.now()
    memories = list(Memory.objects.visible_to(actor).order_by("slug").only("pk", "slug", "name"))
    f = inbox.parse_filter(request.GET, memories)
    errors = dict(f.errors)
    rows: list[inbox.Row] = []
    cursor: str | None = None
    try:
        proposals, cursor = keyset_page(
            inbox.page_queryset(actor, f), request.GET, key="pk", descending=f.descending
        )
        rows = [inbox.row_for(p, now=now) for p in proposals]
    except ValidationFailed as exc:
        errors.update(exc.details or {"cursor": [exc.message]})
    counts = inbox.kind_counts(actor, f)
    mine = (
        claims.ReviewClaim.objects.filter(actor_id=actor.id, expires_at__gt=now)
        .select_related("proposal")
        .first()
        if may_decide(actor)
        else None
    )
    kind_links = [("All", f.query(kind=""), inbox.total(counts), not f.kind)] + [
        (k.capitalize(), f.query(kind=k), counts[k], f.kind == k) for k in inbox.KINDS
    ]
    context = {
        "nav": "review",
        "f": f,
        "errors": errors,
        "rows": rows,
        "kind_links": kind_links,
        "memories": memories,
        "statuses": inbox.STATUS_CHOICES,
        "kinds": inbox.KINDS,
        "next_query": f.query(cursor=cursor) if cursor else "",
        "first_page": not request.GET.get("cursor"),
        "badge_href": reverse("review-inbox-new") + f.query(after=inbox.watermark()),
        "can_decide": may_decide(actor),
        "actor_id": actor.id,
        "my_claim": mine,
        "here": request.get_full_path(),
        "reasons": list(REASON_LABELS.items()),
        "reason_options": reason_options(),
        "now": now,
    }
    return render(request, "review/inbox.html", context, status=400 if errors else 200)


def _named_memory(actor: Actor, params: Any) -> list[Memory]:
    """The one Memory a request names (if any): the badge and "Claim next" need no list."""
    slug = (params.get("memory") or "").strip()
    if not slug:
        return []
    return list(Memory.objects.visible_to(actor).filter(slug=slug).only("pk", "slug"))


@require_safe
@web.readers
def inbox_new(request: HttpRequest, actor: Actor) -> HttpResponse:
    """The polled badge: only a count of pending proposals newer than the page's watermark."""
    f = inbox.parse_filter(request.GET, _named_memory(actor, request.GET))
    try:
        after = int(request.GET.get("after") or 0)
    except ValueError:
        after = 0
    n = 0 if f.errors else inbox.new_since(actor, f, after)
    context = {
        "new": n,
        "new_label": f"{inbox.NEW_CAP}+" if n > inbox.NEW_CAP else str(n),
        "newest_href": reverse("review-inbox") + f.query(sort="newest"),
    }
    return render(request, "review/inbox.html#new-badge", context)


@require_POST
@web.deciders
def claim_next(request: HttpRequest, actor: Actor) -> HttpResponse:
    """ "Claim next": lease the oldest unclaimed pending proposal and open it."""
    f = inbox.parse_filter(request.POST, _named_memory(actor, request.POST))
    claim = claims.claim_next_proposal(
        actor=actor, f=claims.ClaimFilter(memory_id=f.memory_id, kind=f.kind or None)
    )
    if claim is None:
        messages.info(request, "Nothing left to claim: every pending proposal is taken or yours.")
        url = web.next_url(request, reverse("review-inbox"))
    else:
        minutes = claims.lease_seconds() // 60
        messages.success(
            request, f"You hold proposal #{claim.proposal_id} for the next {minutes} minutes."
        )
        url = web.proposal_url(claim.proposal_id)
    return HttpResponseClientRedirect(url) if web.is_htmx(request) else HttpResponseRedirect(url)


@require_POST
@web.deciders
def release_claim(request: HttpRequest, actor: Actor) -> HttpResponse:
    if claims.release_claim(actor=actor):
        messages.info(request, "Claim released.")
    url = web.next_url(request, reverse("review-inbox"))
    return HttpResponseClientRedirect(url) if web.is_htmx(request) else HttpResponseRedirect(url)
