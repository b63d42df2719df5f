"""Browser pages of one proposal: inputs → result, evidence, verification, recall preview and
the Approve / Reject forms.

Without JavaScript a decision redirects back with a message, a conflict renders a 409 page
naming who decided and when, and a refused form re-renders the page with its errors (422). With
htmx the same URL answers with the fragment that changed — the inbox row
(``HX-Target: proposal-<id>``) or the decision panel — re-read from the database; a success is
never a plain 302.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST, require_safe

from lib.errors import DomainError
from memory.actors import Actor
from proposals.exceptions import IllegalTransition
from proposals.models import Proposal

from . import actions, inbox, pages, web
from .exceptions import (
    AlreadyDecided,
    DetailsNotAcknowledged,
    Forbidden,
    NotFound,
    SelfApproval,
    StaleProposal,
)
from .forms import REASON_LABELS, ApproveForm, RejectForm, reason_options
from .permissions import has_approved, may_decide

CONFLICTS = (AlreadyDecided, StaleProposal, IllegalTransition)


def _visible(actor: Actor, pk: int) -> Proposal | None:
    try:
        return pages.get_visible_proposal(actor, pk)
    except NotFound:
        return None


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
    approved_already = has_approved(actor, page.decisions, revision=page.proposal.revision)
    return {
        "nav": "review",
        "page": page,
        "p": proposal,
        "can_decide": may_decide(actor)
        and page.is_pending
        and not page.is_self
        and not approved_already,
        "approved_already": approved_already,
        "is_reviewer": may_decide(actor),
        "actor_id": actor.id,
        "approve_errors": web.errors(approve_form),
        "reject_errors": web.errors(reject_form),
        "approve_values": web.values(approve_form),
        "reject_values": web.values(reject_form),
        "reasons": list(REASON_LABELS.items()),
        "notice": notice,
        "notice_kind": notice_kind,
        "here": request.get_full_path(),
        "now": now,
    }


@require_safe
@web.readers
def proposal_detail(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """``/review/proposals/<id>/``: inputs → result, evidence, verification, recall preview and
    the decision forms."""
    return _render_page(request, actor, pk, "review/proposal.html", status=200)


def _render_page(
    request: HttpRequest, actor: Actor, pk: int, template: str, *, status: int, **kw: Any
) -> HttpResponse:
    """The proposal page (or its decision panel) re-read for ``actor``; 404 when invisible."""
    proposal = _visible(actor, pk)
    if proposal is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
    fragment = kw.pop("fragment", False)
    context = _page_context(request, actor, proposal, **kw)
    if fragment:
        context["fragment"] = True
    return render(request, template, context, status=status)


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
    if web.target(request) == f"proposal-{pk}":
        row = inbox.fresh_row(actor, pk, now=timezone.now())
        if row is None:
            return web.refuse(request, f"No proposal {pk}.", status=404)
        context = {
            "row": row,
            "can_decide": may_decide(actor),
            "actor_id": actor.id,
            "here": web.next_url(request, reverse("review-inbox")),
            "reasons": list(REASON_LABELS.items()),
            "reason_options": reason_options(),
            "notice": notice,
            "notice_kind": notice_kind,
            "reject_errors": web.errors(reject_form),
            "reject_values": web.values(reject_form),
            "now": timezone.now(),
        }
        return render(request, "review/inbox.html#row", context, status=status)
    return _render_page(
        request,
        actor,
        pk,
        "review/proposal.html#decision",
        status=status,
        approve_form=approve_form,
        reject_form=reject_form,
        notice=notice,
        notice_kind=notice_kind,
        with_preview=False,
        fragment=True,
    )


def _conflict(request: HttpRequest, actor: Actor, pk: int, exc: DomainError) -> HttpResponse:
    details = exc.details or {}
    if web.is_htmx(request):
        return _fragment(request, actor, pk, status=409, notice=exc.message, notice_kind="conflict")
    context = {
        "nav": "review",
        "message": exc.message,
        "code": getattr(exc, "code", "conflict"),
        "decided_by": details.get("decided_by"),
        "decided_at": parse_datetime(str(details.get("decided_at") or "")),
        "status": details.get("status"),
        "moved": details.get("moved") or [],
        "back": web.next_url(request, web.proposal_url(pk)),
        "proposal_href": web.proposal_url(pk),
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
    forms: dict[str, Any] = {"approve_form": approve_form, "reject_form": reject_form}
    notice: dict[str, Any] = {"notice": "Please correct the form below.", "notice_kind": "error"}
    if web.is_htmx(request):
        return _fragment(request, actor, pk, status=422, **forms, **notice)
    return _render_page(request, actor, pk, "review/proposal.html", status=422, **forms, **notice)


def _decided(request: HttpRequest, actor: Actor, pk: int, message: str) -> HttpResponse:
    if web.is_htmx(request):
        return _fragment(request, actor, pk, status=200, notice=message, notice_kind="success")
    messages.success(request, message)
    return HttpResponseRedirect(web.next_url(request, web.proposal_url(pk)))


def _domain_error(
    request: HttpRequest, actor: Actor, pk: int, exc: DomainError, form: Any, *, kind: str
) -> HttpResponse:
    """Translate what the engine refused into the page's answer."""
    if isinstance(exc, CONFLICTS):
        return _conflict(request, actor, pk, exc)
    if isinstance(exc, NotFound):
        return web.refuse(request, exc.message, status=404)
    if isinstance(exc, SelfApproval | Forbidden):
        return web.refuse(request, exc.message, status=403)
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
@web.deciders
def proposal_approve(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    proposal = _visible(actor, pk)
    if proposal is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
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
@web.deciders
def proposal_reject(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    proposal = _visible(actor, pk)
    if proposal is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
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
