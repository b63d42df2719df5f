"""The notification pages: the in-app list of what needs the signed-in person, its nav badge,
the email preference, and — with the outbox on (``STEWARD_OUTBOX``: ``make demo``, or DEBUG) —
the outbox of the mails the product sent.

``/notifications/`` (reviewers, auditors and staff, like the dashboard) lists
``review.notifications.needs``; "Mark all as seen" and the email preference are plain forms
(POST, CSRF) that redirect back, for reviewers and staff only: auditors change nothing, and
nothing in their list is ever "new" or emailed (they are never assigned, never decide or claim,
and review emails go to reviewers and submitters). ``/notifications/badge/`` is the small
fragment the nav loads with htmx (the number of new items; no alerts, so it costs a fixed
handful of queries).
``/outbox/`` answers 404 unless ``settings.STEWARD_OUTBOX``: it lists the last email
notifications with their bodies, so the demo's mail can be read in the browser.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from lib.errors import DomainError
from memory.actors import Actor

from . import notifications, web
from .models import EmailMode, Notification
from .permissions import may_decide

#: Mails the outbox lists (newest first).
OUTBOX_ROWS = 100


def outbox_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """404 unless ``settings.STEWARD_OUTBOX`` (outside the login check on the outbox page, so nobody
    learns it exists)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.STEWARD_OUTBOX:
            raise Http404("The outbox is off (STEWARD_OUTBOX).")
        return view(request, *args, **kwargs)

    return wrapper


@require_safe
@web.readers
def notification_list(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``/notifications/``: what needs you, newest first, new items marked."""
    feed = notifications.needs(actor)
    context = {
        "nav": "notifications",
        "feed": feed,
        "preference": notifications.preference_of(actor),
        "modes": EmailMode.choices,
        "email_address": getattr(request.user, "email", ""),
        "outbox": settings.STEWARD_OUTBOX,
        "can_decide": actor.is_reviewer,
    }
    return render(request, "review/notifications.html", context)


@require_safe
@web.readers
def notification_badge(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``/notifications/badge/``: the nav's count of new items (an htmx fragment)."""
    count = notifications.needs(actor, with_alerts=False).new_count
    return render(request, "review/notifications.html#badge", {"count": count})


@require_POST
@web.deciders
def notification_seen(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``POST /notifications/seen/``: mark every item listed so far as seen."""
    notifications.mark_notifications_seen(actor)
    messages.success(request, "Marked all as seen.")
    return HttpResponseRedirect(reverse("review-notifications"))


@require_POST
@web.deciders
def notification_preferences(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``POST /notifications/preferences/`` (``email`` = immediate | daily | off)."""
    try:
        row = notifications.set_email_mode(actor, mode=request.POST.get("email", ""))
    except DomainError as exc:
        return web.refuse(request, exc.message, status=exc.http_status)
    messages.success(request, f"Email: {row.get_email_display().lower()}.")
    return HttpResponseRedirect(reverse("review-notifications"))


@require_safe
@outbox_only
@web.readers
def outbox(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``/outbox/`` (``STEWARD_OUTBOX`` only, else 404): the mails sent, newest first."""
    mails = list(Notification.objects.filter(channel="email").order_by("-id")[:OUTBOX_ROWS])
    waiting = Notification.objects.filter(
        channel=notifications.DIGEST, sent_at__isnull=True
    ).count()
    context = {
        "nav": "notifications",
        "mails": mails,
        "waiting": waiting,
        # Sending is a reviewer's action (auditors change nothing): no button they cannot use.
        "may_send": may_decide(actor),
    }
    return render(request, "review/outbox.html", context)


@require_POST
@web.deciders
@outbox_only
def outbox_send_digests(request: HttpRequest, actor: Actor) -> HttpResponse:
    """``POST /outbox/digests/`` (reviewers; 404 unless the outbox is on): run the daily digest
    now, for the demo. Auditors get 403 whether or not it is: they change nothing."""
    from .notifications import send_digests

    result = send_digests.delay()
    sent = result.get() if settings.CELERY_TASK_ALWAYS_EAGER else None
    messages.success(
        request, f"Queued {sent} digest(s)." if sent is not None else "Digest task queued."
    )
    return HttpResponseRedirect(reverse("review-outbox"))
