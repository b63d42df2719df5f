"""A correlation id shared by every record one request or job writes.

The middleware takes ``X-Request-ID`` when the caller sends a sane one, otherwise makes one, and
echoes it back. Actions read :func:`current_correlation_id`; Celery tasks open their own scope.
"""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.http import HttpRequest, HttpResponse

_correlation: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "correlation_id", default=None
)
_VALID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def new_correlation_id() -> str:
    return uuid.uuid4().hex


def current_correlation_id() -> str:
    """The id of the request or job in progress; a fresh one outside any scope."""
    value = _correlation.get()
    if value is None:
        value = new_correlation_id()
        _correlation.set(value)
    return value


@contextmanager
def correlation_scope(value: str | None = None) -> Iterator[str]:
    token = _correlation.set(value or new_correlation_id())
    try:
        yield _correlation.get() or ""
    finally:
        _correlation.reset(token)


class CorrelationIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        with correlation_scope(incoming if _VALID.match(incoming) else None) as cid:
            response = self.get_response(request)
            response["X-Request-ID"] = cid
            return response
