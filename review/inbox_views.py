"""Browser pages of the reviewer inbox: the queue, the proposal page, the operation page, and the
approve / reject / compensate / claim forms.

Every control is a real form first: without JavaScript a decision redirects back with a message,
a conflict renders a 409 page naming who decided and when, and a refused form re-renders the
page with its errors (422). htmx is layered on top: the same URL answers an htmx request with
the fragment that changed — the inbox row (``HX-Target: proposal-<id>``) or the decision /
compensation panel — 409 re-renders that fragment from fresh data, 422 re-renders the form with
its errors, and a success is never a plain 302.

Views only translate: they check who may look (reviewers, auditors, staff) or act (reviewers,
staff), call one action, and choose the response. Fragment endpoints use the same decorators as
their pages, so a fragment never shows more than its page would.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from lib.auth import actor_from_request
from lib.errors import DomainError
from lib.pagination import keyset_page
from memory.actors import Actor
from memory.models import Memory
from proposals.exceptions import IllegalTransition

from . import actions, claims, inbox, pages
from .exceptions import (
    AlreadyCompensated,
    AlreadyDecided,
    CompensationConflict,
    DetailsNotAcknowledged,
    Forbidden,
    NotFound,
    SelfApproval,
    StaleProposal,
    ValidationFailed,
)
from .forms import REASON_LABELS, ApproveForm, CompensateForm, RejectForm, reason_options

View = Callable[..., HttpResponse]
CONFLICTS = (AlreadyDecided, StaleProposal, IllegalTransition)


# --- Access ------------------------------------------------------------------------------------


def _is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def _target(request: HttpRequest) -> str:
    htmx = getattr(request, "htmx", None)
    return str(htmx.target or "") if htmx else ""


def _login(request: HttpRequest) -> HttpResponse:
    if _is_htmx(request):
        page = request.htmx.current_url_abs_path or request.get_full_path()  # type: ignore[attr-defined]
        return HttpResponseClientRedirect(f"{reverse('login')}?next={page}")
    return redirect_to_login(request.get_full_path())


def _refuse(request: HttpRequest, message: str, status: int = 403) -> HttpResponse:
    return render(
        request,
        "review/refused.html",
        {"nav": "review", "message": message, "not_found": status == 404},
        status=status,
    )


def _guard(allowed: Callable[[Actor], bool], message: str) -> Callable[[View], View]:
    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return _login(request)
            actor = actor_from_request(request)
            if not allowed(actor):
                return _refuse(request, message)
            response = view(request, actor, *args, **kwargs)
            patch_vary_headers(response, ("HX-Request", "HX-Target"))
            return response

        return wrapper

    return decorator


#: Pages and fragments reviewers, auditors and staff may read.
readers = _guard(inbox.may_view, "Only reviewers, auditors and staff may open the review inbox.")
#: Forms only reviewers and staff may submit (auditors read, never change).
deciders = _guard(inbox.may_decide, "Only reviewers may decide proposals or undo operations.")


def _next_url(request: HttpRequest, default: str) -> str:
    candidate = request.POST.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default


def _proposal_url(pk: int) -> str:
    return reverse("review-proposal", args=[pk])


def _operation_url(pk: int) -> str:
    return reverse("review-operation", args=[pk])


# --- The inbox ---------------------------------------------------------------------------------


@require_safe
@readers
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
        if inbox.may_decide(actor)
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
        "can_decide": inbox.may_decide(actor),
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
@readers
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
@deciders
def claim_next(request: HttpRequest, actor: Actor) -> HttpResponse:
    """ "Claim next": lease the oldest unclaimed pending proposal and open it."""
    f = inbox.parse_filter(request.POST, _named_memory(actor, request.POST))
    claim = claims.claim_next_proposal(
        actor=actor, f=claims.ClaimFilter(memory_id=f.memory_id, kind=f.kind or None)
    )
    if claim is None:
        messages.info(request, "Nothing left to claim: every pending proposal is taken or yours.")
        url = _next_url(request, reverse("review-inbox"))
    else:
        minutes = claims.lease_seconds() // 60
        messages.success(
            request, f"You hold proposal #{claim.proposal_id} for the next {minutes} minutes."
        )
        url = _proposal_url(claim.proposal_id)
    return HttpResponseClientRedirect(url) if _is_htmx(request) else HttpResponseRedirect(url)


@require_POST
@deciders
def release_claim(request: HttpRequest, actor: Actor) -> HttpResponse:
    if claims.release_claim(actor=actor):
        messages.info(request, "Claim released.")
    url = _next_url(request, reverse("review-inbox"))
    return HttpResponseClientRedirect(url) if _is_htmx(request) else HttpResponseRedirect(url)


# --- The proposal page -------------------------------------------------------------------------


def _page_context(
    request: HttpRequest,
    actor: Actor,
    proposal: Any,
    *,
    approve_form: ApproveForm | None = None,
    reject_form: RejectForm | None = None,
    notice: str = "",
    notice_kind: str = "info",
    with_preview: bool = True,
) -> dict[str, Any]:
    now = timezone.now()
    page = pages.proposal_page(actor, proposal, now=now, with_preview=with_preview)
    approved_already = any(
        d.actor_id == actor.id and d.verdict == "approve" for d in page.decisions
    )
    return {
        "nav": "review",
        "page": page,
        "p": proposal,
        "can_decide": inbox.may_decide(actor)
        and page.is_pending
        and not page.is_self
        and not approved_already,
        "approved_already": approved_already,
        "is_reviewer": inbox.may_decide(actor),
        "actor_id": actor.id,
        "approve_errors": _errors(approve_form),
        "reject_errors": _errors(reject_form),
        "approve_values": _values(approve_form),
        "reject_values": _values(reject_form),
        "reasons": list(REASON_LABELS.items()),
        "notice": notice,
        "notice_kind": notice_kind,
        "here": request.get_full_path(),
        "now": now,
    }


def _errors(form: Any) -> dict[str, list[str]]:
    if form is None or not form.is_bound:
        return {}
    return {("form" if k == "__all__" else k): [str(m) for m in v] for k, v in form.errors.items()}


def _values(form: Any) -> dict[str, Any]:
    if form is None or not form.is_bound:
        return {}
    data = form.data
    return {
        "comment": data.get("comment", ""),
        "reason": data.get("reason", ""),
        "acknowledge": data.getlist("acknowledge") if hasattr(data, "getlist") else [],
    }


@require_safe
@readers
def proposal_detail(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """``/review/proposals/<id>/``: inputs → result, evidence, verification, recall preview and
    the decision forms."""
    proposal = pages.get_visible_proposal(actor, pk)
    if proposal is None:
        return _refuse(request, f"No proposal {pk}.", status=404)
    return render(request, "review/proposal.html", _page_context(request, actor, proposal))


def _fragment(
    request: HttpRequest,
    actor: Actor,
    pk: int,
    *,
    status: int,
    notice: str = "",
    notice_kind: str = "info",
    approve_form: ApproveForm | None = None,
    reject_form: RejectForm | None = None,
) -> HttpResponse:
    """The fragment an htmx decision swaps: the inbox row or the page's decision panel, always
    re-read from the database (so a conflict shows the winner's decision)."""
    if _target(request) == f"proposal-{pk}":
        row = inbox.fresh_row(actor, pk, now=timezone.now())
        if row is None:
            return _refuse(request, f"No proposal {pk}.", status=404)
        context = {
            "row": row,
            "can_decide": inbox.may_decide(actor),
            "actor_id": actor.id,
            "here": _next_url(request, reverse("review-inbox")),
            "reasons": list(REASON_LABELS.items()),
            "reason_options": reason_options(),
            "notice": notice,
            "notice_kind": notice_kind,
            "reject_errors": _errors(reject_form),
            "reject_values": _values(reject_form),
            "now": timezone.now(),
        }
        return render(request, "review/inbox.html#row", context, status=status)
    proposal = pages.get_visible_proposal(actor, pk)
    if proposal is None:
        return _refuse(request, f"No proposal {pk}.", status=404)
    context = _page_context(
        request,
        actor,
        proposal,
        approve_form=approve_form,
        reject_form=reject_form,
        notice=notice,
        notice_kind=notice_kind,
        with_preview=False,
    )
    context["fragment"] = True
    return render(request, "review/proposal.html#decision", context, status=status)


def _conflict(request: HttpRequest, actor: Actor, pk: int, exc: DomainError) -> HttpResponse:
    details = exc.details or {}
    if _is_htmx(request):
        return _fragment(request, actor, pk, status=409, notice=exc.message, notice_kind="conflict")
    context = {
        "nav": "review",
        "message": exc.message,
        "code": getattr(exc, "code", "conflict"),
        "decided_by": details.get("decided_by"),
        "decided_at": parse_datetime(str(details.get("decided_at") or "")),
        "status": details.get("status"),
        "moved": details.get("moved") or [],
        "back": _next_url(request, _proposal_url(pk)),
        "proposal_href": _proposal_url(pk),
    }
    return render(request, "review/conflict.html", context, status=409)


def _invalid(
    request: HttpRequest,
    actor: Actor,
    pk: int,
    *,
    approve_form: ApproveForm | None = None,
    reject_form: RejectForm | None = None,
) -> HttpResponse:
    """422: the form again, with what is missing."""
    if _is_htmx(request):
        return _fragment(
            request,
            actor,
            pk,
            status=422,
            approve_form=approve_form,
            reject_form=reject_form,
            notice="Please correct the form below.",
            notice_kind="error",
        )
    proposal = pages.get_visible_proposal(actor, pk)
    if proposal is None:
        return _refuse(request, f"No proposal {pk}.", status=404)
    context = _page_context(
        request,
        actor,
        proposal,
        approve_form=approve_form,
        reject_form=reject_form,
        notice="Please correct the form below.",
        notice_kind="error",
    )
    return render(request, "review/proposal.html", context, status=422)


def _decided(request: HttpRequest, actor: Actor, pk: int, message: str) -> HttpResponse:
    if _is_htmx(request):
        return _fragment(request, actor, pk, status=200, notice=message, notice_kind="success")
    messages.success(request, message)
    return HttpResponseRedirect(_next_url(request, _proposal_url(pk)))


def _domain_error(
    request: HttpRequest, actor: Actor, pk: int, exc: DomainError, form: Any, *, kind: str
) -> HttpResponse:
    """Translate what the engine refused into the page's answer."""
    if isinstance(exc, CONFLICTS):
        return _conflict(request, actor, pk, exc)
    if isinstance(exc, NotFound):
        return _refuse(request, exc.message, status=404)
    if isinstance(exc, SelfApproval | Forbidden):
        return _refuse(request, exc.message, status=403)
    if isinstance(exc, DetailsNotAcknowledged):
        missing = (exc.details or {}).get("lost_details") or []
        form.add_error("acknowledge", f"Acknowledge each lost detail: {', '.join(missing)}.")
    else:
        for name, problems in (exc.details or {"__all__": [exc.message]}).items():
            field = name if name in form.fields else None
            for problem in problems if isinstance(problems, list) else [problems]:
                form.add_error(field, str(problem))
    key = "approve_form" if kind == "approve" else "reject_form"
    return _invalid(request, actor, pk, **{key: form})


@require_POST
@deciders
def proposal_approve(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    proposal = pages.get_visible_proposal(actor, pk)
    if proposal is None:
        return _refuse(request, f"No proposal {pk}.", status=404)
    form = ApproveForm(request.POST, lost_details=actions.lost_detail_names(proposal))
    if not form.is_valid():
        return _invalid(request, actor, pk, approve_form=form)
    try:
        result = actions.approve_proposal(
            pk,
            actor=actor,
            comment=form.cleaned_data["comment"],
            acknowledge_lost_details=list(form.cleaned_data["acknowledge"]),
        )
    except DomainError as exc:
        return _domain_error(request, actor, pk, exc, form, kind="approve")
    if result.revision is not None and result.operation is not None:
        message = (
            f"Approved proposal #{pk}: revision {result.revision.number} written "
            f"(operation #{result.operation.pk})."
        )
    else:
        message = (
            f"Your approval of #{pk} is recorded ({result.approvals} of {result.required}); "
            "it waits for another reviewer."
        )
    return _decided(request, actor, pk, message)


@require_POST
@deciders
def proposal_reject(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    proposal = pages.get_visible_proposal(actor, pk)
    if proposal is None:
        return _refuse(request, f"No proposal {pk}.", status=404)
    form = RejectForm(request.POST)
    if not form.is_valid():
        return _invalid(request, actor, pk, reject_form=form)
    try:
        actions.reject_proposal(
            pk,
            actor=actor,
            reason=form.cleaned_data["reason"],
            comment=form.cleaned_data["comment"],
        )
    except DomainError as exc:
        return _domain_error(request, actor, pk, exc, form, kind="reject")
    return _decided(request, actor, pk, f"Rejected proposal #{pk}.")


# --- The operation page ------------------------------------------------------------------------


def _operation_context(
    request: HttpRequest,
    actor: Actor,
    operation: Any,
    *,
    form: CompensateForm | None = None,
    notice: str = "",
    notice_kind: str = "info",
    moved: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "nav": "review",
        "page": pages.operation_page(operation),
        "op": operation,
        "can_compensate": inbox.may_decide(actor) and not hasattr(operation, "compensation"),
        "is_reviewer": inbox.may_decide(actor),
        "errors": _errors(form),
        "values": _values(form),
        "notice": notice,
        "notice_kind": notice_kind,
        "conflict_moved": moved or [],
    }


def _get_operation(actor: Actor, pk: int) -> Any:
    return pages.operation_queryset(actor).filter(pk=pk).first()


@require_safe
@readers
def operation_detail(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """``/operations/<id>/``: pre-state, produced records, derived-view impact, the compensation
    plan and what cannot be undone; the Compensate form for reviewers."""
    operation = _get_operation(actor, pk)
    if operation is None:
        return _refuse(request, f"No operation {pk}.", status=404)
    return render(request, "review/operation.html", _operation_context(request, actor, operation))


@require_POST
@deciders
def operation_compensate(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    operation = _get_operation(actor, pk)
    if operation is None:
        return _refuse(request, f"No operation {pk}.", status=404)
    form = CompensateForm(request.POST)
    status, notice, kind, moved = 200, "", "info", None
    if form.is_valid():
        try:
            result = actions.compensate_operation(
                pk, actor=actor, comment=form.cleaned_data["comment"]
            )
        except (CompensationConflict, AlreadyCompensated) as exc:
            status, notice, kind = 409, exc.message, "conflict"
            moved = (exc.details or {}).get("moved") or []
        except NotFound as exc:
            return _refuse(request, exc.message, status=404)
        except Forbidden as exc:
            return _refuse(request, exc.message, status=403)
        except ValidationFailed as exc:
            for name, problems in (exc.details or {"__all__": [exc.message]}).items():
                for problem in problems if isinstance(problems, list) else [problems]:
                    form.add_error(name if name in form.fields else None, str(problem))
            status = 422
        else:
            notice = (
                f"Operation #{pk} compensated: revision {result.revision.number} restored "
                "the prior heads."
            )
            kind = "success"
            if not _is_htmx(request):
                messages.success(request, notice)
                return HttpResponseRedirect(_operation_url(pk))
    else:
        status = 422
    if status == 422:
        notice, kind = "Please correct the form below.", "error"
    if status == 409 and not _is_htmx(request):
        exc_details = {"moved": moved or []}
        return render(
            request,
            "review/conflict.html",
            {
                "nav": "review",
                "message": notice,
                "code": "compensation_conflict",
                "moved": exc_details["moved"],
                "back": _operation_url(pk),
                "operation_href": _operation_url(pk),
                "compensation": getattr(_get_operation(actor, pk), "compensation", None),
            },
            status=409,
        )
    operation = _get_operation(actor, pk)
    context = _operation_context(
        request,
        actor,
        operation,
        form=form if status == 422 else None,
        notice=notice,
        notice_kind=kind,
        moved=moved,
    )
    template = (
        "review/operation.html#compensation" if _is_htmx(request) else "review/operation.html"
    )
    return render(request, template, context, status=status)
