"""Request guards that run before any view, for the API and the pages alike.

:class:`RefuseNulMiddleware` refuses a NUL character in the path (404 ``not_found``) or in the
query string (400 ``invalid``): PostgreSQL refuses NUL in every text value, so without this guard a
lookup such as ``/entries/e_%00`` fails inside the database driver with a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound

from .errors import json_error


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(("/api/", "/mcp"))


class RefuseNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path_info:
            message = "No such path: it contains a NUL character."
            if _is_api(request):
                return json_error("not_found", message, 404)
            return HttpResponseNotFound(message, content_type="text/plain")
        query = request.META.get("QUERY_STRING", "")
        if query and b"\x00" in unquote_to_bytes(query.replace("+", " ")):
            message = "The query string contains a NUL character."
            if _is_api(request):
                return json_error("invalid", message, 400)
            return HttpResponseBadRequest(message, content_type="text/plain")
        return self.get_response(request)
