"""Browser pages of the reviewer inbox: the queue, the polled "new items" badge, the
"Claim next" / release forms and the user's named saved views.

Every control is a real form first; htmx is layered on top (see ``review.proposal_views``).
Views only translate: they check who may look or act (``review.web``), call one action, and
choose the response.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from lib.errors import DomainError, NotFound
from lib.pagination import keyset_page
from memory.actors import Actor
from memory.models import Memory
from proposals.actions.discussion import assign_proposal
from proposals.models import ProposalStatus, RejectionReason
from proposals.selectors import visible_proposals

from . import claims, inbox, web
from .actions.bulk import MAX_BULK, BulkOutcome, bulk_decide
from .actions.saved_views import delete_view, save_view
from .exceptions import ValidationFailed
from .forms import AssignForm, BulkDecideForm, SavedViewForm, reason_options
from .models import SavedView
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
        query = f.query()
        rows = [
            inbox.row_for(p, now=now, actor=actor, reviewers=reviewers, query=query)
            for p in proposals
        ]
    except ValidationFailed as exc:
        errors.update(exc.details or {"cursor": [exc.message]})
    mine = (
        claims.ReviewClaim.objects.filter(
            actor_id=actor.id, expires_at__gt=now, proposal__status=ProposalStatus.PENDING
        )
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
        "kind_links": inbox.kind_links(actor, f),
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
        "reasons": RejectionReason.choices,
        "reason_options": reason_options(),
        "now": now,
        "filter_params": list(f.params(cursor="").items()),
        "max_bulk": MAX_BULK,
        **_saved_views_context(request, f),
    }
    return render(request, "review/inbox.html", context, status=400 if errors else 200)


def _row_context(request: HttpRequest, actor: Actor) -> dict[str, Any]:
    """What the ``row`` partial needs besides the row (as ``review.proposal_views`` gives)."""
    return {
        "can_decide": may_decide(actor),
        "actor_id": actor.id,
        "here": web.next_url(request, reverse("review-inbox")),
        "reasons": RejectionReason.choices,
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
        "kind_links": inbox.kind_links(actor, f),
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
        problems = [p for v in (exc.details or {}).values() if isinstance(v, list) for p in v]
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
    """ "Claim next": lease the oldest pending proposal nobody else holds or is assigned, and
    open it."""
    f = inbox.parse_filter(request.POST, _named_memory(actor, request.POST))
    claim = claims.claim_next_proposal(
        actor=actor, f=claims.ClaimFilter(memory_id=f.memory_id, kind=f.kind or None)
    )
    if claim is None:
        messages.info(
            request,
            "Nothing left to claim: every pending proposal is taken, assigned to someone else "
            "or yours.",
        )
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


# --- Saved views -------------------------------------------------------------------------------


def _saved_views_context(request: HttpRequest, f: inbox.InboxFilter) -> dict[str, Any]:
    """The signed-in user's saved views (one query) and the inbox state "Save this view"
    keeps; the view matching the current state is marked."""
    here = f.params()
    views = [
        {
            "view": v,
            "href": reverse("review-inbox") + _query(v.params),
            "current": dict(v.params or {}) == here,
        }
        for v in SavedView.objects.filter(user_id=_user_pk(request)).only("pk", "name", "params")
    ]
    return {"saved_views": views, "view_params": list(here.items())}


def _user_pk(request: HttpRequest) -> int:
    """The signed-in user's id (the review guards let only signed-in users through)."""
    return int(request.user.pk or 0)


def _query(params: Any) -> str:
    # Sorted: PostgreSQL's jsonb keeps no key order, and one view should have one URL.
    encoded = urlencode(sorted((str(k), str(v)) for k, v in dict(params or {}).items()))
    return f"?{encoded}" if encoded else ""


def _saved_views_response(
    request: HttpRequest,
    actor: Actor,
    f: inbox.InboxFilter,
    *,
    status: int,
    notice: str = "",
    notice_kind: str = "success",
    errors: dict[str, list[str]] | None = None,
    name: str = "",
) -> HttpResponse:
    """The saved-views panel (htmx), or without JavaScript: back to the inbox with a message
    on success, the panel as its own page when the name was refused."""
    context = {
        "nav": "review",
        **_saved_views_context(request, f),
        "view_notice": notice,
        "view_notice_kind": notice_kind,
        "view_errors": errors or {},
        "view_name": name,
    }
    if web.is_htmx(request):
        return render(request, "review/inbox.html#saved-views", context, status=status)
    if status >= 400:
        context["back"] = reverse("review-inbox") + f.query()
        return render(request, "review/saved_views.html", context, status=status)
    messages.success(request, notice)
    return HttpResponseRedirect(web.next_url(request, reverse("review-inbox") + f.query()))


@require_POST
@web.readers
def saved_view_create(request: HttpRequest, actor: Actor) -> HttpResponse:
    """ "Save this view": keep the inbox's filters, search and order (the form's hidden fields)
    under a name, for the signed-in user only. A name already used answers 409."""
    f = inbox.nav_filter(actor, request.POST)
    form = SavedViewForm(request.POST)
    if not form.is_valid():
        return _saved_views_response(
            request, actor, f, status=422, errors=web.errors(form), notice_kind="error"
        )
    name = form.cleaned_data["name"]
    try:
        save_view(request.user, name=name, params=f.params())  # type: ignore[arg-type]
    except DomainError as exc:
        return _saved_views_response(
            request,
            actor,
            f,
            status=exc.http_status,
            errors={"name": [exc.message]},
            notice_kind="error",
            name=name,
        )
    return _saved_views_response(request, actor, f, status=200, notice=f"Saved view “{name}”.")


@require_safe
@web.readers
def saved_view_open(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """``/review/views/<id>/``: the inbox with the view's filters (only its owner's)."""
    view = SavedView.objects.filter(user_id=_user_pk(request), pk=pk).first()
    if view is None:
        return web.refuse(request, f"No saved view {pk}.", status=404)
    return HttpResponseRedirect(reverse("review-inbox") + _query(view.params))


@require_POST
@web.readers
def saved_view_delete(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """Delete one of the signed-in user's saved views (another user's is 404)."""
    view = SavedView.objects.filter(user_id=_user_pk(request), pk=pk).only("name").first()
    if view is None:
        return web.refuse(request, f"No saved view {pk}.", status=404)
    try:
        delete_view(request.user, pk=pk)  # type: ignore[arg-type]
    except NotFound as exc:  # deleted meanwhile, from another tab
        return web.refuse(request, exc.message, status=404)
    f = inbox.nav_filter(actor, request.POST)
    return _saved_views_response(
        request, actor, f, status=200, notice=f"Deleted saved view “{view.name}”."
    )
