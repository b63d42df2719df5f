"""Browser forms of one entry's governance, from the entry page (the entry timeline): Quarantine
and Release, Pin and Unpin, Forget and Reactivate — each with a required reason — and the
"Re-checking" card's Confirm and Require re-verification (``memory.revalidation``; see the
section below).

Reviewers and staff only (:data:`review.web.deciders`: anonymous visitors go to the login page,
auditors and everyone else get 403). Each calls one memory action (``memory.actions``:
``quarantine_entry``, ``release_entry``, ``pin_entry``, ``forget_entry`` / ``reactivate_entry``
with ``as_reviewer=True``), the only revision writer, in its one transaction and with its audit
event; the actions keep every rule: a reason is required, a quarantined entry cannot be
quarantined again, only a quarantined one is released, an inactive entry is not forgotten twice.
Forget and Reactivate are writers' actions over REST; from the entry page they are a reviewer's
decision and the revision is attributed to the reviewer (DESIGN §9: reviewers act through
revisions attributed to them).
Without JavaScript a success redirects back to the timeline with a message; a refusal renders
the timeline again with the message and the reason typed, under the error's own status (400,
409, 413), and an entry or Memory the reviewer cannot see is the 404 page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from lib.errors import DomainError, Forbidden, NotFound
from lib.identity import Actor
from memory import actions as memory_actions
from memory.actions import EvidenceItem, WriteResult
from memory.models import Head, Memory
from memory.selectors import get_memory

from . import web
from .history_views import render_timeline
from .links import entry_href

EntryAction = Callable[..., WriteResult]


def _problem(exc: DomainError) -> str:
    """What the reviewer reads: the reason field's problems when there are any (a list, as
    validation reports them), else the message."""
    problems = (exc.details or {}).get("reason")
    if isinstance(problems, list) and problems:
        return "Reason: " + " ".join(str(p) for p in problems)
    return exc.message


def _govern(
    request: HttpRequest,
    actor: Actor,
    slug: str,
    entry_id: str,
    action: EntryAction,
    done: str,
    *,
    form: str = "quarantine",
    **options: Any,
) -> HttpResponse:
    reason = request.POST.get("reason", "")
    try:
        memory: Memory = get_memory(actor, slug)
        result = action(memory, actor=actor, entry_uid=entry_id, reason=reason, **options)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    except Forbidden as exc:
        return web.refuse(request, exc.message, status=403)
    except DomainError as exc:
        govern: dict[str, Any] = {"form": form, "error": _problem(exc), "reason": reason}
        return render_timeline(
            request, actor, slug, entry_id, status=exc.http_status, govern=govern
        )
    message = f"Entry {entry_id} {done}"
    if result.revision is not None:
        message += f" (revision {result.revision.number})"
    elif result.reason == "no_change":
        message = f"Entry {entry_id} was already {done}; nothing changed"
    message += "."
    if result.proposal_id:
        message += f" It waits for admission proposal #{result.proposal_id}."
    messages.success(request, message)
    return HttpResponseRedirect(entry_href(slug, entry_id))


@require_POST
@web.deciders
def entry_quarantine(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/quarantine/`` (``reason``): withhold the entry
    from every recall view."""
    return _govern(request, actor, slug, entry_id, memory_actions.quarantine_entry, "quarantined")


