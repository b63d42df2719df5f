"""Stale proposals in real Chromium: "Rebase onto current versions" points a stale proposal at
the current heads (verified again, pending as its next revision, earlier approvals void) and a
second reviewer approves it; when an input moved on the page says which and the proposal can be
closed as stale instead."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memory import actions as memory_actions
from memory.models import Head
from proposals.models import Proposal, ProposalStatus
from tests.review_ui.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def squash(text: str) -> str:
    return " ".join(text.split())


def second_uid(p: Proposal) -> str:
    return str(p.payload["redundant"][0]["entry_id"])


def test_a_reviewer_rebases_a_stale_proposal_and_another_approves_it(
    page, browser, live_server, memory, agent, reviewer, other_reviewer, proposal
):
    b = second_uid(proposal)
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=b, body="Deploys 1 run nightly at 02:00 UTC sharp"
    )
    assert Proposal.objects.get(pk=proposal.pk).status == ProposalStatus.STALE
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{proposal.pk}/")
    decision = page.locator("#decision")
    assert "It can no longer be approved as it stands" in decision.inner_text()
    decision.get_by_role("button", name="Rebase onto current versions").click()
    page.wait_for_load_state()
    assert "revision 2 is pending and was verified again" in page.content()
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    assert "revision 2" in page.locator(".revision-label").inner_text()
    assert "Rebased onto the current heads" in page.locator("#thread").inner_text()
    assert "sharp" in page.locator(".pane-inputs").inner_text()
    # rita rebased it, so she counts as its author: another reviewer decides.
    assert page.locator("#decision").get_by_role("button", name="Approve", exact=True).count() == 0

    second = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    other = second.new_page()
    login(other, "ravi", "pw-ravi-123", next_path=f"/review/proposals/{proposal.pk}/")
    lost = other.locator("#decision fieldset.ack input[type=checkbox]")
    for i in range(lost.count()):
        lost.nth(i).check()
    other.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    other.locator("#decision .notice.success").wait_for()
    assert other.locator("#proposal-status").inner_text().strip() == "approved"
    second.close()
    done = Proposal.objects.get(pk=proposal.pk)
    assert (done.status, done.revision) == (ProposalStatus.APPROVED, 2)
    head = Head.objects.get(entry__uid=b)
    assert head.version.number == 2 and head.state == "inactive"


def test_an_input_that_moved_on_is_named_and_the_proposal_is_closed_as_stale(
    page, memory, agent, reviewer, proposal
):
    b = second_uid(proposal)
    memory_actions.forget_entry(memory, actor=agent.actor, entry_uid=b, reason="obsolete")
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{proposal.pk}/")
    page.locator("#decision").get_by_role("button", name="Rebase onto current versions").click()
    notice = page.locator("#decision .notice.conflict")
    notice.wait_for()
    assert f"{b} is inactive (obsolete)" in notice.inner_text()
    p = Proposal.objects.get(pk=proposal.pk)
    assert (p.status, p.revision) == (ProposalStatus.STALE, 1)
    page.locator("#decision").get_by_role("button", name="Close as stale").click()
    expect(page.locator("#proposal-status")).to_have_text("rejected")
    assert Proposal.objects.get(pk=proposal.pk).status == ProposalStatus.REJECTED


def test_a_comment_anchored_to_a_passage_shows_the_passage(page, memory, agent, reviewer, proposal):
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{proposal.pk}/")
    thread = page.locator("#thread")
    thread.get_by_label("Your comment").fill("Is this still the script?")
    thread.get_by_label("About this passage of the proposed text").fill("via deploy.sh")
    thread.get_by_role("button", name="Post comment").click()
    anchored = page.locator("#thread .comment-anchor")
    anchored.wait_for()
    assert "via deploy.sh" in anchored.locator("q").inner_text()
    start = proposal.payload["body"].index("via deploy.sh")
    where = f"On proposed merged text, revision 1, characters {start}–{start + 13}"
    assert where in squash(anchored.inner_text())
    # A passage that is not in the text is refused in place; the comment typed is kept.
    thread = page.locator("#thread")
    thread.get_by_label("Your comment").fill("And this?")
    thread.get_by_label("About this passage of the proposed text").fill("hourly")
    thread.get_by_role("button", name="Post comment").click()
    page.locator("#thread-quote-error").wait_for()
    assert (
        "Not in the proposed text of revision 1" in page.locator("#thread-quote-error").inner_text()
    )
    assert page.locator("#thread-body").input_value() == "And this?"
