"""The password reset pages: the product's own templates, a throttle per client address and per
submitted email address (each request may mail someone), and never a word on whether an account
has an address."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.test import Client

RESET = "/accounts/password_reset/"
TEMPLATES = Path(django_settings.BASE_DIR) / "templates"
CSRF_TOKEN = re.compile(r"\b[A-Za-z0-9]{64}\b")


@pytest.fixture
def rates(settings):
    cache.clear()
    settings.STEWARD_THROTTLE_RATES = {
        **settings.STEWARD_THROTTLE_RATES,
        "password_reset": "5/hour",
    }
    yield
    cache.clear()


@pytest.fixture
def lena(db) -> User:
    return User.objects.create_user("lena", email="lena@example.com", password="pw-lena-123")


def ask(email: str, address: str = "198.51.100.1"):
    return Client(REMOTE_ADDR=address).post(RESET, {"email": email})


def product_templates(response) -> list[str]:
    """The templates a page was rendered with; each must be the product's (not the admin's)."""
    origins = [t.origin.name for t in response.templates if t.origin and t.origin.name]
    assert origins, "no template rendered"
    for origin in origins:
        assert Path(origin).is_relative_to(TEMPLATES), origin
    return [t.name for t in response.templates]


def test_the_production_rate_is_5_an_hour():
    from config import settings as production

    assert production.STEWARD_THROTTLE_RATES["password_reset"] == "5/hour" or (
        __import__("os").environ.get("THROTTLE_PASSWORD_RESET_RATE")
    )


def test_the_login_page_links_to_the_reset_form_once(db):
    body = Client().get("/accounts/login/").content.decode()
    assert body.count('href="/accounts/password_reset/"') == 1
    assert "Forgot your password?" in body


def test_every_reset_page_and_the_mail_are_the_products_own(lena, rates):
    r = Client().get(RESET)
    assert r.status_code == 200
    names = product_templates(r)
    assert names[:2] == ["registration/password_reset_form.html", "base.html"], names
    assert "Django administration" not in r.content.decode()

    r = ask("lena@example.com")
    assert r.status_code == 302 and r["Location"] == "/accounts/password_reset/done/"
    r = Client().get(r["Location"])
    assert "registration/password_reset_done.html" in product_templates(r)
    assert "Check your mail" in r.content.decode()

    (message,) = mail.outbox
    assert message.to == ["lena@example.com"]
    assert message.subject == "Reset your Memory Steward password"
    link = re.search(r"https?://\S+", str(message.body))
    assert link, message.body
    client = Client()
    r = client.get(link.group(0), follow=True)
    assert "registration/password_reset_confirm.html" in product_templates(r)
    assert 'name="new_password1"' in r.content.decode()
    r = client.post(
        r.redirect_chain[-1][0],
        {"new_password1": "a-new-long-password-9", "new_password2": "a-new-long-password-9"},
        follow=True,
    )
    assert "registration/password_reset_complete.html" in product_templates(r)
    lena.refresh_from_db()
    assert lena.check_password("a-new-long-password-9")

    r = Client().get("/accounts/reset/MQ/set-password-x/")
    assert "registration/password_reset_confirm.html" in product_templates(r)
    assert "This link does not work" in r.content.decode()


def test_the_mail_link_is_on_the_public_address_when_it_is_set(lena, rates, settings):
    settings.STEWARD_PUBLIC_URL = "https://steward.example.com"
    ask("lena@example.com")
    (message,) = mail.outbox
    assert "https://steward.example.com/accounts/reset/" in message.body, message.body


def test_password_change_pages_are_the_products_own(lena):
    client = Client()
    client.force_login(lena)
    r = client.get("/accounts/password_change/")
    assert r.status_code == 200
    assert "registration/password_change_form.html" in product_templates(r)


def test_a_known_and_an_unknown_address_get_the_same_answer(lena, rates):
    known, unknown = ask("lena@example.com"), ask("nobody@example.com")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known.content == unknown.content
    assert [m.to for m in mail.outbox] == [["lena@example.com"]]


def test_a_client_address_is_throttled_after_5_requests_an_hour(lena, rates):
    for i in range(5):
        assert ask(f"someone{i}@example.com").status_code == 302
    r = ask("lena@example.com")
    assert r.status_code == 429
    body = r.content.decode()
    assert "Too many password reset requests" in body and "Try again in" in body
    assert int(r["Retry-After"]) > 0
    assert "registration/password_reset_form.html" in product_templates(r)
    assert mail.outbox == []  # refused before any mail
    # Another client address still has its budget.
    assert ask("lena@example.com", address="198.51.100.2").status_code == 302
    assert len(mail.outbox) == 1


def test_an_email_address_is_throttled_whatever_client_asks(lena, rates):
    for i in range(5):
        email = "Lena@Example.com" if i % 2 else "lena@example.com "
        assert ask(email, address=f"203.0.113.{i}").status_code == 302
    assert len(mail.outbox) == 5
    r = ask("lena@example.com", address="203.0.113.99")
    assert r.status_code == 429 and "Too many password reset requests" in r.content.decode()
    assert len(mail.outbox) == 5
    # Another email address from that fresh client address still goes through.
    assert ask("other@example.com", address="203.0.113.99").status_code == 302


def test_the_throttle_tells_nothing_about_whether_an_account_has_the_address(lena, rates):
    answers = {}
    for email in ("lena@example.com", "nobody@example.com"):
        for i in range(5):
            ask(email, address=f"192.0.2.{i}")
        r = ask(email, address="192.0.2.200")
        page = r.content.decode().replace(email, "EMAIL")
        answers[email] = (r.status_code, CSRF_TOKEN.sub("TOKEN", page))
    assert answers["lena@example.com"] == answers["nobody@example.com"]
    assert answers["lena@example.com"][0] == 429


def test_the_mail_is_handed_to_a_task_not_sent_in_the_request(lena, rates):
    """With a broker a worker talks to the mail server, so the answer does not wait on it (nor
    take longer for an address that has an account); eager here, so the task's run is seen."""
    from celery.signals import task_prerun

    ran: list[tuple[str, tuple]] = []

    def record(sender=None, args=(), **_):
        ran.append((sender.name, tuple(args)))

    task_prerun.connect(record)
    try:
        assert ask("lena@example.com").status_code == 302
        assert ask("nobody@example.com").status_code == 302
    finally:
        task_prerun.disconnect(record)
    assert [name for name, _ in ran] == ["password_reset.send_mail"]
    subject, body, recipient = ran[0][1]
    assert recipient == "lena@example.com"
    assert [(m.subject, m.body, m.to) for m in mail.outbox] == [(subject, body, [recipient])]
    assert "/accounts/reset/" in body


