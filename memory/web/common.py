"""Helpers the memory app's browser pages share (the Memory home, its maintenance pages, the
entry browser, the search playground, and the replay page of ``evaluation``): who may read a
Memory's pages, and how an entry is labelled on them."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from lib.auth import actor_from_request
from lib.errors import NotFound

from ..actors import Actor
from ..models import Memory
from ..permissions import may_see_trace
from ..selectors import get_memory

#: Characters of an entry's body shown as its label.
LABEL_CHARS = 120

HEALTH_DENIED = "Only reviewers, auditors and staff may read a Memory's health."


def page_reader(
    request: HttpRequest, slug: str, *, denied: str = HEALTH_DENIED
) -> tuple[Actor, Memory]:
    """The signed-in actor and the Memory ``slug`` for a page only reviewers, auditors and staff
    may read: 403 (with ``denied``) for anyone else, 404 for a Memory unknown or out of scope."""
    actor = actor_from_request(request)
    if not may_see_trace(actor):
        raise PermissionDenied(denied)
    try:
        return actor, get_memory(actor, slug)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


def entry_label(body: str) -> str:
    """The first :data:`LABEL_CHARS` characters of a body (an ellipsis when there is more)."""
    return body[:LABEL_CHARS] + ("…" if len(body) > LABEL_CHARS else "")
