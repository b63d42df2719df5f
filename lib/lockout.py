"""Browser login lockout (django-axes): 10 failures in 15 minutes per user and address.

:class:`LoginLockoutBackend` is axes' standalone backend, first in ``AUTHENTICATION_BACKENDS``:
it refuses a locked-out user/address pair before any password is checked. A call to
``authenticate()`` without a request (the test client's ``login()``, a script) is no web login,
has no address to count against, and passes straight to the next backend.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend


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
