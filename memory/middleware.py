"""One request is one scope of the admission scan.

:class:`StoredTextScopeMiddleware` opens :func:`memory.admission.request_scope` around each
request, so a secret split across two fields of one request is found where the fields meet.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .admission import request_scope


class StoredTextScopeMiddleware:
    """One request is one scope of the admission scan (:func:`memory.admission.request_scope`):
    a secret split across two of its fields is found where the fields meet."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_scope():
            return self.get_response(request)
