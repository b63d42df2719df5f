"""What every review page shares: who may look or act, the refusal and login answers, htmx
helpers, safe "next" URLs and the form error / value views.

Pages and fragment endpoints use the same guards (:data:`readers`, :data:`deciders`, built on
``review.permissions``), so a fragment never shows more than its page would.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme

from lib.auth import actor_from_request
from memory.actors import Actor

from .permissions import may_decide, may_view

View = Callable[..., HttpResponse]


# --- Access ------------------------------------------------------------------------------------


def is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def target(request: HttpRequest) -> str:
    htmx = getattr(request, "htmx", None)
    return str(htmx.target or "") if htmx else ""


def login(request: HttpRequest) -> HttpResponse:
    """To the login page and back; for htmx ``lib.login_redirect`` makes it an ``HX-Redirect``."""
    return redirect_to_login(request.get_full_path())


def refuse(request: HttpRequest, message: str, status: int = 403) -> HttpResponse:
    return render(
        request,
        "review/refused.html",
        {"nav": "review", "message": message, "not_found": status == 404},
        status=status,
    )


def guard(allowed: Callable[[Actor], bool], message: str) -> Callable[[View], View]:
    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return login(request)
            actor = actor_from_request(request)
            if not allowed(actor):
                return refuse(request, message)
            response = view(request, actor, *args, **kwargs)
            patch_vary_headers(response, ("HX-Request", "HX-Target"))
            return response

        return wrapper

    return decorator


#: Pages and fragments reviewers, auditors and staff may read.
readers = guard(may_view, "Only reviewers, auditors and staff may open the review inbox.")
#: Forms only reviewers and staff may submit (auditors read, never change).
deciders = guard(may_decide, "Only reviewers may decide proposals or undo operations.")


def next_url(request: HttpRequest, default: str) -> str:
    candidate = request.POST.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default


def proposal_url(pk: int) -> str:
    return reverse("review-proposal", args=[pk])


def operation_url(pk: int) -> str:
    return reverse("review-operation", args=[pk])


def errors(form: Any) -> dict[str, list[str]]:
    if form is None or not form.is_bound:
        return {}
    return {("form" if k == "__all__" else k): [str(m) for m in v] for k, v in form.errors.items()}


def values(form: Any) -> dict[str, Any]:
    if form is None or not form.is_bound:
        return {}
    data = form.data
    return {
        "comment": data.get("comment", ""),
        "reason": data.get("reason", ""),
        "acknowledge": data.getlist("acknowledge") if hasattr(data, "getlist") else [],
    }
