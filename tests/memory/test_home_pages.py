"""The Memory home (inventory with charts), the maintenance run list and the run page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memory.models import MaintenanceRun
from tests.factories import remember


@pytest.fixture
def browser(reviewer) -> Client:
    c = Client()
    c.force_login(User.objects.get(username="rita"))
    return c


@pytest.fixture
def auditor_browser(auditor) -> Client:
    c = Client()
    c.force_login(User.objects.get(username="ada"))
    return c


def test_memory_home_shows_the_inventory_and_vendored_charts(
    browser, memory, agent, django_assert_max_num_queries
):
    for i in range(3):
        remember(memory, agent.actor, f"Home page fact {i}", dedupe=False)
    with django_assert_max_num_queries(14):
        r = browser.get("/memories/acme/")
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert "vendor/chartjs/chart.umd.min.js" in html and "cdn" not in html.lower()
    assert 'id="inventory-data"' in html and "Importance of active entries" in html
    assert "Pending proposals by kind" in html and "Auto-deactivations by reason" in html
    # A reviewer tries a candidate policy from here before enabling it.
    assert 'href="/memories/acme/replay/"' in html


def test_pages_need_a_reviewer_auditor_or_staff(memory, agent):
    nobody = User.objects.create_user("nobody", password="x")
    c = Client()
    c.force_login(nobody)
    assert c.get("/memories/acme/").status_code == 403
    assert c.get("/memories/nope/").status_code in (403, 404)
    assert Client().get("/memories/acme/").status_code == 302  # login first


def test_a_reviewer_dry_runs_and_applies_from_the_pages(browser, memory, agent):
    r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "dry_run"})
    assert r.status_code == 302, r.content
    run = MaintenanceRun.objects.get()
    assert run.dry_run and r["Location"].endswith(f"/maintenance/{run.pk}/")
    page = browser.get(r["Location"])
    assert page.status_code == 200 and b"Receipts" in page.content and b"Apply" in page.content
    # Applying a job the policy does not enable is refused with a message; nothing runs.
    r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "apply"})
    assert r.status_code == 302 and MaintenanceRun.objects.count() == 1
    listing = browser.get("/memories/acme/maintenance/")
    assert listing.status_code == 200 and f"#{run.pk}".encode() in listing.content


def test_auditors_read_but_cannot_run(auditor_browser, memory):
    assert auditor_browser.get("/memories/acme/maintenance/").status_code == 200
    r = auditor_browser.post("/memories/acme/maintenance/", {"job": "capacity", "mode": "dry_run"})
    assert r.status_code == 403
    assert not MaintenanceRun.objects.exists()


def test_the_maintenance_pages_read_as_pages_not_as_python(browser, memory, agent):
    """Each control has its own label; a run's receipts and counts are rows, its values and
    inputs read as JSON writes them (true, not Python's True), and each candidate links to its
    entry."""
    listing = browser.get("/memories/acme/maintenance/").content.decode()
    assert '<label for="job">Job to run</label>' in listing
    assert '<label for="f-job">Show runs of</label>' in listing
    remember(memory, agent.actor, "The deploy runs nightly at 02:00 UTC via deploy.sh")
    remember(memory, agent.actor, "The deploy runs nightly at 02:00 UTC via deploy.sh script")
    r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "dry_run"})
    run = MaintenanceRun.objects.get()
    assert run.items and run.items[0]["inputs"]
    html = browser.get(r["Location"]).content.decode()
    assert "{&#x27;" not in html and "True" not in html and "False" not in html
    assert '<th scope="row"><code>threshold</code></th>' in html
    assert '<th scope="row"><code>wrapped</code></th><td><code>true</code></td>' in html
    assert "&quot;pairs&quot;: [[" in html
    uid = run.items[0]["entry_id"]
    assert f'<a href="/memories/acme/entries/{uid}/">{uid}</a>' in html
    assert "Run <code>near_duplicates</code> again:" in html
