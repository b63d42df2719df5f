"""On a 390 px phone the Memory pages' top bar (which adds an "Entries" link) shows every link,
"Notifications" and its count included, inside the screen: nothing hides in a row that scrolls
sideways, each link stays tall enough to tap and the bar stays two short rows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from memory.actors import Actor
from proposals.actions.discussion import assign_proposal
from tests.browser.conftest import login
from tests.review_ui.conftest import consolidate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
#: The smallest comfortable tap target.
TAP = 44
#: The top bar on a phone: the brand and "Log out", then the links.
TOP_BAR_MAX = 100

LINKS = """() => [...document.querySelectorAll('.topbar nav a')].map((a) => {
  const r = a.getBoundingClientRect();
  return {text: a.textContent.trim(), right: r.right, height: r.height};
})"""


@pytest.mark.parametrize(
    "path", ["/memories/acme/", "/memories/acme/entries/", "/memories/acme/search/"]
)
def test_every_top_bar_link_fits_a_phone_on_memory_pages(
    page, reviewer, other_reviewer, memory, agent, path
):
    ravi = Actor.for_user(User.objects.get(username="ravi"))
    for i in range(12):
        p = consolidate(memory, agent.actor, rationale=f"Assigned to rita {i}")
        assign_proposal(p, actor=ravi, reviewer="rita")
    page.set_viewport_size(PHONE)
    login(page, "rita", "pw-rita-123", next_path=path)
    page.locator("#notification-count .badge").wait_for()
    links = page.evaluate(LINKS)
    assert [link["text"].split()[0] for link in links] == [
        "Dashboard",
        "Inbox",
        "Memory",
        "Entries",
        "Audit",
        "Notifications",
    ]
    for link in links:
        assert link["right"] <= PHONE["width"], link
        assert link["height"] >= TAP, link
    assert (
        page.locator("#notification-count").evaluate("(el) => el.getBoundingClientRect().right")
        <= PHONE["width"]
    )
    assert page.locator(".topbar nav").evaluate("(el) => el.scrollWidth <= el.clientWidth")
    assert page.locator(".topbar").evaluate("(el) => el.getBoundingClientRect().height") <= (
        TOP_BAR_MAX
    )
