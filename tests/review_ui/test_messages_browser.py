"""The note a page shows after a form (``messages``) looks the same on every page, in real
Chromium: a tinted box, success green, warning amber, error red — on the entry page and the
notification page as on the inbox, which alone loaded its styles before."""

from __future__ import annotations

import pytest

from tests.browser.conftest import login
from tests.factories import remember

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRANSPARENT = "rgba(0, 0, 0, 0)"
BACKGROUND = "(el) => getComputedStyle(el).backgroundColor"


def test_the_note_after_a_form_is_a_box_on_every_page(page, memory, agent, reviewer):
    uid = remember(memory, agent.actor, "Never store card numbers in memory").entry.uid
    login(page, "rita", "pw-rita-123", next_path=f"/memories/acme/entries/{uid}/")
    page.locator("#pin-reason").fill("PCI rule")
    page.get_by_role("button", name="Pin", exact=True).click()
    note = page.locator(".messages li", has_text="pinned (revision")
    assert note.evaluate(BACKGROUND) != TRANSPARENT
    page.goto("/notifications/")
    page.get_by_role("button", name="Save email preference").click()
    seen = page.locator(".messages li", has_text="Email:")
    green = seen.evaluate(BACKGROUND)
    assert green != TRANSPARENT
    # Warnings and errors are told apart from a success by their colour.
    colours = page.evaluate(
        """() => ['success', 'warning', 'error'].map((tag) => {
          const ul = document.createElement('ul'); ul.className = 'messages';
          const li = document.createElement('li'); li.className = tag; ul.append(li);
          document.querySelector('main, body').append(ul);
          return getComputedStyle(li).backgroundColor;
        })"""
    )
    assert colours[0] == green and len(set(colours)) == 3
