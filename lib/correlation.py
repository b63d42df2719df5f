"""A correlation id shared by every record one request or job writes.

Correlation ids are made by the server, never taken from the caller: an agent sending
``X-Request-ID`` must not be able to make its audit events look part of another request. The
middleware makes one per request and returns it as ``X-Request-ID``; a sane client-supplied
``X-Request-ID`` is only echoed back, untrusted and unstored, as ``X-Client-Request-ID`` so a client
can match its own logs. Actions read :func:`current_correlation_id`; Celery tasks open their own
scope.
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
        with correlation_scope() as cid:
            response = self.get_response(request)
            response["X-Request-ID"] = cid
            if _VALID.match(incoming):
                response["X-Client-Request-ID"] = incoming
            return response
