"""The login form after a wrong password: it says so, keeps the username that was typed (escaped)
and the page to return to, never echoes the password, and puts the cursor in the password field."""

from __future__ import annotations

import re

from django.test import Client


def field(html: str, name: str) -> str:
    match = re.search(rf'<input [^>]*name="{name}"[^>]*>', html)
    assert match, name
    return match.group(0)


def test_a_fresh_form_is_empty_with_the_cursor_on_the_username(reviewer):
    html = Client().get("/accounts/login/?next=/review/").content.decode()
    assert "value=" not in field(html, "username") and "autofocus" in field(html, "username")
    assert "autofocus" not in field(html, "password")


def test_a_wrong_password_keeps_the_username_and_the_next_page(reviewer):
    r = Client().post(
        "/accounts/login/",
        {"username": "rita", "password": "not-her-password", "next": "/review/proposals/1/"},
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert "Your username and password didn't match." in html
    assert 'value="rita"' in field(html, "username")
    assert "autofocus" not in field(html, "username")
    assert "value=" not in field(html, "password") and "autofocus" in field(html, "password")
    assert "not-her-password" not in html
    assert 'value="/review/proposals/1/"' in field(html, "next")


def test_a_typed_username_is_escaped(reviewer):
    html = (
        Client()
        .post("/accounts/login/", {"username": '"><script>x()</script>', "password": "x"})
        .content.decode()
    )
    assert "<script>x()" not in html
    assert 'value="&quot;&gt;&lt;script&gt;x()&lt;/script&gt;"' in field(html, "username")
