"""Site-wide views: the home redirect and JSON error pages for the API."""

from __future__ import annotations

import sys

from csp.decorators import csp_update
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found as html_page_not_found
from django.views.defaults import server_error as html_server_error
from drf_spectacular.views import SpectacularSwaggerSplitView

from . import unavailable
from .errors import json_error, service_unavailable_json
from .unavailable import database_unavailable


@csrf_exempt  # any method on an unknown API path is a JSON 404, never Django's CSRF page
def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return json_error("not_found", f"No API endpoint at /api/{rest}.", 404)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404 for a path no route matches: JSON under /api/ (even where the catch-all route cannot
    match, e.g. a path with a newline), Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error("not_found", "No API endpoint at this path.", 404)
    return html_page_not_found(request, exception)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the product's 403 page saying what happened and what to do, marked
    ``X-Steward-Refusal: csrf`` so an htmx form (static/js/htmx-errors.js) can offer "Log in
    again" and a retry that keeps what was typed instead of a bare refusal."""
    response = render(
        request,
        "403.html",
        {
            "exception": "This form's security token is out of date: the session ended or you "
            "logged in again in another tab. Nothing was saved. Go back, reload the page and "
            "try again."
        },
        status=403,
    )
    response["X-Steward-Refusal"] = "csrf"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``. A database that cannot be reached is not a server fault the client can
    do nothing about: 503 with ``Retry-After`` (the envelope under /api/ and /mcp, a page that
    says to wait elsewhere; rendered without the request, so nothing reads the database)."""
    if database_unavailable(sys.exc_info()[1]):
        if request.path.startswith(("/api/", "/mcp")):
            return service_unavailable_json()
        response = HttpResponse(
            loader.get_template("503.html").render({"retry_after": unavailable.retry_after()}),
            status=503,
        )
        response["Retry-After"] = str(unavailable.retry_after())
        return response
    if request.path.startswith("/api/"):
        return json_error("server_error", "An unexpected error occurred.", 500)
    return html_server_error(request)


@method_decorator(csp_update({"style-src": ["'unsafe-inline'"]}), name="dispatch")
class ApiDocsView(SpectacularSwaggerSplitView):
    """The Swagger UI, vendored. The split view serves its initialiser as a script file, so
    ``script-src 'self'`` holds; the UI sets inline styles as it renders, so this one page adds
    ``'unsafe-inline'`` to ``style-src`` (styles only: scripts stay our own files)."""
