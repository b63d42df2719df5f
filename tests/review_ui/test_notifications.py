"""Notifications for people: the in-app list of what needs the signed-in user with its nav badge
and seen marker, the email preference (immediate, daily digest, off) with the digest task in the
beat schedule, the demo users' addresses, and the outbox page that exists only with STEWARD_OUTBOX on."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from memory.actors import Actor
from proposals.actions import add_comment, amend_proposal, assign_proposal
from review.actions import reject_proposal, request_changes
from review.claims import claim_next_proposal
from review.models import EmailMode, Notification, NotificationPreference, ReviewClaim
from review.notifications import mark_notifications_seen, needs, send_digests, set_email_mode
from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db


def person(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def with_email(*usernames: str) -> None:
    for name in usernames:
        User.objects.filter(username=name).update(email=f"{name}@example.com")


def badge(client: Client) -> str:
    r = client.get("/notifications/badge/", headers={"HX-Request": "true"})
    assert r.status_code == 200, r.content[:300]
    return r.content.decode()


def listing(client: Client) -> str:
    r = client.get("/notifications/")
    assert r.status_code == 200, r.content[:300]
    return r.content.decode()


# --- The in-app list ---------------------------------------------------------------------------


def test_an_assigned_proposal_shows_with_a_count_until_marked_seen(memory, agent, rita, ravi):
    proposal = consolidate(memory, agent.actor)
    assert badge(ravi) == ""
    assign_proposal(proposal, actor=person("rita"), reviewer="ravi")
    assert 'aria-label="1 new"' in badge(ravi)
    html = listing(ravi)
    assert f'href="/review/proposals/{proposal.pk}/"' in html
    assert "Assigned to you by rita" in html and "1 new" in html
    assert badge(rita) == ""  # rita assigned it; nothing needs her

    r = ravi.post("/notifications/seen/")
    assert r.status_code == 302 and r["Location"] == "/notifications/"
    assert badge(ravi) == ""
    assert f'href="/review/proposals/{proposal.pk}/"' in listing(ravi)  # still listed, not new

    add_comment(proposal, actor=agent.actor, body="The second entry is the older one.")
    assert 'aria-label="1 new"' in badge(ravi)
    assert "commented: The second entry is the older one." in listing(ravi)


def test_changes_requested_and_comments_reach_the_people_involved(memory, agent, rita, ravi, ada):
    proposal = consolidate(memory, agent.actor)
    add_comment(proposal, actor=person("rita"), body="Which entry is older?")
    assert needs(person("rita")).items == []  # her own comment is not news to her
    request_changes(proposal.pk, actor=person("ravi"), comment="Keep the 02:00 time.")
    add_comment(proposal, actor=agent.actor, body="Will amend.")
    kinds = [i.kind for i in needs(person("rita")).items]
    assert kinds == ["comment", "changes_requested"]  # newest first
    html = listing(rita)
    assert "ravi asked for changes: Keep the 02:00 time." in html
    assert "commented: Will amend." in html
    # ravi requested the changes himself; he hears about the two comments of the others.
    assert [i.kind for i in needs(person("ravi")).items] == ["comment", "comment"]
    # The auditor took no part in it: nothing for her.
    assert needs(person("ada")).items == []
    assert "Nothing needs you right now." in listing(ada)


def test_a_claim_that_went_stale_is_listed(memory, agent, rita, ravi):
    first = consolidate(memory, agent.actor)
    claim = claim_next_proposal(actor=person("rita"))
    assert claim is not None and claim.proposal_id == first.pk
    assert needs(person("rita")).items == []
    reject_proposal(first.pk, actor=person("ravi"), reason="wrong", comment="Not the same.")
    items = needs(person("rita")).items
    assert [i.kind for i in items] == ["stale_claim"]
    assert "You claimed it, and it is now rejected." in items[0].text

    second = consolidate(memory, agent.actor)
    ReviewClaim.objects.all().delete()
    ReviewClaim.objects.create(
        proposal=second,
        actor_id=person("rita").id,
        actor_label="rita",
        expires_at=timezone.now() - timedelta(minutes=1),
    )
    assert "Your claim expired" in listing(rita)


def test_the_seen_marker_never_moves_backwards(memory, rita):
    now = timezone.now()
    mark_notifications_seen(person("rita"), at=now)
    mark_notifications_seen(person("rita"), at=now - timedelta(hours=1))
    assert NotificationPreference.objects.get(user__username="rita").seen_at == now


def test_who_may_open_the_list(memory, rita, ada, nobody):
    html = listing(ada)  # auditors read the list; they change nothing
    assert "/notifications/seen/" not in html and "/notifications/preferences/" not in html
    assert ada.post("/notifications/seen/").status_code == 403
    assert ada.post("/notifications/preferences/", {"email": "off"}).status_code == 403
    assert not NotificationPreference.objects.filter(user__username="ada").exists()
    assert nobody.get("/notifications/").status_code == 403
    assert nobody.get("/notifications/badge/").status_code == 403
    r = Client().get("/notifications/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    assert Client().post("/notifications/seen/").status_code == 302
    assert rita.get("/notifications/seen/").status_code == 405
    csrf = Client(enforce_csrf_checks=True)
    csrf.force_login(User.objects.get(username="rita"))
    assert csrf.post("/notifications/seen/").status_code == 403


def test_the_nav_links_the_list_and_loads_the_badge(memory, rita):
    html = listing(rita)
    assert (
        '<a href="/notifications/" aria-current="page" class="nav-notify">'
        '<span class="nav-long">Notifications</span>'
    ) in html
    assert 'hx-get="/notifications/badge/"' in html


def test_the_list_costs_a_fixed_number_of_queries(
    memory, agent, rita, ravi, django_assert_max_num_queries
):
    for n in range(12):
        p = consolidate(memory, agent.actor)
        assign_proposal(p, actor=person("ravi"), reviewer="rita")
        add_comment(p, actor=agent.actor, body=f"note {n}")
    with django_assert_max_num_queries(30):
        html = listing(rita)
    assert html.count('class="note note-assigned new"') == 12
    with django_assert_max_num_queries(12):
        assert 'aria-label="24 new"' in badge(rita)


# --- Email: immediate, daily digest, off --------------------------------------------------------


def test_reviewers_get_each_mail_at_once_by_default(
    memory, agent, rita, ravi, django_capture_on_commit_callbacks
):
    with_email("rita", "ravi")
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        proposal = consolidate(memory, agent.actor)
    assert sorted(m.to[0] for m in mail.outbox) == ["ravi@example.com", "rita@example.com"]
    assert all(f"#{proposal.pk}" in m.subject for m in mail.outbox)


def test_a_daily_digest_collects_the_mails_into_one(
    memory, agent, rita, ravi, django_capture_on_commit_callbacks
):
    with_email("rita", "ravi")
    set_email_mode(person("ravi"), mode=EmailMode.DAILY)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        first = consolidate(memory, agent.actor)
        second = consolidate(memory, agent.actor)
    assert [m.to[0] for m in mail.outbox] == ["rita@example.com", "rita@example.com"]
    assert Notification.objects.filter(channel="digest", sent_at__isnull=True).count() == 2

    # The first is decided before the digest goes out: the digest says so.
    reject_proposal(first.pk, actor=person("rita"), reason="wrong", comment="Not the same.")

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert send_digests.delay().get() == 1
    assert len(mail.outbox) == 1
    digest = mail.outbox[0]
    assert digest.to == ["ravi@example.com"]
    assert f"#{first.pk}" in digest.body and f"#{second.pk}" in digest.body
    lines = {line for line in digest.body.splitlines() if line.startswith("* ")}
    assert any(f"#{first.pk}" in line and line.endswith("— now rejected") for line in lines)
    assert any(f"#{second.pk}" in line and line.endswith("— now pending") for line in lines)
    # Idempotent: a second run finds nothing left to send.
    assert send_digests.delay().get() == 0
    assert len(mail.outbox) == 1


def test_email_off_sends_nothing(memory, agent, rita, ravi, django_capture_on_commit_callbacks):
    with_email("rita", "ravi")
    ravi.post("/notifications/preferences/", {"email": "off"})
    assert NotificationPreference.objects.get(user__username="ravi").email == EmailMode.OFF
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        consolidate(memory, agent.actor)
    assert [m.to[0] for m in mail.outbox] == ["rita@example.com"]
    assert not Notification.objects.filter(recipient="ravi@example.com").exists()


def test_the_preference_form_refuses_unknown_modes(memory, rita):
    r = rita.post("/notifications/preferences/", {"email": "hourly"}, follow=True)
    assert r.status_code == 400
    r = rita.post("/notifications/preferences/", {"email": "daily"}, follow=True)
    assert "Email: one daily digest." in r.content.decode()
    assert 'value="daily" checked' in r.content.decode()


def test_the_digest_runs_daily_in_the_beat_schedule():
    entry = settings.CELERY_BEAT_SCHEDULE["send-review-digests"]
    assert entry["task"] == "review.send_digests"
    assert entry["schedule"] == 86400.0


# --- The outbox (STEWARD_OUTBOX only) ---------------------------------------------------------------


def test_the_outbox_is_not_found_when_it_is_off(memory, rita):
    assert settings.STEWARD_OUTBOX is False
    assert rita.get("/outbox/").status_code == 404
    assert Client().get("/outbox/").status_code == 404
    assert rita.post("/outbox/digests/").status_code == 404


def test_the_outbox_lists_the_mails_when_on(
    memory, agent, rita, ravi, ada, settings, django_capture_on_commit_callbacks
):
    settings.STEWARD_OUTBOX = True
    with_email("rita", "ravi")
    set_email_mode(person("ravi"), mode=EmailMode.DAILY)
    with django_capture_on_commit_callbacks(execute=True):
        proposal = consolidate(memory, agent.actor)
    html = ada.get("/outbox/").content.decode()
    assert "To <strong>rita@example.com</strong>" in html
    assert f"New consolidation proposal #{proposal.pk}" in html
    assert "1 notification waits for a daily digest." in html
    # Auditors change nothing: no button, and a post is refused.
    assert "Send the daily digests now" not in html
    assert "Send the daily digests now" in rita.get("/outbox/").content.decode()
    assert ada.post("/outbox/digests/").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        r = rita.post("/outbox/digests/", follow=True)
    assert "Queued 1 digest(s)." in r.content.decode()
    assert "To <strong>ravi@example.com</strong>" in r.content.decode()
    assert Client().get("/outbox/").status_code == 302


def test_the_demo_users_have_addresses_and_ravi_takes_a_digest(db):
    call_command("load_demo", "--quiet")
    emails = dict(User.objects.values_list("username", "email"))
    assert emails["rita"] == "rita@acme.example" and emails["ada"] == "ada@acme.example"
    assert NotificationPreference.objects.get(user__username="ravi").email == EmailMode.DAILY
    assert Notification.objects.filter(recipient="rita@acme.example", channel="email")
    assert Notification.objects.filter(recipient="ravi@acme.example", channel="digest")


def test_an_at_mention_notifies_the_person_named_by_mail_and_in_the_list(
    memory, agent, rita, ravi, ada, django_capture_on_commit_callbacks
):
    with_email("rita", "ravi", "ada")
    p = consolidate(memory, agent.actor)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        add_comment(
            p, actor=person("rita"), body="@ravi, is 02:00 still right? (cc @nobody, @rita)"
        )
    # ravi is named (and may see it); nobody does not exist; rita wrote it.
    assert [m.to for m in mail.outbox] == [["ravi@example.com"]]
    assert "rita mentioned you on #" in mail.outbox[0].subject
    assert "is 02:00 still right?" in mail.outbox[0].body
    items = needs(person("ravi")).items
    assert [i.kind for i in items] == ["mention"]
    assert "rita mentioned you: @ravi, is 02:00 still right?" in items[0].text
    # Not named: the auditor hears nothing (she took no part either).
    assert needs(person("ada")).items == []
    # "@ravi2" or an address is not a mention of ravi.
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        add_comment(p, actor=person("rita"), body="Ask @ravi2 or mail ops@ravi.example")
    assert mail.outbox == []
    assert len(needs(person("ravi")).items) == 1


def test_an_amendment_tells_the_other_reviewers(
    memory, agent, rita, ravi, django_capture_on_commit_callbacks
):
    with_email("rita", "ravi")
    p = consolidate(memory, agent.actor)
    request_changes(p.pk, actor=person("ravi"), comment="Keep the 02:00 time.")
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        amend_proposal(
            p,
            actor=person("rita"),
            changes={"body": "Deploys run nightly at 02:00 UTC via deploy.sh."},
            comment="Kept the time.",
        )
    # rita amended it: ravi (the other reviewer) is told, rita is not.
    assert [m.to for m in mail.outbox] == [["ravi@example.com"]]
    assert "amended (revision 2)" in mail.outbox[0].subject
    assert "approvals given before are void" in mail.outbox[0].body
    items = needs(person("ravi")).items
    assert [i.kind for i in items] == ["amended"]
    assert "rita amended it (revision 2)" in items[0].text and "Kept the time." in items[0].text
    assert [i.kind for i in needs(person("rita")).items if i.kind == "amended"] == []
