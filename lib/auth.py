"""The actor behind a request.

A valid API key authenticates as an :class:`lib.identity.Actor` (the key authentication,
``memory.identity.ApiKeyAuthentication``, puts a :class:`KeyUser` on the request); browser
sessions are turned into actors by :func:`actor_from_request` as well, so views only ever deal
with actors.
"""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.request import Request

from .identity import Actor


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
