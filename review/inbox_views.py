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

from lib.errors import DomainError
from lib.pagination import keyset_page
from memory.actors import Actor
from memory.models import Memory
from proposals.actions.discussion import assign_proposal
from proposals.selectors import visible_proposals

from . import claims, inbox, web
from .actions.bulk import MAX_BULK, BulkOutcome, bulk_decide
from .exceptions import ValidationFailed
from .forms import REASON_LABELS, AssignForm, BulkDecideForm, reason_options
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
        reviewers = inbox.reviewer_names() if may_decide(actor) and proposals else []
        rows = [inbox.row_for(p, now=now, actor=actor, reviewers=reviewers) for p in proposals]
    except ValidationFailed as exc:
        errors.update(exc.details or {"cursor": [exc.message]})
    mine = (
        claims.ReviewClaim.objects.filter(actor_id=actor.id, expires_at__gt=now)
        .select_related("proposal")
        .first()
        if may_decide(actor)
        else None
    )
    context = {
        "nav": "review",
        "f": f,
        "errors": errors,
        "rows": rows,
        "kind_links": _kind_links(actor, f),
        "memories": memories,
        "statuses": list(inbox.STATUS_LABELS.items()),
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
        "filter_params": list(f.params(cursor="").items()),
        "max_bulk": MAX_BULK,
    }
    return render(request, "review/inbox.html", context, status=400 if errors else 200)


def _kind_links(actor: Actor, f: inbox.InboxFilter) -> list[tuple[str, str, Any, bool]]:
    """The kind tabs: each kind's capped count under the other filters (one query)."""
    counts = inbox.kind_counts(actor, f)
    return [("All", f.query(kind=""), inbox.total(counts), not f.kind)] + [
        (k.capitalize(), f.query(kind=k), counts[k], f.kind == k) for k in inbox.KINDS
    ]


def _row_context(request: HttpRequest, actor: Actor) -> dict[str, Any]:
    """What the ``row`` partial needs besides the row (as ``review.proposal_views`` gives)."""
    return {
        "can_decide": may_decide(actor),
        "actor_id": actor.id,
        "here": web.next_url(request, reverse("review-inbox")),
        "reasons": list(REASON_LABELS.items()),
        "reason_options": reason_options(),
        "now": timezone.now(),
    }


# --- Bulk decisions ----------------------------------------------------------------------------

#: What a refusal's code means for one row of a bulk decision.
REFUSALS = {
    "stale_proposal": "Stale: an affected entry changed since it was proposed.",
    "already_decided": "Already decided.",
    "details_not_acknowledged": "Needs acknowledging lost details: open it to approve.",
    "self_approval": "You proposed or edited it: another reviewer must approve it.",
    "not_found": "Not found.",
}


def outcome_text(o: BulkOutcome) -> tuple[str, str]:
    """One row's outcome in words and its notice kind (success, conflict or error)."""
    if o.error is None:
        if o.status == "pending":
            return "Approval recorded; it needs more approvals.", "success"
        return f"{inbox.STATUS_LABELS.get(o.status, o.status)}.", "success"
    code = str(o.error.get("code") or "")
    text = REFUSALS.get(code) or str(o.error.get("message") or "Refused.")
    if code == "already_decided" and o.status:
        text = f"Already decided: {inbox.STATUS_LABELS.get(o.status, o.status).lower()}."
    if code == "details_not_acknowledged":
        lost = (o.error.get("details") or {}).get("lost_details") or []
        if lost:
            text = f"Needs acknowledging lost details ({', '.join(map(str, lost))}): open it."
    return text, "error" if code in ("not_found", "invalid") else "conflict"


def summary(outcomes: list[BulkOutcome]) -> str:
    done = [o for o in outcomes if o.error is None]
    refused = [o for o in outcomes if o.error is not None]
    parts = [f"{len(done)} of {len(outcomes)} decided."]
    parts += [f"#{o.id}: {outcome_text(o)[0]}" for o in refused]
    return " ".join(parts)


@require_POST
@web.deciders
def bulk_decide_view(request: HttpRequest, actor: Actor) -> HttpResponse:
    """Approve or reject the ticked proposals, each on its own; every row reports its outcome.
    With htmx: the summary, the refreshed rows and kind counts; without: back, with a message."""
    form = BulkDecideForm(request.POST, max_ids=MAX_BULK)
    back = web.next_url(request, reverse("review-inbox"))
    if not form.is_valid():
        problems = web.errors(form)
        if web.is_htmx(request):
            return render(
                request,
                "review/inbox.html#bulk-result",
                {"bulk_errors": problems, "bulk_message": "Nothing decided."},
                status=422,
            )
        flat = " ".join(p for field in problems.values() for p in field)
        messages.error(request, f"Nothing decided. {flat}")
        return HttpResponseRedirect(back)
    data = form.cleaned_data
    outcomes = bulk_decide(
        actor=actor,
        action=data["action"],
        ids=data["ids"],
        comment=data.get("comment") or "",
        reason=data.get("reason") or "",
    )
    message = summary(outcomes)
    if not web.is_htmx(request):
        if all(o.error is None for o in outcomes):
            messages.success(request, message)
        else:
            messages.warning(request, message)
        return HttpResponseRedirect(back)
    now = timezone.now()
    notices = {o.id: outcome_text(o) for o in outcomes}
    rows = inbox.fresh_rows(actor, [o.id for o in outcomes], now=now)
    memories = list(Memory.objects.visible_to(actor).order_by("slug").only("pk", "slug"))
    f = inbox.parse_filter(request.POST, memories)
    context = {
        **_row_context(request, actor),
        "bulk_message": message,
        "bulk_rows": [(row, *notices[row.pk]) for row in rows],
        "kind_links": _kind_links(actor, f),
        "oob": True,
    }
    return render(request, "review/inbox.html#bulk-response", context)


# --- Assignment --------------------------------------------------------------------------------


@require_POST
@web.deciders
def assign_view(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """Assign a proposal to a named reviewer from its row, or clear it (an empty name)."""
    proposal = visible_proposals(actor).filter(pk=pk).first()
    if proposal is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
    form = AssignForm(request.POST)
    reviewer = (form.cleaned_data["reviewer"] if form.is_valid() else "").strip()
    if request.POST.get("clear"):
        reviewer = ""
    status, kind = 200, "success"
    try:
        assign_proposal(proposal, actor=actor, reviewer=reviewer or None)
        notice = f"Assigned to {reviewer}." if reviewer else "Assignment cleared."
    except DomainError as exc:
        problems = [p for v in (exc.details or {}).values() for p in v if isinstance(v, list)]
        notice = " ".join(map(str, problems)) or exc.message
        if int(getattr(exc, "http_status", 400) or 400) == 403:
            return web.refuse(request, exc.message, status=403)
        # 409 once decided, 422 for a name that is not a reviewer (htmx swaps both).
        status, kind = (409, "conflict") if exc.code == "already_decided" else (422, "error")
    if not web.is_htmx(request):
        (messages.success if status == 200 else messages.error)(request, f"#{pk}: {notice}")
        return HttpResponseRedirect(web.next_url(request, reverse("review-inbox")))
    row = inbox.fresh_row(actor, pk, now=timezone.now())
    if row is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
    context = {**_row_context(request, actor), "row": row, "notice": notice, "notice_kind": kind}
    return render(request, "review/inbox.html#row", context, status=status)


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
