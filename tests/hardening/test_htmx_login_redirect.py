"""Every page that needs a signed-in user answers a signed-out htmx request (an expired session on a
fragment: a filter, Load more) with ``HX-Redirect`` to the login page — a form post with a 401
naming it in ``X-Steward-Login``, so the page keeps what was typed — and the page the
visitor was on as ``next`` — never a plain redirect, which htmx would follow and swap the whole login
page into the fragment. Walks every browser route of the URL conf."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from lib.login_redirect import is_login_redirect

PAGE = "/audit/?actor=rita&kind=approve"
#: Routes anybody may open (logging in, out, resetting a forgotten password, health checks).
PUBLIC = {
    "healthz",
    "readyz",
    "login",
    "logout",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}
#: Pages of each app the walk must reach (so a broken walk cannot pass by finding nothing).
EXPECTED = {
    "home",
    "audit-log",
    "audit-entry-timeline",
    "audit-revision",
    "memory-home",
    "memory-entries",
    "memory-maintenance",
    "memory-search-playground",
    "memory-replay",
    "review-inbox",
    "review-proposal-approve",
    "review-notifications-badge",
    "review-outbox",
    "password_change",
}
#: A value for each route parameter: by name, else by converter (any value that matches does:
#: the login check comes before any lookup).
VALUES = {"slug": "acme", "entry_id": "e_0123456789abcdef", "uidb64": "MQ", "token": "a-b"}
BY_CONVERTER = {"int": "1", "uuid": "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, str | None]]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p.name


def _value(match: re.Match[str]) -> str:
    converter, name = match.group(1) or "str", match.group(2)
    return VALUES.get(name) or BY_CONVERTER.get(converter, "x1")


def browser_routes() -> list[tuple[str, str | None]]:
    found = []
    for route, name in _routes(get_resolver().url_patterns):
        if route.startswith(("api/", "admin/")) or route == "mcp":
            continue  # keys and JSON errors, or the admin's own login
        path = "/" + re.sub(r"<(?:(\w+):)?(\w+)>", _value, route)
        found.append((path, name))
    return found


def _request(client: Client, path: str, **headers: Any) -> Any:
    r = client.get(path, **headers)
    return client.post(path, **headers) if r.status_code == 405 else r


@pytest.fixture
def outbox_on(settings):
    settings.STEWARD_OUTBOX = True


def test_every_login_required_page_answers_a_signed_out_htmx_request_with_hx_redirect(
    db, outbox_on
):
    walked = set()
    for path, name in browser_routes():
        plain = _request(Client(), path)
        if name in PUBLIC:
            assert not is_login_redirect(plain), path
            continue
        assert is_login_redirect(plain), f"{path} ({name}) opens without a login"
        walked.add(name)

        r = _request(
            Client(), path, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=f"http://testserver{PAGE}"
        )
        assert "Location" not in r, (path, r.status_code)
        if r.status_code == 401:
            # A form post: said in place, keeping what was typed (static/js/htmx-errors.js).
            assert r.wsgi_request.method == "POST", path
            login = r["X-Steward-Login"]
        else:
            assert r.status_code == 200, (path, r.status_code)
            login = r["HX-Redirect"]
            assert r.content == b"", path  # no login page to swap into the fragment
        target = urlsplit(login)
        assert target.path == "/accounts/login/" and not target.netloc, (path, login)
        assert parse_qs(target.query) == {"next": [PAGE]}, (path, login)
        assert "HX-Request" in r.get("Vary", ""), path
    assert walked >= EXPECTED, EXPECTED - walked


def test_a_page_on_another_site_is_never_the_next_page(db):
    r = Client().get(
        "/memories/acme/entries/?q=x",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="https://evil.example/memories/acme/entries/",
    )
    target = urlsplit(r["HX-Redirect"])
    assert target.path == "/accounts/login/" and not target.netloc
    assert parse_qs(target.query) == {"next": ["/memories/acme/entries/?q=x"]}


def test_a_plain_request_still_gets_the_redirect_and_logging_out_is_left_alone(db, reviewer):
    r = Client().get("/audit/?actor=rita")
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/?next=/audit/%3Factor%3Drita"
    assert "HX-Redirect" not in r

    client = Client()
    client.login(username="rita", password="pw-rita-123")
    r = client.post("/accounts/logout/", HTTP_HX_REQUEST="true")
    assert r.status_code == 302 and r["Location"] == "/accounts/login/"
