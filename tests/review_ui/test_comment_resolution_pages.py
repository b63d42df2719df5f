"""Resolving a comment on the proposal page, as in a code review: a "Resolve" button on each open
comment (a real form; htmx swaps the discussion in place), resolved comments collapsed and
marked "resolved by X", a conflict when someone resolved it first — without JavaScript, with
htmx, and in Chromium at 1280 and 390 px."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from memory.actors import Actor
from proposals.actions.discussion import add_comment, resolve_comment
from proposals.models import CommentResolution, ProposalComment
from tests.review_ui.conftest import login

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "thread"}


def url(pk: int, action: str = "") -> str:
    return f"/review/proposals/{pk}/{action + '/' if action else ''}"


def resolve_url(pk: int, cid: int) -> str:
    return f"/review/proposals/{pk}/comments/{cid}/resolve/"


def user_actor(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def said(proposal: Any, who: Actor, body: str) -> ProposalComment:
    return add_comment(proposal, actor=who, body=body)


@pytest.mark.django_db
def test_resolve_without_javascript_redirects_back_and_shows_it_resolved(
    rita, ravi, agent, proposal
):
    c = said(proposal, agent.actor, "Is deploy.sh still used?")
    html = rita.get(url(proposal.pk)).content.decode()
    assert f'action="{resolve_url(proposal.pk, c.pk)}"' in html
    r = ravi.post(resolve_url(proposal.pk, c.pk))
    assert r.status_code == 302
    assert r["Location"] == f"{url(proposal.pk)}#thread-comment-{c.pk}"
    html = ravi.get(r["Location"]).content.decode()
    assert f"Comment resolved on proposal #{proposal.pk}." in html
    assert "resolved by <strong>ravi</strong>" in html
    assert '<details class="resolved-comment">' in html
    assert f'action="{resolve_url(proposal.pk, c.pk)}"' not in html, "no second Resolve"
    assert CommentResolution.objects.get(comment=c).author_label == "ravi"


@pytest.mark.django_db
def test_resolve_with_htmx_swaps_the_thread_and_a_second_resolve_is_409(rita, ravi, proposal):
    c = said(proposal, user_actor("rita"), "Cite the runbook")
    r = rita.post(resolve_url(proposal.pk, c.pk), **HTMX)
    assert r.status_code == 200
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="thread"')
    assert "resolved by <strong>rita</strong>" in html
    again = ravi.post(resolve_url(proposal.pk, c.pk), **HTMX)
    assert again.status_code == 409
    assert "was resolved by rita" in again.content.decode()
    assert again.content.decode().lstrip().startswith('<section id="thread"')
    no_js = ravi.post(resolve_url(proposal.pk, c.pk))
    assert no_js.status_code == 409 and b"<!doctype html>" in no_js.content
    assert CommentResolution.objects.count() == 1


@pytest.mark.django_db
def test_auditors_get_no_resolve_button_and_are_refused(ada, rita, agent, proposal):
    c = said(proposal, agent.actor, "A point")
    assert "resolve-form" not in ada.get(url(proposal.pk)).content.decode()
    assert ada.post(resolve_url(proposal.pk, c.pk)).status_code == 403
    assert rita.post(resolve_url(proposal.pk, 999_999)).status_code == 404
    assert rita.post(resolve_url(999_999, c.pk)).status_code == 404
    assert not CommentResolution.objects.exists()


@pytest.mark.django_db
def test_a_comment_resolved_over_the_api_shows_collapsed_to_everyone(ada, agent, proposal):
    c = said(proposal, agent.actor, "My own point, settled")
    resolve_comment(proposal, actor=agent.actor, comment_id=c.pk)
    html = ada.get(url(proposal.pk)).content.decode()
    assert 'class="thread-item thread-comment thread-resolved"' in html
    assert "resolved by <strong>agent-1</strong>" in html


# --- Chromium ----------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 390])
def test_the_resolve_button_collapses_the_comment_in_place(page, memory, agent, reviewer, width):
    from tests.review_ui.conftest import consolidate

    proposal = consolidate(memory, agent.actor)
    first = said(proposal, agent.actor, "Is 02:00 UTC still right after the DST change?")
    said(proposal, agent.actor, "Also: deploy.sh moved to scripts/.")
    page.set_viewport_size({"width": width, "height": 844})
    login(page, "rita", "pw-rita-123", next_path=url(proposal.pk))
    page.evaluate("window.__stewardMarker = 'same page'")
    thread = page.locator("#thread")
    expect(thread.get_by_role("button", name="Resolve", exact=True)).to_have_count(2)

    item = page.locator(f"#thread-comment-{first.pk}")
    item.get_by_role("button", name="Resolve", exact=True).click()
    resolved = page.locator(f"#thread-comment-{first.pk}")
    expect(resolved.locator("summary")).to_contain_text("resolved by rita")
    # Collapsed: the body is hidden until the summary is opened.
    expect(resolved.locator("blockquote")).to_be_hidden()
    resolved.locator("summary").click()
    expect(resolved.locator("blockquote")).to_contain_text("after the DST change")
    # The other comment is still open, with its button; no reload happened.
    expect(thread.get_by_role("button", name="Resolve", exact=True)).to_have_count(1)
    assert page.evaluate("window.__stewardMarker") == "same page"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    (done,) = CommentResolution.objects.all()
    assert (done.comment_id, done.author_label) == (first.pk, "rita")
