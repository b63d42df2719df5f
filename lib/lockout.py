"""Browser login lockout (django-axes): 10 failures in 15 minutes per user and address.

:class:`LoginLockoutBackend` is axes' standalone backend, first in ``AUTHENTICATION_BACKENDS``:
it refuses a locked-out user/address pair before any password is checked, and
:func:`lockout_response` answers it: the lockout page, which says in words how long to wait
(axes' own template context has the cool-off as an ISO 8601 duration, ``PT15M``), with a
``Retry-After`` header. A call to
``authenticate()`` without a request (the test client's ``login()``, a script) is no web login,
has no address to count against, and passes straight to the next backend.
"""

from __future__ import annotations

import math
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class LoginLockoutBackend(AxesStandaloneBackend):
    def authenticate(
        self,
        request: Any,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def in_words(seconds: int) -> str:
    """``900`` → ``15 minutes``; whole hours in hours, anything shorter than a minute as one."""
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the 429 lockout page, the wait in words and in ``Retry-After``."""
    cool_off = get_cool_off(request)
    seconds = int(cool_off.total_seconds()) if cool_off else 0
    response = render(
        request,
        "registration/locked_out.html",
        {"wait": in_words(seconds) if seconds else ""},
        status=429,
    )
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
