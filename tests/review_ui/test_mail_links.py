"""The links in notification mail: each mail names the page it is about — absolute on
STEWARD_PUBLIC_URL, the site-relative path without it — the setting is checked (a warning when
unset, refused when malformed), and the demo's mail links to the demo server."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.checks import Error, Warning
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from lib.public_url import clean_public_url
from memory.actors import Actor
from review.actions import approve_proposal, reject_proposal, request_changes
from review.checks import public_url, public_url_set
from review.models import EmailMode, Notification
from review.notifications import send_digests, set_email_mode
from tests.conftest import make_key
from tests.review_ui.conftest import consolidate

ROOT = Path(__file__).resolve().parent.parent.parent
PUBLIC = "https://steward.example.com"

# (setting, what a proposal page's link starts with)
LINKS = [(PUBLIC, f"{PUBLIC}/review/proposals/"), ("", "/review/proposals/")]


def person(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def with_email(*usernames: str) -> None:
    for name in usernames:
        User.objects.filter(username=name).update(email=f"{name}@example.com")


@pytest.fixture
def owned_agent(memory):
    """An agent key owned by a user with an address: the submitter decisions are mailed to."""
    User.objects.create_user("owner", email="owner@example.com", password="pw-owner-123")
    return make_key("owned-robot", "agent", owner="owner")


# --- Each mail kind ----------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "link"), LINKS)
def test_a_new_proposal_mail_links_to_the_proposal(
    memory, agent, rita, settings, django_capture_on_commit_callbacks, setting, link
):
    settings.STEWARD_PUBLIC_URL = setting
    with_email("rita")
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        proposal = consolidate(memory, agent.actor)
    (sent,) = mail.outbox
    assert f"Open the proposal: {link}{proposal.pk}/" in sent.body.splitlines()
    if not setting:
        assert "http" not in sent.body


@pytest.mark.parametrize(("setting", "link"), LINKS)
@pytest.mark.parametrize("verdict", ["approved", "rejected", "changes_requested"])
def test_each_decision_mail_links_to_the_proposal(
    memory, owned_agent, rita, settings, django_capture_on_commit_callbacks, setting, link, verdict
):
    settings.STEWARD_PUBLIC_URL = setting
    proposal = consolidate(memory, owned_agent.actor)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        if verdict == "approved":
            approve_proposal(proposal.pk, actor=person("rita"))
        elif verdict == "rejected":
            reject_proposal(proposal.pk, actor=person("rita"), reason="other", comment="Keep both")
        else:
            request_changes(proposal.pk, actor=person("rita"), comment="Keep the time.")
    (sent,) = mail.outbox
    assert sent.to == ["owner@example.com"] and verdict in sent.subject
    assert sent.body.splitlines()[-1] == f"Open the proposal: {link}{proposal.pk}/"


@pytest.mark.parametrize(
    ("setting", "page"), [(PUBLIC, f"{PUBLIC}/notifications/"), ("", "/notifications/")]
)
def test_the_digest_links_each_proposal_and_the_notifications_page(
    memory, agent, rita, settings, django_capture_on_commit_callbacks, setting, page
):
    settings.STEWARD_PUBLIC_URL = setting
    with_email("rita")
    set_email_mode(person("rita"), mode=EmailMode.DAILY)
    with django_capture_on_commit_callbacks(execute=True):
        first = consolidate(memory, agent.actor)
        second = consolidate(memory, agent.actor)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert send_digests.delay().get() == 1
    (digest,) = mail.outbox
    lines = digest.body.splitlines()
    prefix = page.removesuffix("/notifications/")
    for p in (first, second):
        assert f"  Open the proposal: {prefix}/review/proposals/{p.pk}/" in lines
    assert lines[-1] == f"What needs you now: {page}"


def test_the_outbox_makes_the_links_clickable_and_escapes_the_rest(
    memory, agent, rita, settings, django_capture_on_commit_callbacks
):
    settings.STEWARD_OUTBOX = True
    settings.STEWARD_PUBLIC_URL = PUBLIC
    with_email("rita")
    with django_capture_on_commit_callbacks(execute=True):
        proposal = consolidate(memory, agent.actor, rationale="<b>same</b> schedule")
    html = rita.get("/outbox/").content.decode()
    url = f"{PUBLIC}/review/proposals/{proposal.pk}/"
    assert f'Open the proposal: <a href="{url}" rel="nofollow">{url}</a>' in html
    assert "Rationale: &lt;b&gt;same&lt;/b&gt; schedule" in html


# --- The setting and its check ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("", ""),
        ("https://steward.example.com", "https://steward.example.com"),
        (" HTTPS://Steward.Example.COM/ ", "https://steward.example.com"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://[::1]:8000/", "http://[::1]:8000"),
    ],
)
def test_a_public_address_is_a_scheme_and_host(given, kept):
    assert clean_public_url(given) == kept


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("steward.example.com", "must start with https://"),
        ("ftp://steward.example.com", "must start with https://"),
        ("https:steward.example.com", "must start with https://"),
        ("https://", "must name a host"),
        ("https://steward.example.com/review/", "no path, query or fragment"),
        ("https://steward.example.com/?next=/", "no path, query or fragment"),
        ("https://steward.example.com#top", "no path, query or fragment"),
        ("https://admin:pw@steward.example.com", "user name or password"),
        ("https://steward.example.com:99999", "port must be a number"),
        ("https://steward example.com", "spaces or control characters"),
        ("https://steward_example.com", "must name a host"),
    ],
)
def test_a_malformed_public_address_is_refused_with_what_is_wrong(given, problem):
    with pytest.raises(ImproperlyConfigured) as refused:
        clean_public_url(given)
    assert problem in str(refused.value) and "STEWARD_PUBLIC_URL=" in str(refused.value)


def test_the_server_refuses_to_start_with_a_malformed_public_address():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "STEWARD_PUBLIC_URL": "https://steward.example.com/review/",
    }
    out = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    assert (
        "ImproperlyConfigured: STEWARD_PUBLIC_URL='https://steward.example.com/review/' is not"
        in (out.stderr)
    )


def test_the_deploy_check_warns_without_the_setting_and_every_check_errors_on_a_malformed_one(
    settings,
):
    settings.STEWARD_PUBLIC_URL = ""
    (warning,) = public_url_set()
    assert isinstance(warning, Warning) and warning.id == "review.W001"
    assert "site-relative" in warning.msg
    assert public_url() == []
    settings.STEWARD_PUBLIC_URL = PUBLIC
    assert public_url() == public_url_set() == []
    settings.STEWARD_PUBLIC_URL = "https://steward.example.com/app"
    (error,) = public_url()
    assert isinstance(error, Error) and error.id == "review.E001"
    assert "no path" in error.msg


def test_an_unset_public_address_is_a_deployment_warning_only(settings):
    """``manage.py migrate`` or ``check`` on a laptop says nothing; ``check --deploy`` warns."""
    from django.core.checks import run_checks

    settings.STEWARD_PUBLIC_URL = ""
    assert "review.W001" not in {m.id for m in run_checks(include_deployment_checks=False)}
    assert "review.W001" in {m.id for m in run_checks(include_deployment_checks=True)}


# --- The demo ----------------------------------------------------------------------------------


def test_the_demos_mail_links_to_the_demo_server(db, settings):
    settings.STEWARD_PUBLIC_URL = ""
    call_command("load_demo", "--base-url", "http://127.0.0.1:8777/", stdout=StringIO())
    bodies = list(Notification.objects.filter(channel="email").values_list("body", flat=True))
    assert bodies and all(
        "Open the proposal: http://127.0.0.1:8777/review/proposals/" in b for b in bodies
    )
    assert settings.STEWARD_PUBLIC_URL == ""  # only for the loading


def test_the_demo_refuses_a_malformed_base_url(db):
    with pytest.raises(CommandError) as refused:
        call_command("load_demo", "--base-url", "127.0.0.1:8777", stdout=StringIO())
    assert "--base-url='127.0.0.1:8777' is not a public address" in str(refused.value)
