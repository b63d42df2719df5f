"""API throttling (API.md "Throttling"), with DRF's cache-backed rate throttles.

- :class:`KeyRateThrottle`: per API key (or per browser user calling the API), ``key`` rate.
- :class:`AddressRateThrottle`: requests with no key or a bad key, per client address, ``anon``
  rate. A bad key is refused with 401 during authentication, before DRF would check throttles,
  so :class:`ThrottleFirstMixin` runs the throttles right after authentication and also when it
  fails: a client guessing keys meets 429 after the ``anon`` budget.
- :func:`password_reset_wait`: the browser's password reset form, ``password_reset`` rate per
  client address and per submitted email address (its 429 page: ``lib.password_reset``).

Rates come from ``settings.STEWARD_THROTTLE_RATES`` and are read on every request. An API 429 is
rendered by ``lib.errors`` as ``throttled`` in the envelope, with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, cast

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.db import BaseDatabaseCache
from django.db import connections, router, transaction
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

    def allow_request(self, request: Any, view: Any) -> bool:
        """DRF's check, made whole when the counters are in the database (no ``CACHE_URL``):
        reading a key's request times and writing them back run in one transaction holding a
        lock on that key — PostgreSQL an advisory transaction lock, SQLite the write lock its
        ``BEGIN IMMEDIATE`` takes — so requests of one key racing through several processes
        are counted one after the other, not each over the same old count."""
        # ``self.cache`` is Django's proxy of the default cache: look at the backend behind it.
        backend = caches[DEFAULT_CACHE_ALIAS]
        if not isinstance(backend, BaseDatabaseCache) or self.get_rate() is None:
            return bool(super().allow_request(request, view))
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        alias = router.db_for_write(backend.cache_model_class)
        with transaction.atomic(using=alias):
            connection = connections[alias]
            if connection.vendor == "postgresql":
                lock = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock])
            return bool(super().allow_request(request, view))

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


class PasswordResetThrottle(_SettingsRateThrottle):
    """The ``password_reset`` rate for one bucket of password reset requests: a client address
    (:meth:`for_address`) or a submitted email address (:meth:`for_email`, counted whether or not
    an account has it, so being refused says nothing about the address). The email is stored
    hashed, in lower case: the cache never holds the addresses people typed."""

    def __init__(self, bucket: str, ident: str) -> None:
        self.scope = f"password_reset_{bucket}"
        self.ident = ident
        super().__init__()

    def get_rate(self) -> str | None:
        return settings.STEWARD_THROTTLE_RATES.get("password_reset")

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.ident}

    @classmethod
    def for_address(cls, request: HttpRequest) -> PasswordResetThrottle:
        return cls("address", client_address(request))

    @classmethod
    def for_email(cls, email: str) -> PasswordResetThrottle:
        return cls("email", hashlib.sha256(email.strip().lower().encode()).hexdigest())


def password_reset_wait(request: HttpRequest, email: str) -> int:
    """Seconds until this password reset request may be made, ``0`` when it may be now (and then
    it is counted, per client address and, when one was given, per email address)."""
    throttles = [PasswordResetThrottle.for_address(request)]
    if email.strip():
        throttles.append(PasswordResetThrottle.for_email(email))
    for throttle in throttles:  # a refused request spends no further budget
        if not throttle.allow_request(Request(request), cast(Any, None)):  # no view: not DRF's
            return max(1, math.ceil(throttle.wait() or 1))
    return 0
