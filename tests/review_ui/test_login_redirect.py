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
    r = Client().get(
        "/notifications/badge/",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="https://evil.example/review/?q=x",
    )
    login = urlsplit(r["HX-Redirect"])
    assert login.path == "/accounts/login/" and not login.netloc
    assert parse_qs(login.query) == {"next": ["/notifications/badge/"]}


def test_a_signed_out_htmx_post_is_a_401_naming_the_login_page_not_a_redirect(reviewer):
    """A whole-page redirect would throw away the comment being typed: the page says in place
    that the session ended and offers to log in (static/js/htmx-errors.js)."""
    r = Client().post(
        "/review/claim/",
        {"comment": "kept"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{PAGE}",
    )
    assert r.status_code == 401, r.content
    assert "HX-Redirect" not in r
    assert r["X-Steward-Refusal"] == "login"
    login = urlsplit(r["X-Steward-Login"])
    assert login.path == "/accounts/login/" and parse_qs(login.query) == {"next": [PAGE]}
    # Without htmx a form post still goes to the login page and back.
    r = Client().post("/review/claim/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_a_stale_csrf_token_gets_the_products_403_marked_for_htmx(reviewer):
    client = Client(enforce_csrf_checks=True)
    client.login(username="rita", password="pw-rita-123")
    r = client.post("/review/claim/", {"csrfmiddlewaretoken": "x" * 32}, HTTP_HX_REQUEST="true")
    assert r.status_code == 403
    assert r["X-Steward-Refusal"] == "csrf"
    assert b"security token is out of date" in r.content and b"Memory Steward" in r.content


def test_a_server_error_page_is_the_products_own(reviewer, settings):
    from django.test import RequestFactory

    from lib.views import server_error

    r = server_error(RequestFactory().get("/review/"))
    assert r.status_code == 500
    html = r.content.decode()
    assert "Something went wrong on our side" in html and "app.css" in html
