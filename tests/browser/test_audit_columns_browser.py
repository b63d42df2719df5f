"""The audit log at 1280 px in real Chromium: the Label column (the event in words) gets the
room rather than the Action column, the Actor filter shows its whole placeholder, and a row naming
several entries wraps its links instead of widening the page."""

from __future__ import annotations

import pytest

from memory import actions
from review.actions import request_changes
from tests.browser.conftest import login
from tests.review_ui.conftest import consolidate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = "(el) => el.getBoundingClientRect().width"
# Whether an input's placeholder fits inside its content box, measured in the input's font.
PLACEHOLDER_FITS = """(el) => {
  const cs = getComputedStyle(el);
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = cs.font;
  const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  return ctx.measureText(el.placeholder).width <= room;
}"""


def test_the_label_column_gets_the_room_and_the_actor_placeholder_fits(
    page, memory, agent, reviewer
):
    for n in range(3):
        consolidate(
            memory,
            agent.actor,
            rationale=f"Both entries {n} state the same leader-election decision; the merged "
            "text keeps the advisory lock named in the second one.",
        )
    # An add that resembles two entries: one event naming three entry ids in its Links cell.
    for suffix in ("", " now", " again now"):
        actions.add_entry(
            memory,
            actor=agent.actor,
            body="The nightly export job writes the billing ledger to the archive" + suffix,
            kind="fact",
        )
    asked = consolidate(memory, agent.actor)
    request_changes(asked.pk, actor=reviewer.actor, comment="Say where the script lives.")
    login(page, "rita", "pw-rita-123", next_path="/audit/")
    header = page.locator(".audit-log thead")
    label = header.get_by_role("columnheader", name="Label").evaluate(WIDTH)
    action = header.get_by_role("columnheader", name="Action").evaluate(WIDTH)
    assert label >= 1.4 * action, (label, action)
    assert page.get_by_label("Actor").evaluate(PLACEHOLDER_FITS)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
