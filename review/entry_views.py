"""Browser forms of one entry's governance, from the entry page (the entry timeline): Quarantine
and Release, Pin and Unpin, Forget and Reactivate — each with a required reason.

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

from audit.links import entry_url
from audit.views import render_timeline
from lib.errors import DomainError, Forbidden, NotFound
from memory import actions as memory_actions
from memory.actions import WriteResult
from memory.actors import Actor
from memory.models import Memory
from memory.selectors import get_memory

from . import web

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
    return HttpResponseRedirect(entry_url(slug, entry_id))


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
