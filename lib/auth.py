"""The actor behind a request.

A valid API key authenticates as an :class:`lib.identity.Actor` (the key authentication,
``memory.identity.ApiKeyAuthentication``, puts a :class:`KeyUser` on the request); browser
sessions are turned into actors by :func:`actor_from_request` as well, so views only ever deal
with actors.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe
from rest_framework import exceptions
from rest_framework.request import Request

from .identity import Actor

ReadPage = Callable[..., HttpResponse]


class KeyUser:
    """What ``request.user`` is for a key: authenticated, carrying the actor."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    is_active = True

    def __init__(self, actor: Actor):
        self.actor = actor
        self.pk = None

    def __str__(self) -> str:
        return self.actor.label


def actor_from_request(request: HttpRequest | Request) -> Actor:
    """The actor behind a request: the key's, or the logged-in user's."""
    user = request.user
    if isinstance(user, KeyUser):
        return user.actor
    if user is not None and user.is_authenticated:
        cached: Actor | None = getattr(request, "_steward_actor", None)
        if cached is None:
            cached = Actor.for_user(user)
            request._steward_actor = cached  # type: ignore[union-attr]
        return cached
    raise exceptions.NotAuthenticated()


def reader_page(allowed: Callable[[Actor], bool], refusal: str) -> Callable[[ReadPage], ReadPage]:
    """A read-only page for the actors ``allowed`` admits: login required, GET and HEAD only,
    403 with ``refusal`` for anyone else; the view is called with the actor after the request,
    and its response varies on ``HX-Request``."""

    def decorate(view: ReadPage) -> ReadPage:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            actor = actor_from_request(request)
            if not allowed(actor):
                raise PermissionDenied(refusal)
            response = view(request, actor, *args, **kwargs)
            patch_vary_headers(response, ("HX-Request",))
            return response

        return login_required(require_safe(wrapper))

    return decorate
