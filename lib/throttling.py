"""API throttling (API.md "Throttling"), with DRF's cache-backed rate throttles.

- :class:`KeyRateThrottle`: per API key (or per browser user calling the API), ``key`` rate.
- :class:`AddressRateThrottle`: requests with no key or a bad key, per client address, ``anon``
  rate. A bad key is refused with 401 during authentication, before DRF would check throttles,
  so :class:`ThrottleFirstMixin` runs the throttles right after authentication and also when it
  fails: a client guessing keys meets 429 after the ``anon`` budget.

Rates come from ``settings.STEWARD_THROTTLE_RATES`` and are read on every request. The 429 is
rendered by ``lib.errors`` as ``throttled`` in the envelope, with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


def client_address(request: HttpRequest) -> str:
    """The client's address: the socket's, or with ``STEWARD_PROXY_COUNT`` trusted proxies the
    address the outermost trusted proxy saw (counted from the right of ``X-Forwarded-For``)."""
    remote = str(request.META.get("REMOTE_ADDR") or "")
    proxies = int(getattr(settings, "STEWARD_PROXY_COUNT", 0))
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [h.strip() for h in forwarded.split(",") if h.strip()]
    return hops[-min(proxies, len(hops))] if hops else remote


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return settings.STEWARD_THROTTLE_RATES.get(str(self.scope))

    def get_ident(self, request: Request) -> str:
        return client_address(request)


class KeyRateThrottle(_SettingsRateThrottle):
    scope = "key"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        from .auth import KeyUser

        user = request.user
        if isinstance(user, KeyUser):
            ident = f"key:{getattr(request.auth, 'prefix', user.actor.label)}"
        elif user is not None and user.is_authenticated:
            ident = f"user:{user.pk}"
        else:
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AddressRateThrottle(_SettingsRateThrottle):
    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        user = request.user
        if user is not None and user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottleFirstMixin:
    """Throttle before the permission check, and count failed authentications too."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        view: Any = self
        view.format_kwarg = view.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = view.perform_content_negotiation(
            request
        )
        request.version, request.versioning_scheme = view.determine_version(
            request, *args, **kwargs
        )
        try:
            view.perform_authentication(request)
        except exceptions.AuthenticationFailed:
            view.check_throttles(request)  # a bad key spends its address's budget
            raise
        view.check_throttles(request)
        view.check_permissions(request)
