"""``Authorization: Bearer <key>`` authentication against hashed API keys.

Keys are djangorestframework-api-key keys (``prefix.secret``; only a hash is stored). A valid
key authenticates as an :class:`memory.actors.Actor`; browser sessions are turned into actors
by :func:`actor_from_request` as well, so views only ever deal with actors.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        from memory.actors import Actor
        from memory.models import ApiKey

        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        # The scheme is case-insensitive (RFC 9110 §11.1): "bearer <key>" is the same request.
        if not parts or parts[0].lower() != self.keyword.lower():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Malformed Authorization header.")
        prefix, _, _ = parts[1].partition(".")
        key = ApiKey.objects.get_usable_keys().select_related("owner").filter(prefix=prefix).first()
        if key is None or not key.is_valid(parts[1]):
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        memory_ids = frozenset(key.memories.values_list("pk", flat=True))
        actor = Actor.for_key(key, memory_ids or None)
        return (KeyUser(actor), key)

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class KeyUser:
    """What ``request.user`` is for a key: authenticated, carrying the actor."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    is_active = True

    def __init__(self, actor: Any):
        self.actor = actor
        self.pk = None

    def __str__(self) -> str:
        return self.actor.label


def actor_from_request(request: Any) -> Any:
    """The actor behind a request: the key's, or the logged-in user's."""
    from memory.actors import Actor

    user = request.user
    if isinstance(user, KeyUser):
        return user.actor
    if user is not None and user.is_authenticated:
        cached = getattr(request, "_steward_actor", None)
        if cached is None:
            cached = Actor.for_user(user)
            request._steward_actor = cached
        return cached
    raise exceptions.NotAuthenticated()


class ApiKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "lib.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An API key from issue_api_key."}
