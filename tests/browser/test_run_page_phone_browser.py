"""A maintenance run's page on a phone (390 px): its receipts read as words, its candidates are
cards — no overflow, and no row taller than the screen (each used to be thousands of pixels, its
columns clipped)."""

from __future__ import annotations

import pytest

from memory import maintenance
from memory.actors import Actor
from tests.browser.conftest import login
from tests.factories import remember

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "https://wiki.acme.example/platform/runbooks/" + "deploy-pipeline-" * 8 + "v2"


def test_the_run_page_fits_a_phone_with_no_row_taller_than_the_screen(
    page, reviewer, memory, agent
):
    for i in range(3):
        remember(memory, agent.actor, f"The deploy runs nightly at 02:00 UTC via deploy.sh {LONG}")
        remember(memory, agent.actor, f"Deploys run nightly at 02:00 UTC via deploy.sh, {LONG} {i}")
    run = maintenance.run_job(memory, actor=Actor.system("t"), job="near_duplicates")
    assert run.items
    page.set_viewport_size({"width": 390, "height": 844})
    login(page, "rita", "pw-rita-123", next_path=f"/memories/acme/maintenance/{run.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    rows = page.locator(".run-items tbody tr")
    assert rows.count() == len(run.items)
    heights = rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)")
    assert max(heights) < 844, heights
    # Long inputs fold; opened, they read as words and still fit the width.
    rows.first.get_by_text("Show the inputs").click()
    assert "↔" in rows.first.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    receipts = " ".join(page.locator(".receipts").all_inner_texts())
    assert "threshold" in receipts.lower() and "{" not in receipts and "_" not in receipts
