"""The inbox and the proposal page's decision card at a phone's 390 x 844 and at a 1280 px
desktop, in real Chromium: on a phone the queue starts on the first screen (search and filters
fold into a closed panel, "Save this view" into a button, the top bar is two short rows, the
keyboard-shortcut toggle is hidden) while saved views stay one tap away; lost-detail chips never
break inside a token, and the main controls are tall enough to tap. At 1280 px the filters stay
open and the decision card stays inside its column."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from proposals.models import Proposal
from review.actions.saved_views import save_view
from tests.browser.conftest import login
from tests.review_ui.conftest import consolidate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
#: The top bar on a phone: the brand and "Log out", then one row of links.
TOP_BAR_MAX = 100
#: The smallest comfortable tap target.
TAP = 44

BOX = "(el) => { const r = el.getBoundingClientRect(); return {top: r.top, right: r.right, height: r.height}; }"
# How many lines each lost-detail chip of the decision form takes.
CHIP_LINES = """() => [...document.querySelectorAll("#decision .ack mark.lost")].map((mark) => {
  const range = document.createRange();
  range.selectNodeContents(mark);
  return [mark.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
})"""


def path_losing(memory: Any, agent: Any) -> Proposal:
    """A consolidation whose result drops a time, a zone and a script's path from the second
    entry (each lost detail named with the entry it comes from)."""
    return consolidate(
        memory,
        agent.actor,
        a="Deploys run nightly",
        b="Production deploys run at 02:00 UTC via scripts/deploy.sh",
        body="Deploys run nightly",
        rationale="Two entries about the deploy schedule; keep the short one.",
    )


@pytest.fixture
def queue(memory, agent, reviewer) -> list[Proposal]:
    """A few proposals and a saved view: what stood above the list before it."""
    made = [path_losing(memory, agent)] + [consolidate(memory, agent.actor) for _ in range(3)]
    save_view(User.objects.get(username="rita"), name="Deploy merges", params={"q": "deploy"})
    return made


def test_on_a_phone_the_first_proposal_starts_on_the_first_screen(page, queue):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    first = page.locator("#queue > li").first
    assert first.evaluate(BOX)["top"] < PHONE["height"]
    assert not page.get_by_label("Search", exact=True).is_visible()
    assert page.get_by_role("link", name="Deploy merges").is_visible()
    assert not page.get_by_label("Save the current filters as").is_visible()
    page.get_by_text("Save this view…").click()
    assert page.get_by_label("Save the current filters as").is_visible()
    page.get_by_text("Search and filters").click()
    page.get_by_label("Search", exact=True).fill("deploy")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(lambda url: "q=deploy" in url)
    assert "1 active" in page.locator("details.inbox-controls > summary").inner_text()
    assert page.locator("#queue > li").first.evaluate(BOX)["top"] < PHONE["height"]


@pytest.mark.parametrize("path", ["/review/", "/", "/audit/"])
def test_on_a_phone_the_top_bar_is_two_short_rows(page, queue, path):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path=path)
    assert page.locator(".topbar").evaluate(BOX)["height"] <= TOP_BAR_MAX


def test_on_a_phone_the_keyboard_shortcut_toggle_is_hidden(page, queue):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.locator("[data-shortcut-tools]").wait_for(state="attached")
    assert page.locator("[data-shortcut-tools]").get_attribute("hidden") is None  # the script ran
    assert not page.get_by_role("checkbox", name="Keyboard shortcuts").is_visible()
    assert not page.locator(".help-button").is_visible()


def test_at_1280_px_the_filters_and_saved_views_stay_open(page, queue):
    login(page, "rita", "pw-rita-123", next_path="/review/")
    assert page.get_by_label("Search", exact=True).is_visible()
    assert page.get_by_role("link", name="Deploy merges").is_visible()
    assert page.get_by_label("Save the current filters as").is_visible()
    assert not page.locator("details.inbox-controls > summary").is_visible()
    assert not page.get_by_text("Save this view…").is_visible()
    assert page.get_by_role("checkbox", name="Keyboard shortcuts").is_visible()
    assert page.locator(".topbar").evaluate(BOX)["height"] < 60


def test_on_a_phone_the_inbox_and_decision_controls_are_tall_enough_to_tap(page, queue):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    row = page.locator("#queue > li").nth(1)
    for control in (
        row.get_by_role("link", name="Open"),
        row.get_by_role("button", name="Approve"),
        page.locator(".topbar nav a").first,
        page.locator("#kind-tabs a").first,
    ):
        assert control.evaluate(BOX)["height"] >= TAP
    page.goto(f"/review/proposals/{queue[0].pk}/")
    decision = page.locator("#decision")
    assert decision.get_by_role("button", name="Approve", exact=True).evaluate(BOX)["height"] >= TAP
    for label in decision.locator("label.check").all():
        assert label.evaluate(BOX)["height"] >= TAP
        assert label.locator("input").evaluate(BOX)["height"] >= 20


def test_on_a_phone_lost_detail_chips_never_break_inside_a_token(page, queue):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{queue[0].pk}/")
    chips = dict(page.evaluate(CHIP_LINES))
    assert set(chips) == {"02:00", "UTC", "scripts/deploy.sh"}
    assert all(lines == 1 for lines in chips.values()), chips


def test_at_1280_px_the_decision_card_stays_inside_its_column(page, queue):
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{queue[0].pk}/")
    column = page.locator(".side-col").evaluate(BOX)
    card = page.locator("#decision").evaluate(BOX)
    assert card["right"] <= column["right"] + 0.5
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_on_a_phone_each_notification_choice_is_tall_enough_to_tap(page, queue):
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path="/notifications/")
    choices = page.locator("label.choice").all()
    assert choices
    for choice in choices:
        assert choice.evaluate(BOX)["height"] >= TAP


# The space between a link's words and its badge or number: the gap from the end of the link's
# first text to the start of the element after it.
WORD_GAP = """(a) => {
  const range = document.createRange();
  range.selectNodeContents(a.firstChild);
  return a.firstElementChild.getBoundingClientRect().left - range.getBoundingClientRect().right;
}"""
# Where the text of each of the element's children sits (its middle, rounded).
MIDDLES = """(nav) => [...nav.children].map((c) => {
  const range = document.createRange();
  range.selectNodeContents(c);
  const r = range.getBoundingClientRect();
  return Math.round(r.top + r.height / 2);
})"""


def test_on_a_phone_tall_links_keep_the_space_between_their_words(page, queue):
    """A 44 px link is a flex box, which drops the spaces around its children: "#1consolidation",
    "Next#2→". The queue's links, and the plain "← Previous" beside them, share one line."""
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    title = page.locator(".item-title").first
    assert title.evaluate(WORD_GAP) >= 3
    title.click()
    page.wait_for_url(f"**/review/proposals/{queue[0].pk}/**")
    nav = page.locator("nav.queue-nav")
    assert nav.locator("span.muted", has_text="Previous").count() == 1  # the first: no link
    assert nav.locator("[data-queue-next]").evaluate(WORD_GAP) >= 3
    middles = nav.evaluate(MIDDLES)
    assert max(middles) - min(middles) <= 2, middles
