"""Badges are readable: on every page, each badge's text has a contrast ratio of at least 4.5:1
against its own background (WCAG 2.1 AA for normal text; badges are small), measured in real
Chromium from the computed colours, over the content of tests/browser/test_every_page_on_a_phone.py
(pending, stale, amended, approved and rejected proposals, lost details, claims, assignments,
withheld entries, notification counts)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.browser.conftest import login
from tests.browser.test_every_page_on_a_phone import every_page, world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AA = 4.5
# Each visible element the selector matches: its text, classes, and its contrast ratio (its
# colour, faded by the opacity of it and its ancestors, composed over the nearest opaque
# background behind it).
CONTRASTS = """(selector) => {
  const rgba = (s) => (s.match(/[\\d.]+/g) || []).map(Number).concat([1]).slice(0, 4);
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3]));
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((below, top) => over(top, below), [255, 255, 255]);
  };
  const lum = (c) => {
    const [r, g, b] = c.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const faded = (el) => {
    const c = rgba(getComputedStyle(el).color);
    for (let e = el; e; e = e.parentElement) c[3] *= Number(getComputedStyle(e).opacity);
    return c;
  };
  return [...document.querySelectorAll(selector)]
    .filter((el) => el.offsetParent !== null && el.textContent.trim())
    .map((el) => {
      const bg = background(el);
      const fg = over(faded(el), bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      return [el.className, el.textContent.trim(), (hi + 0.05) / (lo + 0.05)];
    });
}"""


def test_every_badge_has_at_least_4_5_to_1_contrast(
    browser, live_server, settings, memory, agent, reviewer, other_reviewer, auditor, staff
):
    settings.STEWARD_OUTBOX = True
    User.objects.filter(username__in=["rita", "ravi"]).update(email="team@acme.example")
    w = world(memory, agent, staff)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    low: dict[tuple[str, str], str] = {}
    seen = 0
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        login(page, "rita", "pw-rita-123", next_path="/")
        for path in every_page(w, memory.slug):
            page.goto(path)
            page.wait_for_load_state("networkidle")
            for classes, text, ratio in page.evaluate(CONTRASTS, ".badge, .kind"):
                seen += 1
                if ratio < AA:
                    low.setdefault((classes, text), f"{ratio:.2f}:1 on {path}")
    finally:
        context.close()
    assert seen > 50, "the pages showed almost no badges"
    assert not low, "badges below 4.5:1:\n" + "\n".join(
        f"  .{classes.replace(' ', '.')} “{text}”: {where}"
        for (classes, text), where in low.items()
    )


def test_the_text_of_a_decided_inbox_row_has_at_least_4_5_to_1_contrast(
    page, memory, agent, reviewer, staff
):
    """A decided row reads quieter than a pending one, but its rationale, inputs and result stay
    readable: no fading below AA (muted text faded to .7 opacity measured 2.9:1)."""
    world(memory, agent, staff)
    login(page, "rita", "pw-rita-123", next_path="/review/?status=all")
    texts = ".item.decided :is(p, li, q, code, span, strong, time)"
    measured = page.evaluate(CONTRASTS, texts)
    assert len(measured) > 10, "the inbox showed almost no decided rows"
    low = [(text, f"{ratio:.2f}") for _, text, ratio in measured if ratio < AA]
    assert not low, low
