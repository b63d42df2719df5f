"""A signed-out htmx request (an expired session on a filtered inbox) sends the browser to log in
and, after logging in, back to the whole page it was on: ``next`` carries the page's query
string encoded, so its filters after the first ``&`` are not lost to the login URL's own query."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from django.test import Client

PAGE = "/review/?q=deploy&status=pending&kind=cleanup"


def test_an_htmx_login_redirect_keeps_every_filter_of_the_page(reviewer):
    client = Client()
    r = client.get(
        "/notifications/badge/",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{PAGE}",
    )
    assert r.status_code == 200
    login = urlsplit(r["HX-Redirect"])
    assert login.path == "/accounts/login/"
    assert parse_qs(login.query) == {"next": [PAGE]}, r["HX-Redirect"]
    r = client.post(
        r["HX-Redirect"],
        {"username": "rita", "password": "pw-rita-123", "next": parse_qs(login.query)["next"][0]},
    )
    assert r.status_code == 302 and r["Location"] == PAGE, r.get("Location")


def test_an_htmx_login_redirect_never_names_another_site(reviewer):
    r = Client().post(
        "/review/claim/",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="https://evil.example/review/?q=x",
    )
    login = urlsplit(r["HX-Redirect"])
    assert login.path == "/accounts/login/" and not login.netloc
    assert parse_qs(login.query) == {"next": ["/review/claim/"]}
