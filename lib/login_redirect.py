"""Login redirects for htmx requests, for every page at once.

A page that needs a signed-in user answers a signed-out visitor with a redirect to
``settings.LOGIN_URL`` (``login_required``, ``redirect_to_login``). The browser follows a redirect
to an htmx request inside the request itself, so htmx would swap the whole login page into the
fragment it asked for. :class:`HtmxLoginRedirectMiddleware` turns that answer, for an htmx request,
into an empty 200 with ``HX-Redirect``: htmx then loads the login page as a whole page, with the
page the visitor was on (``HX-Current-URL``, only when it is on this site; else the requested
path) as ``next``, encoded, so the page's whole query survives the login.

An htmx request that changes something (any method but GET and HEAD: an Approve, a comment)
gets a 401 instead, naming the login page in ``X-Steward-Login``: a whole-page redirect would
throw away what the reviewer typed, so static/js/htmx-errors.js says in place that the session
ended and offers "Log in again" (a new tab) and a retry that keeps the form as it is.

A redirect to the login page without ``next`` (the landing page after logging out) is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect


def is_login_redirect(response: HttpResponse) -> bool:
    """Whether ``response`` sends the visitor to log in and come back (a ``next`` in the URL)."""
    if response.status_code not in (301, 302, 303, 307, 308) or not response.has_header("Location"):
        return False
    login = urlsplit(resolve_url(settings.LOGIN_URL))
    target = urlsplit(response["Location"])
    if (target.scheme, target.netloc) != (login.scheme, login.netloc):
        return False
    return target.path == login.path and REDIRECT_FIELD_NAME in parse_qs(target.query)


def current_page(request: HttpRequest) -> str:
    """The page an htmx request was made from, when it is on this site; else the request's path."""
    htmx = getattr(request, "htmx", None)
    page = htmx.current_url_abs_path if htmx else None
    return page or request.get_full_path()


class HtmxLoginRedirectMiddleware:
    """After ``django_htmx``'s middleware: a redirect to log in becomes ``HX-Redirect`` for htmx."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not is_login_redirect(response):
            return response
        if getattr(request, "htmx", False):
            login = redirect_to_login(current_page(request)).url
            if request.method in ("GET", "HEAD"):
                response = HttpResponseClientRedirect(login)
            else:
                response = HttpResponse("Your session has ended: log in again.", status=401)
                response["X-Steward-Login"] = login
                response["X-Steward-Refusal"] = "login"
        # The same URL answers a plain request and an htmx one differently.
        patch_vary_headers(response, ("HX-Request",))
        return response
