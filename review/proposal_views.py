"""Browser pages of one proposal: inputs → result, evidence, verification, recall preview, the
discussion and the Approve / Reject / Request changes forms, and a reviewer's edit of the
proposed text.

Without JavaScript a decision redirects back with a message, a conflict renders a 409 page
naming who decided and when, and a refused form re-renders the page with its errors (422). With
htmx the same URL answers with the fragment that changed — the inbox row
(``HX-Target: proposal-<id>``) or the decision panel — re-read from the database; a success is
never a plain 302.

A comment posted with htmx answers with the discussion (``#thread``); without JavaScript it
redirects back. "Resolve" on a comment does the same (a comment someone else resolved
meanwhile: 409 with the discussion re-read, naming who resolved it). "Edit proposed text" is a
plain form: the amendment changes the whole page (a new revision, verification and diff), so it
always redirects back to the page.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from lib.errors import DomainError
from memory.actors import Actor
from proposals.actions import rebase_proposal
from proposals.actions.discussion import add_comment, amend_proposal, resolve_comment
from proposals.exceptions import AlreadyResolved, IllegalTransition
from proposals.kinds import kind_of
from proposals.models import Proposal, RejectionReason

from . import actions, claims, inbox, pages, web
from .exceptions import (
    AlreadyDecided,
    DetailsNotAcknowledged,
    Forbidden,
    NotFound,
    ProposalAmended,
    SelfApproval,
    StaleProposal,
)
from .forms import (
    AmendForm,
    ApproveForm,
    CommentForm,
    RejectForm,
    RequestChangesForm,
    reason_options,
)
from .permissions import has_approved, may_decide

CONFLICTS = (AlreadyDecided, StaleProposal, IllegalTransition, ProposalAmended)


def _visible(actor: Actor, pk: int) -> Proposal | None:
    try:
        return pages.get_visible_proposal(actor, pk)
    except NotFound:
        return None


# --- The proposal page -------------------------------------------------------------------------


def proposal_form(view: Callable[[HttpRequest, Actor, int, Proposal], HttpResponse]) -> Any:
    """A form posted to a proposal's page: POST only, by reviewers and staff, about a proposal
    the actor may see (404 otherwise), which ``view`` is given with its ``pk``."""

    @require_POST
    @web.deciders
    @wraps(view)
    def posted(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
        proposal = _visible(actor, pk)
        if proposal is None:
            return web.refuse(request, f"No proposal {pk}.", status=404)
        return view(request, actor, pk, proposal)

    return posted


def _data(form: Any, name: str, default: str = "") -> str:
    """What the user typed into ``name`` of a bound form (to show it again), else ``default``."""
    if form is None or not form.is_bound:
        return default
    return str(form.data.get(name, default))


def _page_context(
    request: HttpRequest,
    actor: Actor,
    proposal: Any,
    *,
    approve_form: ApproveForm | None = None,
    reject_form: RejectForm | None = None,
    changes_form: RequestChangesForm | None = None,
    comment_form: CommentForm | None = None,
    amend_form: AmendForm | None = None,
    notice: str = "",
    notice_kind: str = "info",
    thread_notice: str = "",
    thread_notice_kind: str = "info",
    with_preview: bool = True,
    with_queue: bool = True,
) -> dict[str, Any]:
    now = timezone.now()
    page = pages.proposal_page(actor, proposal, now=now, with_preview=with_preview)
    approved_already = has_approved(actor, page.decisions, revision=page.proposal.revision)
    reviewer = may_decide(actor)
    return {
        "nav": "review",
        "page": page,
        "p": proposal,
        "can_decide": reviewer and page.is_pending and not page.is_self and not approved_already,
        # Changes requested: the proposal can still be rejected (not approved) until amended.
        "can_reject_waiting": reviewer and page.changes_requested and not page.is_self,
        # A stale proposal is closed by a reviewer ("Close as stale"), a rejection.
        "can_close_stale": reviewer and page.is_stale and not page.is_self,
        # ...or rebased onto the current heads, by any reviewer (the submitter included).
        "can_rebase": reviewer and page.is_stale,
        "can_comment": reviewer,
        "can_amend": reviewer and page.editable_text is not None,
        "approved_already": approved_already,
        "is_reviewer": reviewer,
        "actor_id": actor.id,
        "approve_errors": web.errors(approve_form),
        "reject_errors": web.errors(reject_form),
        "changes_errors": web.errors(changes_form),
        "comment_errors": web.errors(comment_form),
        "amend_errors": web.errors(amend_form),
        "approve_values": web.values(approve_form),
        "reject_values": web.values(reject_form),
        "changes_values": web.values(changes_form),
        "comment_value": _data(comment_form, "body"),
        "comment_quote": _data(comment_form, "quote"),
        "amend_text": _data(amend_form, "text", page.editable_text or ""),
        "amend_note": _data(amend_form, "note"),
        "reasons": RejectionReason.choices,
        "notice": notice,
        "notice_kind": notice_kind,
        "thread_notice": thread_notice,
        "thread_notice_kind": thread_notice_kind,
        "here": request.get_full_path(),
        "now": now,
        **_queue(request, actor, proposal.pk, neighbours=with_queue),
    }


def _queue(request: HttpRequest, actor: Actor, pk: int, *, neighbours: bool) -> dict[str, Any]:
    """The inbox order the page was opened from (its filters arrive as query parameters, or as
    the form's hidden fields after a POST) and, for the whole page, the previous / next
    proposal in it: two keyset reads. A fragment only keeps the filters for "Approve & next"."""
    f = inbox.nav_filter(actor, request.GET or request.POST)
    query = f.query()
    before, after = inbox.neighbours(actor, f, pk) if neighbours else (None, None)
    return {
        "queue_query": query,
        "queue_params": list(f.params().items()),
        "inbox_href": reverse("review-inbox") + query,
        "prev_href": web.proposal_url(before) + query if before else "",
        "next_href": web.proposal_url(after) + query if after else "",
        "prev_pk": before,
        "next_pk": after,
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
    **forms: Any,
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
            "reasons": RejectionReason.choices,
            "reason_options": reason_options(),
            "notice": notice,
            "notice_kind": notice_kind,
            "reject_errors": web.errors(forms.get("reject_form")),
            "reject_values": web.values(forms.get("reject_form")),
            "now": timezone.now(),
            # The kind tabs' counts change with the decision: swapped out of band.
            "kind_links": inbox.kind_links(actor, inbox.nav_filter(actor, _inbox_params(request))),
        }
        return render(request, "review/inbox.html#row-response", context, status=status)
    return _render_page(
        request,
        actor,
        pk,
        "review/proposal.html#decision",
        status=status,
        **forms,
        notice=notice,
        notice_kind=notice_kind,
        with_preview=False,
        with_queue=False,
        fragment=True,
    )


def _inbox_params(request: HttpRequest) -> QueryDict:
    """The filters of the inbox page an htmx row action came from (``HX-Current-URL``, else
    the row form's ``next``), so its refreshed kind counts match that page."""
    htmx = getattr(request, "htmx", None)
    url = str(getattr(htmx, "current_url", "") or "") or request.POST.get("next", "")
    return QueryDict(urlsplit(url).query)


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


def _invalid(request: HttpRequest, actor: Actor, pk: int, **forms: Any) -> HttpResponse:
    """422: the form again, with what is missing."""
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
    return _invalid(request, actor, pk, **{f"{kind}_form": form})


@proposal_form
def proposal_approve(
    request: HttpRequest, actor: Actor, pk: int, proposal: Proposal
) -> HttpResponse:
    form = ApproveForm(request.POST, lost_details=actions.lost_detail_names(proposal))
    if not form.is_valid():
        return _invalid(request, actor, pk, approve_form=form)
    try:
        result = actions.approve_proposal(
            pk,
            actor=actor,
            comment=form.cleaned_data["comment"],
            acknowledge_lost_details=list(form.cleaned_data["acknowledge"]),
            revision=form.cleaned_data.get("revision"),
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
    if request.POST.get("then") == "next":
        return _decided_then_next(request, actor, pk, message)
    return _decided(request, actor, pk, message)


def _decided_then_next(request: HttpRequest, actor: Actor, pk: int, message: str) -> HttpResponse:
    """ "Approve & next" and "Reject & next": on to the next pending proposal of the inbox order
    the page was opened from (its filters are the form's hidden fields), or back to that inbox
    when none is left after it (the message says whether pending proposals before it remain)."""
    f = inbox.nav_filter(actor, request.POST)
    before, after = inbox.open_neighbours(actor, f, pk)
    if after is None:
        url = reverse("review-inbox") + f.query()
        # Only "nothing left" when it is true: proposals before this one may still wait.
        if before is None:
            message += " Nothing left to review in this view."
        else:
            message += (
                f" None after #{pk} in this view; proposals listed before it are still pending."
            )
    else:
        url = web.proposal_url(after) + f.query()
    messages.success(request, message)
    return HttpResponseClientRedirect(url) if web.is_htmx(request) else HttpResponseRedirect(url)


@proposal_form
def proposal_reject(
    request: HttpRequest, actor: Actor, pk: int, proposal: Proposal
) -> HttpResponse:
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
    if request.POST.get("then") == "next":
        return _decided_then_next(request, actor, pk, f"Rejected proposal #{pk}.")
    return _decided(request, actor, pk, f"Rejected proposal #{pk}.")


@proposal_form
def proposal_request_changes(
    request: HttpRequest, actor: Actor, pk: int, proposal: Proposal
) -> HttpResponse:
    """Ask the submitter for changes (``review.actions.request_changes``): the proposal waits
    for an amendment; the comment says what should change."""
    form = RequestChangesForm(request.POST)
    if not form.is_valid():
        return _invalid(request, actor, pk, changes_form=form)
    try:
        actions.request_changes(pk, actor=actor, comment=form.cleaned_data["comment"])
    except DomainError as exc:
        return _domain_error(request, actor, pk, exc, form, kind="changes")
    return _decided(
        request, actor, pk, f"Requested changes on proposal #{pk}; it waits for an amendment."
    )


# --- The discussion and the reviewer's edit ------------------------------------------------------


def _form_errors(form: Any, exc: DomainError, fields: dict[str, str]) -> None:
    """Put what the action refused on ``form``: messages about a known field (``fields`` maps
    the action's names to the form's) on that field, the refusal's message otherwise."""
    placed = False
    for name, problems in (exc.details or {}).items():
        field = fields.get(name)
        if field is None:
            continue
        for problem in problems if isinstance(problems, list) else [problems]:
            form.add_error(field, str(problem))
            placed = True
    if not placed:
        form.add_error(None, exc.message)


def _thread(request: HttpRequest, actor: Actor, pk: int, *, status: int, **kw: Any) -> HttpResponse:
    """The discussion fragment htmx swaps after a comment (re-read from the database)."""
    return _render_page(
        request,
        actor,
        pk,
        "review/proposal.html#thread",
        status=status,
        with_preview=False,
        with_queue=False,
        **kw,
    )


@proposal_form
def proposal_comment(
    request: HttpRequest, actor: Actor, pk: int, proposal: Proposal
) -> HttpResponse:
    """Add a comment to the proposal's discussion (``proposals.actions.add_comment``)."""
    form = CommentForm(request.POST)
    if form.is_valid():
        try:
            quote = form.cleaned_data["quote"]
            add_comment(
                proposal,
                actor=actor,
                body=form.cleaned_data["body"],
                anchor={"quote": quote} if quote else None,
            )
        except (NotFound, Forbidden) as exc:
            return web.refuse(request, exc.message, status=exc.http_status)
        except DomainError as exc:
            _form_errors(form, exc, {"body": "body", "anchor": "quote", "anchor.quote": "quote"})
        else:
            if web.is_htmx(request):
                return _thread(request, actor, pk, status=200)
            messages.success(request, f"Comment added to proposal #{pk}.")
            return HttpResponseRedirect(f"{web.proposal_url(pk)}#thread")
    if web.is_htmx(request):
        return _thread(request, actor, pk, status=422, comment_form=form)
    return _render_page(request, actor, pk, "review/proposal.html", status=422, comment_form=form)


@require_POST
@web.deciders
def proposal_comment_resolve(
    request: HttpRequest, actor: Actor, pk: int, comment_id: int
) -> HttpResponse:
    """Mark a comment of the discussion resolved (``proposals.actions.resolve_comment``)."""
    proposal = _visible(actor, pk)
    if proposal is None:
        return web.refuse(request, f"No proposal {pk}.", status=404)
    try:
        resolve_comment(proposal, actor=actor, comment_id=comment_id)
    except AlreadyResolved as exc:
        notice = f"{exc.message} Nothing was changed."
        if web.is_htmx(request):
            return _thread(
                request, actor, pk, status=409, thread_notice=notice, thread_notice_kind="conflict"
            )
        return _render_page(
            request,
            actor,
            pk,
            "review/proposal.html",
            status=409,
            thread_notice=notice,
            thread_notice_kind="conflict",
        )
    except (NotFound, Forbidden) as exc:
        return web.refuse(request, exc.message, status=exc.http_status)
    if web.is_htmx(request):
        return _thread(request, actor, pk, status=200)
    messages.success(request, f"Comment resolved on proposal #{pk}.")
    return HttpResponseRedirect(f"{web.proposal_url(pk)}#thread-comment-{comment_id}")


def _text_changes(proposal: Proposal, text: str) -> dict[str, Any] | None:
    """The amendment that replaces the proposed text with ``text`` (None: nothing to edit)."""
    if pages.proposed_text(proposal.kind, proposal.payload) is None:
        return None
    return kind_of(proposal.kind).text_changes(proposal, text)


#: Where the amendment's refusals about the text go on the form.
AMEND_FIELDS = {
    "body": "text",
    "successor": "text",
    "successor.body": "text",
    "comment": "note",
}


@proposal_form
def proposal_amend(request: HttpRequest, actor: Actor, pk: int, proposal: Proposal) -> HttpResponse:
    """Edit proposed text: a reviewer's amendment of the body (consolidation, promotion) or of
    a new successor's body (supersession) — a new revision, verified again; the reviewer counts
    as self from then on (``proposals.actions.amend_proposal``)."""
    form = AmendForm(request.POST)
    if not form.is_valid():
        return _render_page(request, actor, pk, "review/proposal.html", status=422, amend_form=form)
    changes = _text_changes(proposal, form.cleaned_data["text"])
    if changes is None:  # the page has no edit form: say so in the decision panel
        return _render_page(
            request,
            actor,
            pk,
            "review/proposal.html",
            status=422,
            notice=f"A {proposal.kind} proposal has no proposed text to edit.",
            notice_kind="error",
        )
    try:
        amended = amend_proposal(
            proposal, actor=actor, changes=changes, comment=form.cleaned_data["note"]
        )
    except CONFLICTS as exc:
        return _conflict(request, actor, pk, exc)
    except (NotFound, Forbidden) as exc:
        return web.refuse(request, exc.message, status=exc.http_status)
    except DomainError as exc:
        _form_errors(form, exc, AMEND_FIELDS)
        return _render_page(request, actor, pk, "review/proposal.html", status=422, amend_form=form)
    # The editor counts as self now and cannot decide it: their lease would only keep the
    # proposal from the reviewers who can.
    claims.release_claim(actor=actor, proposal_id=pk)
    messages.success(
        request,
        f"Amended proposal #{pk}: revision {amended.revision} is pending. "
        "You edited it, so another reviewer decides it.",
    )
    return HttpResponseRedirect(web.proposal_url(pk))


@proposal_form
def proposal_rebase(
    request: HttpRequest, actor: Actor, pk: int, proposal: Proposal
) -> HttpResponse:
    """Rebase a stale proposal onto the current heads (``proposals.actions.rebase_proposal``):
    a new revision, verified again, pending; the rebasing reviewer counts as self unless they
    submitted it. A plain form (the whole page changes): success redirects back with a
    message; a refusal (an input moved on, another open proposal) shows the page with the
    reason under its status (409)."""
    try:
        rebased = rebase_proposal(proposal, actor=actor)
    except (NotFound, Forbidden) as exc:
        return web.refuse(request, exc.message, status=exc.http_status)
    except DomainError as exc:
        return _render_page(
            request,
            actor,
            pk,
            "review/proposal.html",
            status=exc.http_status,
            notice=exc.message,
            notice_kind="conflict",
        )
    claims.release_claim(actor=actor, proposal_id=pk)
    messages.success(
        request,
        f"Rebased proposal #{pk} onto the current heads: revision {rebased.revision} is pending "
        "and was verified again; approvals of earlier revisions no longer count.",
    )
    return HttpResponseRedirect(web.proposal_url(pk))