def test_a_worker_knows_the_mail_task():
    """A worker imports the apps' task modules and ``CELERY_IMPORTS``, never the URLconf that
    imports the reset view, so the task must be found without it."""
    import subprocess
    import sys

    probe = (
        "import django; django.setup(); from config.celery import app; "
        "app.loader.import_default_modules(); print('password_reset.send_mail' in app.tasks)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=django_settings.BASE_DIR,
        env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
    )
    assert out.stdout.strip().splitlines()[-1] == "True", out.stderr


class RefusingMailServer:
    """A mail backend whose server refuses the connection (as SMTP does when it is down)."""

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise ConnectionRefusedError("mail server down")


def test_a_mail_server_that_fails_answers_as_for_an_address_without_an_account(
    lena, rates, settings
):
    """Without a broker the task runs in the request: a mail server that is down must not turn
    the answer for an address that has an account into an error page (which would tell it has
    one), nor hold the request through the task's retries."""
    settings.EMAIL_BACKEND = f"{__name__}.RefusingMailServer"
    attempts: list[str] = []
    original = RefusingMailServer.send_messages

    def counted(self, messages):
        attempts.append("try")
        return original(self, messages)

    RefusingMailServer.send_messages = counted  # type: ignore[method-assign]
    try:
        known = ask("lena@example.com")
        unknown = ask("nobody@example.com")
    finally:
        RefusingMailServer.send_messages = original  # type: ignore[method-assign]
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known.status_code == 302
    assert len(attempts) == 1


def test_a_broker_that_is_down_answers_as_for_an_address_without_an_account(
    lena, rates, monkeypatch
):
    from kombu.exceptions import OperationalError

    from lib import password_reset

    def refuse(*args, **kwargs):
        raise OperationalError("broker down")

    monkeypatch.setattr(password_reset.send_reset_mail, "delay", refuse)
    known, unknown = ask("lena@example.com"), ask("nobody@example.com")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known.status_code == 302
