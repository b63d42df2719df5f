"""The Memory home and maintenance pages in real Chromium: the vendored charts draw, and
nothing overflows horizontally on a 390 px phone."""

from __future__ import annotations

from memory import maintenance
from memory.actors import Actor
from tests.browser.conftest import login
from tests.factories import remember

WIDE = "document.documentElement.scrollWidth > document.documentElement.clientWidth"


def test_memory_home_draws_its_charts_and_fits_a_phone(page, reviewer, memory, agent):
    for i in range(4):
        remember(memory, agent.actor, f"Phone fact number {i} about s3://acme-cache", dedupe=False)
    run = maintenance.run_job(memory, actor=Actor.system("t"), job="near_duplicates")
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/")
    page.wait_for_function("typeof Chart !== 'undefined'")
    drawn = page.evaluate(
        "Array.from(document.querySelectorAll('canvas')).filter(c => Chart.getChart(c)).length"
    )
    assert drawn == 5
    for path in (
        "/memories/acme/",
        "/memories/acme/maintenance/",
        f"/memories/acme/maintenance/{run.pk}/",
    ):
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(path)
        assert not page.evaluate(WIDE), f"horizontal overflow at 390 px on {path}"
