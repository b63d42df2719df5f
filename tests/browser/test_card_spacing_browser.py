"""Cards stacked one after another keep a gap between them, as the cards of a grid do: the
Memory home (its chart grid, then the latest runs), a maintenance run (re-run form, receipts
grid, proposals, candidates), an entry page as a reviewer (current text, then Quarantine), and a
policy replay's report (one card per query). Before, these touched and read as one box."""

from __future__ import annotations

import pytest

from memory import maintenance
from memory.actors import Actor
from tests.browser.conftest import login
from tests.factories import remember

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Pairs of consecutive visible cards (or grids of cards) in normal flow whose vertical gap is
# under 8 px; cards laid out by a grid or flex parent are spaced by it and left out.
TOUCHING = """() => {
  const out = [];
  const box = (el) => el.matches('.card, .grid2');
  for (const el of document.querySelectorAll('main *')) {
    if (!box(el) || el.offsetParent === null) continue;
    const display = getComputedStyle(el.parentElement).display;
    if (display.includes('grid') || display.includes('flex')) continue;
    let next = el.nextElementSibling;
    while (next && next.offsetParent === null) next = next.nextElementSibling;
    if (!next || !box(next)) continue;
    const gap = next.getBoundingClientRect().top - el.getBoundingClientRect().bottom;
    if (gap < 8) out.push(el.className + ' → ' + next.className + ': ' + Math.round(gap) + ' px');
  }
  return out;
}"""


def test_stacked_cards_do_not_touch(page, reviewer, memory, agent):
    uid = str(
        remember(memory, agent.actor, "Backups run nightly at 01:00 UTC.", dedupe=False).entry.uid
    )
    remember(memory, agent.actor, "Backups run every night at 01:00 UTC.", dedupe=False)
    run = maintenance.run_job(memory, actor=Actor.system("t"), job="near_duplicates")
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/")
    touching = {}
    for path in (
        "/memories/acme/",
        f"/memories/acme/maintenance/{run.pk}/",
        f"/memories/acme/entries/{uid}/",
        "/memories/acme/replay/?run=1&queries=backups%0Anightly&policy=%7B%22quality_ranking%22%3A+false%7D",
    ):
        page.goto(path)
        assert page.locator("main .card").count() >= 2, path
        if found := page.evaluate(TOUCHING):
            touching[path] = found
    assert touching == {}
