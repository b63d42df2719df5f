"""Two details of the review pages in real Chromium, at 1280 px and on a 390 x 844 phone: the
policy id a verification check names (``p1-a154faad011c``) never breaks at its hyphen, whatever
the card's width; and each saved view's Delete is a separate control — a gap away from the
view's name, outlined, not in the links' blue — named after the view it deletes."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from proposals.verify import policy_version
from review.actions.saved_views import save_view
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [{"width": 1280, "height": 800}, {"width": 390, "height": 844}]

# The widths (px) of the verification checks at which ``text`` takes more than one line: the
# list is narrowed a pixel at a time and the text measured wherever it is in the list.
LINES_OF = """(text) => {
  const list = document.querySelector("#verification .checks");
  const walker = document.createTreeWalker(list, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode()) && !node.data.includes(text)) {}
  if (!node) return null;
  const range = document.createRange();
  range.setStart(node, node.data.indexOf(text));
  range.setEnd(node, node.data.indexOf(text) + text.length);
  const broken = [];
  for (let width = 400; width >= 150; width -= 1) {
    list.style.width = `${width}px`;
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    if (tops.size > 1) broken.push(width);
  }
  list.style.width = "";
  return broken;
}"""

BOX = """(el) => {
  const r = el.getBoundingClientRect();
  const s = getComputedStyle(el);
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, color: s.color,
          border: s.borderTopStyle === "none" ? 0 : parseFloat(s.borderTopWidth)};
}"""


@pytest.mark.parametrize("size", SIZES, ids=["1280", "390"])
def test_the_policy_id_of_a_verification_check_never_breaks_at_its_hyphen(
    page, memory, reviewer, proposal, size
):
    policy = policy_version(memory)
    assert "-" in policy
    page.set_viewport_size(size)
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{proposal.pk}/")
    check = page.locator("#verification .checks li", has_text="Verified under policy")
    assert policy in check.inner_text()
    assert page.evaluate(LINES_OF, policy) == []


@pytest.mark.parametrize("size", SIZES, ids=["1280", "390"])
def test_a_saved_views_delete_is_a_separate_control_named_after_its_view(
    page, reviewer, proposal, size
):
    rita = User.objects.get(username="rita")
    save_view(rita, name="Deploy merges", params={"q": "deploy"})
    save_view(rita, name="Clean merges", params={"kind": "consolidation"})
    page.set_viewport_size(size)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    views = page.locator("#saved-views")
    for name in ("Deploy merges", "Clean merges"):
        link = views.get_by_role("link", name=name, exact=True).evaluate(BOX)
        delete = views.get_by_role("button", name=f"Delete saved view {name}", exact=True)
        assert delete.inner_text() == "Delete"
        button = delete.evaluate(BOX)
        # Beside its own view's name, clearly apart from it.
        assert button["top"] < link["bottom"] and link["top"] < button["bottom"]
        assert button["left"] - link["right"] >= 6, (link, button)
        # An outlined button, not a second link in the same blue.
        assert button["border"] >= 1
        assert button["color"] != link["color"]
    # Deleting one names it and leaves the other.
    views.get_by_role("button", name="Delete saved view Clean merges").click()
    page.locator("#saved-views .notice.success").wait_for()
    assert page.locator("#saved-views").get_by_role("link", name="Clean merges").count() == 0
    assert page.locator("#saved-views").get_by_role("link", name="Deploy merges").count() == 1
