"""Authenticating a request by its API key (``Authorization: Bearer <key>``): the persisted
side of identity.

Keys are djangorestframework-api-key keys (``prefix.secret``; only a hash is stored), issued by
``memory.keys``. A valid key authenticates as an :class:`lib.identity.Actor` scoped to the key's
Memories, carried by a :class:`lib.auth.KeyUser`.

This module stays light (the key model and the ground): Django REST framework imports it as soon
as its views module loads, which the apps' own modules set off.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from lib.auth import KeyUser
from lib.identity import Actor

from .models import ApiKey


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[KeyUser, ApiKey] | None:
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


class ApiKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "memory.identity.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An API key from issue_api_key."}