@require_POST
@web.deciders
def entry_release(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/release/`` (``reason``): give a quarantined
    entry back the state it had before."""
    return _govern(request, actor, slug, entry_id, memory_actions.release_entry, "released")


@require_POST
@web.deciders
def entry_pin(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/pin/`` (``pinned`` = ``true`` | ``false``,
    ``category`` when pinning, ``reason``): pin the entry (it is then never retired
    automatically) or unpin it."""
    pinned = request.POST.get("pinned", "true") != "false"
    category = request.POST.get("category") or None
    return _govern(
        request,
        actor,
        slug,
        entry_id,
        memory_actions.pin_entry,
        "pinned" if pinned else "unpinned",
        form="pin",
        pinned=pinned,
        category=category,
    )


@require_POST
@web.deciders
def entry_forget(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/forget/`` (``reason``): retire the entry (same
    version, inactive), attributed to the reviewer."""
    return _govern(
        request,
        actor,
        slug,
        entry_id,
        memory_actions.forget_entry,
        "forgotten",
        form="lifecycle",
        as_reviewer=True,
    )


@require_POST
@web.deciders
def entry_reactivate(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/reactivate/`` (``reason``): make an inactive
    entry active again with the same version, attributed to the reviewer."""
    return _govern(
        request,
        actor,
        slug,
        entry_id,
        memory_actions.reactivate_entry,
        "reactivated",
        form="lifecycle",
        as_reviewer=True,
    )


# --- Re-checking (memory.revalidation): Confirm and Require re-verification ------------------

#: Confirm: the REST endpoint's rule (``memory.actions.require_confirmer``) — in the browser,
#: reviewers and staff; auditors read only.
confirmers = web.guard(
    lambda actor: actor.can_write_entries or actor.is_reviewer,
    "Only reviewers may confirm entries from the entry page.",
)
#: Require re-verification: reviewers and staff (``memory.actions.require_reviewer``).
reverifiers = web.guard(
    lambda actor: actor.is_reviewer,
    "Only reviewers may require the re-verification of an entry.",
)


def _recheck(
    request: HttpRequest,
    actor: Actor,
    slug: str,
    entry_id: str,
    form: str,
    write: Callable[[Memory], WriteResult],
    done: Callable[[WriteResult], str],
    values: dict[str, str],
) -> HttpResponse:
    """Run one revalidation action from the entry page's "Re-checking" card. Success: back to
    the timeline with a message (an htmx request is sent there with ``HX-Redirect``). Refusal:
    the card again with the error in place — 422 for what was typed (a review date that is not
    in the future, an unknown source, a missing reason), 409 for the entry's state — the whole
    page without JavaScript, only the card for htmx."""
    try:
        memory: Memory = get_memory(actor, slug)
        result = write(memory)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    except Forbidden as exc:
        return web.refuse(request, exc.message, status=403)
    except DomainError as exc:
        govern: dict[str, Any] = {
            "form": form,
            "error": _recheck_problem(exc),
            "reason": values.get("reason", ""),
            "values": values,
        }
        return render_timeline(
            request,
            actor,
            slug,
            entry_id,
            status=409 if exc.http_status == 409 else 422,
            govern=govern,
            partial="recheck" if web.is_htmx(request) else "",
        )
    messages.success(request, done(result))
    url = entry_href(slug, entry_id)
    return HttpResponseClientRedirect(url) if web.is_htmx(request) else HttpResponseRedirect(url)


def _recheck_problem(exc: DomainError) -> str:
    """Each problem the action names, by the field it is about, else the message."""
    details = exc.details or {}
    labels = {"review_at": "Next review date", "evidence": "Evidence", "reason": "Reason"}
    parts = []
    for field, label in labels.items():
        problems = details.get(field)
        if isinstance(problems, list) and problems:
            parts.append(f"{label}: " + " ".join(_flat(p) for p in problems))
        elif isinstance(problems, dict) and problems:
            parts.append(f"{label}: " + " ".join(_flat(p) for p in problems.values()))
    return " ".join(parts) or exc.message


def _flat(problem: Any) -> str:
    if isinstance(problem, dict):
        return " ".join(_flat(p) for p in problem.values())
    if isinstance(problem, list):
        return " ".join(_flat(p) for p in problem)
    return str(problem)


def _review_date(result: WriteResult) -> str:
    review_at = Head.objects.filter(entry=result.entry).values_list("review_at", flat=True).first()
    return f"next review {review_at:%Y-%m-%d}" if review_at else "no review date scheduled"


@require_POST
@confirmers
def entry_confirm(request: HttpRequest, actor: Actor, slug: str, entry_id: str) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/confirm/`` (``review_at`` optional, a date;
    ``source`` and ``ref`` optional, one new citation): ``memory.actions.confirm_entry``, as
    ``POST …/entries/{id}/confirm`` — a revision on the same version that moves the review
    date on."""
    values = {k: request.POST.get(k, "").strip() for k in ("review_at", "source", "ref")}
    evidence: list[EvidenceItem] | None = (
        [{"source": values["source"], "ref": values["ref"]}]
        if values["source"] or values["ref"]
        else None
    )

    def write(memory: Memory) -> WriteResult:
        return memory_actions.confirm_entry(
            memory,
            actor=actor,
            entry_uid=entry_id,
            evidence=evidence,
            review_at=values["review_at"] or None,
        )

    def done(result: WriteResult) -> str:
        number = result.revision.number if result.revision else "—"
        return f"Entry {entry_id} confirmed (revision {number}); {_review_date(result)}."

    return _recheck(request, actor, slug, entry_id, "confirm", write, done, values)


@require_POST
@reverifiers
def entry_require_reverification(
    request: HttpRequest, actor: Actor, slug: str, entry_id: str
) -> HttpResponse:
    """``POST /review/entries/<slug>/<entry_id>/require-reverification/`` (``reason``):
    ``memory.actions.require_reverification``, as ``POST …/require-reverification`` — the
    entry is due for re-checking now."""
    values = {"reason": request.POST.get("reason", "")}

    def write(memory: Memory) -> WriteResult:
        return memory_actions.require_reverification(
            memory, actor=actor, entry_uid=entry_id, reason=values["reason"]
        )

    def done(result: WriteResult) -> str:
        if result.revision is None:
            return f"Entry {entry_id} was already due for re-checking; nothing changed."
        return f"Entry {entry_id} is due for re-checking now (revision {result.revision.number})."

    return _recheck(request, actor, slug, entry_id, "reverify", write, done, values)
