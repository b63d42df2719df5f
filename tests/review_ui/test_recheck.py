"""The entry page's "Re-checking" card: the entry's governance fields (owner, confidence, review
date and whether it is due, recalls) for every reader, and for reviewers the Confirm and Require
re-verification forms — the same actions as ``POST …/confirm`` and ``…/require-reverification``,
with the same permissions, refusals shown in place (422 / 409), htmx layered on plain forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memory import actions
from memory.models import (
    AuditEvent,
    Head,
    HeadState,
    LifecycleProjection,
    Memory,
    Revision,
    RevisionKind,
)
from tests.factories import remember
from tests.review_ui.conftest import login

pytestmark = pytest.mark.django_db

PAST = "2026-01-01"


def page_url(uid: str) -> str:
    return f"/memories/acme/entries/{uid}/"


def confirm_url(uid: str) -> str:
    return f"/review/entries/acme/{uid}/confirm/"


def reverify_url(uid: str) -> str:
    return f"/review/entries/acme/{uid}/require-reverification/"


def head(uid: str) -> Head:
    return Head.objects.get(entry__uid=uid)


def review_at(uid: str) -> datetime:
    at = head(uid).review_at
    assert at is not None
    return at


def revisions(memory: Memory) -> int:
    return Revision.objects.filter(memory=memory).count()


def card(html: str) -> str:
    start = html.index('id="recheck"')
    return html[start : html.index("</section>", start)]


def test_the_entry_page_shows_the_governance_fields(memory, agent, rita, ada):
    uid = remember(
        memory,
        agent.actor,
        "The on-call lead is Priya",
        owner="sre-team",
        confidence=0.7,
        review_at=PAST,
    ).entry.uid
    at = datetime(2026, 5, 1, 12, 30, tzinfo=UTC)
    LifecycleProjection.objects.filter(entry__uid=uid).update(recall_count=4, last_recalled_at=at)
    for client in (rita, ada):
        html = client.get(page_url(uid)).content.decode()
        part = card(html)
        assert "sre-team" in part and "0.7" in part
        assert "2026-01-01 00:00 UTC" in part and 'id="review-due"' in part
        assert "4 times, last" in part and "2026-05-01 12:30 UTC" in part
        assert "served to 0 runs in 30 days" in html
    fresh = remember(memory, agent.actor, "Builds run on Linux").entry.uid
    part = card(rita.get(page_url(fresh)).content.decode())
    assert "none scheduled" in part and 'id="review-due"' not in part and "0 times" in part


def test_a_reviewer_confirms_from_the_entry_page(memory, agent, rita):
    uid = remember(memory, agent.actor, "The port is 8443", review_at=PAST).entry.uid
    part = card(rita.get(page_url(uid)).content.decode())
    assert f'action="{confirm_url(uid)}"' in part and f'hx-post="{confirm_url(uid)}"' in part
    version = head(uid).version_id
    before = revisions(memory)
    next_year = (timezone.now() + timedelta(days=365)).date().isoformat()
    r = rita.post(confirm_url(uid), {"review_at": next_year})
    assert r.status_code == 302 and r["Location"] == page_url(uid)
    h = head(uid)
    assert h.review_at is not None and h.review_at.date().isoformat() == next_year
    assert h.version_id == version and h.state == HeadState.ACTIVE
    assert revisions(memory) == before + 1
    rev = Revision.objects.filter(memory=memory).order_by("-number").first()
    assert rev is not None and rev.kind == RevisionKind.CONFIRM and rev.actor_label == "rita"
    assert AuditEvent.objects.filter(action="entry.confirmed").count() == 1
    html = rita.get(page_url(uid)).content.decode()
    assert f"Entry {uid} confirmed (revision {rev.number}); next review {next_year}." in html
    assert 'id="review-due"' not in card(html)


def test_a_refused_confirm_is_shown_in_place_and_writes_nothing(memory, agent, rita):
    uid = remember(memory, agent.actor, "The port is 8443", review_at=PAST).entry.uid
    before = revisions(memory)
    r = rita.post(confirm_url(uid), {"review_at": "2020-01-01"})
    assert r.status_code == 422, r.content[:300]
    part = card(r.content.decode())
    assert 'role="alert"' in part and "Next review date: Must be in the future." in part
    assert 'value="2020-01-01"' in part  # what was typed stays
    r = rita.post(confirm_url(uid), {"source": "no-such-source", "ref": "RB-12"})
    assert r.status_code == 422
    part = card(r.content.decode())
    assert "unknown source: no-such-source" in part and 'value="RB-12"' in part
    assert revisions(memory) == before and review_at(uid).year == 2026

    # htmx: the card alone comes back, swapped in place (422 is swapped).
    r = rita.post(confirm_url(uid), {"review_at": "2020-01-01"}, HTTP_HX_REQUEST="true")
    assert r.status_code == 422
    body = r.content.decode()
    assert body.lstrip().startswith('<section class="card govern recheck" id="recheck"')
    assert "<h1" not in body and "Must be in the future." in body


def test_htmx_confirm_is_sent_back_to_the_page(memory, agent, rita):
    uid = remember(memory, agent.actor, "The port is 8443", review_at=PAST).entry.uid
    r = rita.post(confirm_url(uid), {}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and r["HX-Redirect"] == page_url(uid)
    assert head(uid).review_at is None  # no date and no policy: no longer scheduled


def test_confirm_on_an_inactive_entry_is_a_conflict_in_place(memory, agent, rita):
    uid = remember(memory, agent.actor, "The port is 8443").entry.uid
    actions.forget_entry(memory, actor=agent.actor, entry_uid=uid, reason="moved")
    assert f'action="{confirm_url(uid)}"' not in rita.get(page_url(uid)).content.decode()
    r = rita.post(confirm_url(uid), {}, HTTP_HX_REQUEST="true")
    assert r.status_code == 409
    assert "inactive" in r.content.decode().lower()


def test_a_reviewer_requires_reverification_from_the_entry_page(memory, agent, rita):
    uid = remember(memory, agent.actor, "The region is eu-2").entry.uid
    part = card(rita.get(page_url(uid)).content.decode())
    assert f'action="{reverify_url(uid)}"' in part
    before = revisions(memory)
    r = rita.post(reverify_url(uid), {"reason": ""})
    assert r.status_code == 422
    assert "Reason:" in card(r.content.decode()) and revisions(memory) == before
    r = rita.post(reverify_url(uid), {"reason": "the region moved last week"})
    assert r.status_code == 302
    h = head(uid)
    assert h.review_at is not None and h.review_at <= timezone.now()
    rev = Revision.objects.filter(memory=memory).order_by("-number").first()
    assert rev is not None and rev.kind == RevisionKind.REVERIFY
    assert rev.reason == "the region moved last week"
    html = rita.get(page_url(uid)).content.decode()
    assert f"Entry {uid} is due for re-checking now (revision {rev.number})." in html
    assert 'id="review-due"' in card(html)
    r = rita.post(reverify_url(uid), {"reason": "again"}, follow=True)
    assert f"Entry {uid} was already due for re-checking; nothing changed." in r.content.decode()
    assert revisions(memory) == before + 1


def test_auditors_see_no_forms_and_are_refused(memory, agent, ada, nobody):
    uid = remember(memory, agent.actor, "The region is eu-2", review_at=PAST).entry.uid
    part = card(ada.get(page_url(uid)).content.decode())
    assert "<form" not in part
    before = revisions(memory)
    assert ada.post(confirm_url(uid), {}).status_code == 403
    assert ada.post(reverify_url(uid), {"reason": "x"}).status_code == 403
    assert nobody.post(confirm_url(uid), {}).status_code == 403
    assert Client().post(confirm_url(uid), {}).status_code == 302  # to the login page
    assert revisions(memory) == before


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_reviewer_confirms_and_requires_reverification_in_the_browser(
    page, memory, agent, reviewer
):
    uid = remember(memory, agent.actor, "The port is 8443", review_at=PAST).entry.uid
    login(page, "rita", "pw-rita-123", next_path=page_url(uid))
    recheck = page.locator("#recheck")
    assert "review due" in recheck.inner_text()

    # A refusal is swapped into the card: the error in place, the typed date kept.
    recheck.get_by_label("Next review date").fill("2020-01-01")
    recheck.get_by_role("button", name="Confirm").click()
    page.wait_for_selector("#confirm-error")
    assert "Must be in the future." in page.inner_text("#confirm-error")
    assert page.locator("#confirm-review-at").input_value() == "2020-01-01"
    assert review_at(uid).year == 2026

    next_year = (timezone.now() + timedelta(days=365)).date().isoformat()
    page.locator("#confirm-review-at").fill(next_year)
    page.locator("#recheck").get_by_role("button", name="Confirm").click()
    page.wait_for_selector(".messages")
    assert f"Entry {uid} confirmed" in page.inner_text(".messages")
    assert next_year in page.inner_text("#gov-review-at")
    assert "review due" not in page.inner_text("#recheck")

    page.locator("#recheck").get_by_label("Reason").fill("the port changed on Monday")
    page.get_by_role("button", name="Require re-verification").click()
    page.wait_for_selector("#review-due")
    assert f"Entry {uid} is due for re-checking now" in page.inner_text(".messages")
    assert review_at(uid) <= timezone.now()
