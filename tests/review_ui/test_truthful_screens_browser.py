"""What the screen says is what is true, in Chromium at 390 px (a phone) and 1280 px: a claim
ends with the decision (the inbox stops saying "You hold proposal #n"), the dashboard shows the
queue with "Claim next", the navigation links the Memory home, and a superseded entry reads
"superseded" — with its successor — in the entry browser and on its page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memory.models import Entry
from proposals.models import Proposal, ProposalStatus
from tests.memory.conftest import supersede
from tests.review_ui.conftest import add, consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.parametrize("width", [390, 1280])
def test_queue_claim_and_validity_tell_the_truth(page, memory, agent, reviewer, width):
    page.set_viewport_size({"width": width, "height": 844})
    first, _second = consolidate(memory, agent.actor), consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/")

    # The dashboard: the queue per kind and "Claim next", even with nothing assigned.
    queue = page.locator("#queue")
    expect(queue).to_contain_text("2 proposals pending.")
    expect(queue.get_by_role("link", name="consolidation")).to_be_visible()
    assert page.evaluate(NO_OVERFLOW)
    queue.get_by_role("button", name="Claim next").click()
    page.wait_for_url(f"**/review/proposals/{first.pk}/")

    # Decide it; back in the inbox nobody holds it any more.
    page.keyboard.press("r")
    decision = page.locator("#decision")
    decision.get_by_label("Reason").select_option("wrong")
    decision.get_by_label("Rejection comment (required)").fill("Not the same schedule.")
    decision.get_by_role("button", name="Reject", exact=True).click()
    page.locator("#decision .notice.success").wait_for()
    assert Proposal.objects.get(pk=first.pk).status == ProposalStatus.REJECTED
    page.goto("/review/")
    expect(page.locator(".claim-banner")).to_have_count(0)
    assert "You hold" not in page.locator("main").inner_text()

    # A superseded entry and its successor.
    old = add(memory, agent.actor, "The deploy target is eu-1")
    new = add(memory, agent.actor, "The deploy target is eu-2")
    supersede(memory, old=Entry.objects.get(uid=old), new=Entry.objects.get(uid=new))
    page.goto("/memories/acme/entries/")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Memory home")).to_have_attribute("href", "/memories/acme/")
    old_row = page.locator(f"#entry-{old}")
    expect(old_row.locator("[data-validity]")).to_have_text("superseded")
    expect(old_row.get_by_role("link", name=f"Successor entry {new}")).to_be_visible()
    expect(page.locator(f"#entry-{new} [data-validity]")).to_have_text("active")
    page.get_by_label("Validity").select_option("superseded")
    page.wait_for_url("**validity=superseded**")
    expect(page.locator("#entry-rows tr")).to_have_count(1)
    assert page.evaluate(NO_OVERFLOW)

    old_row = page.locator(f"#entry-{old}")
    old_row.get_by_role("link", name=f"Timeline of entry {old}").click()
    expect(page.locator("h1 [data-validity]")).to_have_text("superseded")
    expect(page.locator("#validity")).to_contain_text(f"Superseded by {new}")
    expect(page.locator("#current-h")).to_contain_text("Latest text")
    assert "active" not in page.locator("#current-h").inner_text()
    assert page.evaluate(NO_OVERFLOW)
