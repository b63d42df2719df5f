"""The proposal page's keys do what its help says, and only that: j / k go to the next /
previous proposal of the queue the page was opened from, o back to that inbox view; the help
promises nothing the page cannot do. "Reject & next" rejects and opens the next pending one."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from proposals.models import Proposal, ProposalStatus
from review.models import Decision
from tests.review_ui.conftest import consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_j_k_o_and_reject_and_next_on_the_proposal_page(page, memory, agent, reviewer):
    first, middle, last = (consolidate(memory, agent.actor) for _ in range(3))
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto(f"/review/proposals/{middle.pk}/")

    page.keyboard.press("?")
    help_ = page.locator("#shortcut-help")
    expect(help_).to_be_visible()
    assert "Open the selected proposal" not in help_.inner_text()
    assert "Back to that inbox view" in help_.inner_text()
    page.keyboard.press("Escape")
    expect(help_).to_be_hidden()

    page.keyboard.press("j")
    page.wait_for_url(f"**/review/proposals/{last.pk}/")
    page.keyboard.press("k")
    page.wait_for_url(f"**/review/proposals/{middle.pk}/")
    page.keyboard.press("k")
    page.wait_for_url(f"**/review/proposals/{first.pk}/")
    page.keyboard.press("o")
    page.wait_for_url("**/review/")

    # Reject & next: the reason and comment, then straight on to the next pending proposal.
    page.goto(f"/review/proposals/{first.pk}/")
    page.keyboard.press("r")
    decision = page.locator("#decision")
    decision.get_by_label("Reason").select_option("wrong")
    decision.get_by_label("Rejection comment (required)").fill("Not the same schedule.")
    decision.get_by_role("button", name="Reject & next").click()
    page.wait_for_url(f"**/review/proposals/{middle.pk}/")
    assert "Rejected proposal" in page.locator(".messages").inner_text()
    assert Proposal.objects.get(pk=first.pk).status == ProposalStatus.REJECTED
    assert Decision.objects.get(proposal=first).comment == "Not the same schedule."
