"""Site-wide views: the home redirect and JSON error pages for the API."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.defaults import server_error as html_server_error

from .errors import json_error


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponseRedirect("/review/" if request.user.is_authenticated else "/accounts/login/")


def api_not_found(request: HttpRequest, rest: str) -> HttpResponse:
    return json_error("not_found", f"No API endpoint at /api/{rest}.", 404)


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return json_error("server_error", "An unexpected error occurred.", 500)
    return html_server_error(request)
