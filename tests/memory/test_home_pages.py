"""The Memory home (inventory with charts), the maintenance run list and the run page."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from celery.app.task import Task
from django.contrib.auth.models import User
from django.test import Client

from memory import actions, maintenance
from memory.actors import Actor
from memory.models import MaintenanceRun
from tests.factories import remember

#: The link to a queued run's page, as the maintenance page's message gives it.
QUEUED_LINK = re.compile(
    r'href="(/memories/acme/maintenance/tasks/(\w+)/([0-9a-f-]{36})/\?mode=(\w+))"'
)


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
    with django_assert_max_num_queries(15):
        r = browser.get("/memories/acme/")
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert "vendor/chartjs/chart.umd.min.js" in html
    # Nothing is loaded from another origin (a random token may well contain "cdn").
    assert not re.search(r'<(?:script|link)\b[^>]*(?:src|href)="(?:https?:)?//', html)
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
    # A reviewer's manual run needs no jobs.<job>.enabled (that switch is the beat schedule):
    # applying a pass that only files proposals runs it.
    r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "apply"})
    assert r.status_code == 302 and MaintenanceRun.objects.count() == 2
    applied = MaintenanceRun.objects.exclude(pk=run.pk).get()
    assert not applied.dry_run and r["Location"].endswith(f"/maintenance/{applied.pk}/")
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
    # Receipts read as words: labels, yes / no, no JSON or snake_case keys.
    assert '<th scope="row">Threshold</th>' in html
    assert '<th scope="row">Wrapped</th><td>yes</td>' in html
    assert "&quot;" not in html and "<pre>" not in html
    assert '<dl class="run-inputs">' in html and "<dt>Pairs</dt>" in html
    uid = run.items[0]["entry_id"]
    assert f'<a href="/memories/acme/entries/{uid}/">{uid}</a>' in html
    assert "Run <code>near_duplicates</code> again:" in html


@pytest.fixture
def queued(monkeypatch, broker) -> list[dict[str, Any]]:
    """What is published to the broker: each task's name, arguments and id (no worker here)."""
    sent: list[dict[str, Any]] = []
    publish = Task.apply_async

    def spy(self: Task, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        result = publish(self, args, kwargs, **options)
        sent.append({"task": self, "args": args, "kwargs": kwargs, "id": result.id})
        return result

    monkeypatch.setattr(Task, "apply_async", spy)
    return sent


def test_with_a_broker_the_page_queues_the_run_and_its_page_follows_it(
    browser, memory, agent, queued
):
    """A large Memory's run must not outlive the web request: with a broker Apply queues the job
    (through the API's own start) and links to the run's page, which reads queued, running,
    then finished, polling with htmx until it is."""
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(
        memory, actor=founder, policy={"jobs": {"near_duplicates": {"enabled": True}}}
    )
    body = "The deploy runs nightly at 02:00 UTC via deploy.sh"
    remember(memory, agent.actor, body, dedupe=False)
    remember(memory, agent.actor, body + " script", dedupe=False)
    r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "apply"})
    assert r.status_code == 302 and r["Location"] == "/memories/acme/maintenance/"
    assert not MaintenanceRun.objects.exists()  # queued, not run in the request
    assert len(queued) == 1 and queued[0]["task"].name == "proposals.near_duplicates"
    listing = browser.get(r["Location"]).content.decode()
    assert "<code>near_duplicates</code> (real run) is queued." in listing
    found = QUEUED_LINK.search(listing)
    assert found, listing
    link, job, task_id, mode = found.groups()
    link = html_lib.unescape(link)
    assert (job, task_id, mode) == ("near_duplicates", queued[0]["id"], "apply")

    page = browser.get(link).content.decode()
    assert "Status: queued" in page and "(real run)" in page
    assert f'hx-get="{html_lib.escape(link)}" hx-trigger="every 2s"' in page
    # While a worker runs it, it holds the job's lock under the task's id.
    with maintenance.job_lock(memory, "near_duplicates", task_id):
        part = browser.get(link, headers={"HX-Request": "true"}).content.decode()
        assert "Status: running" in part and "<h1>" not in part and "hx-trigger" in part
    # The worker runs what the page queued, under the task's id.
    sent = queued[0]
    sent["task"].apply(sent["args"], sent["kwargs"], task_id=task_id)
    run = MaintenanceRun.objects.get()
    assert not run.dry_run and run.actor_label == "rita" and len(run.counts["proposals"]) == 1
    part = browser.get(link, headers={"HX-Request": "true"}).content.decode()
    assert "Status: finished" in part and "hx-trigger" not in part
    assert f'href="/memories/acme/maintenance/{run.pk}/">Run #{run.pk}</a>, applied' in part
    assert "1 proposal filed" in part


def test_with_a_broker_the_page_refuses_a_disabled_or_busy_job_before_queueing_it(
    browser, memory, queued
):
    # A real l1 run needs the policy's l1_enabled: refused before anything is queued.
    r = browser.post("/memories/acme/maintenance/", {"job": "l1", "mode": "apply"})
    assert r.status_code == 302
    listing = browser.get(r["Location"]).content.decode()
    assert "l1: " in listing and "is queued" not in listing
    with maintenance.job_lock(memory, "capacity"):
        r = browser.post("/memories/acme/maintenance/", {"job": "capacity", "mode": "dry_run"})
    listing = browser.get(r["Location"]).content.decode()
    assert "is already in progress on this Memory" in listing and "is queued" not in listing
    assert queued == [] and not MaintenanceRun.objects.exists()
    # A pass that only files proposals is queued, dry run or real: a reviewer's manual run
    # needs no jobs.<job>.enabled (the beat schedule's switch).
    browser.post("/memories/acme/maintenance/", {"job": "contradictions", "mode": "dry_run"})
    browser.post("/memories/acme/maintenance/", {"job": "contradictions", "mode": "apply"})
    assert [q["task"].name for q in queued] == ["proposals.contradictions"] * 2


def test_a_queued_run_page_needs_a_reader_and_a_known_job(browser, auditor_browser, memory):
    tid = "0b9f6a52-3c1e-4c4e-9a57-0e4b8c1d2f30"
    assert browser.get(f"/memories/acme/maintenance/tasks/nope/{tid}/").status_code == 404
    page = auditor_browser.get(f"/memories/acme/maintenance/tasks/rebuild/{tid}/")
    assert page.status_code == 200 and b"Status: queued" in page.content
    nobody = User.objects.create_user("nobody", password="x")
    c = Client()
    c.force_login(nobody)
    assert c.get(f"/memories/acme/maintenance/tasks/rebuild/{tid}/").status_code == 403


def test_a_queued_run_the_worker_skipped_says_so_and_why_and_stops_polling(
    browser, memory, reviewer
):
    from types import SimpleNamespace

    from memory import tasks

    tid = "5d3c1f0e-8a9b-4c2d-b1e0-7f6a5b4c3d2e"
    page = f"/memories/acme/maintenance/tasks/rebuild/{tid}/?mode=dry_run"
    part = browser.get(page, headers={"HX-Request": "true"}).content.decode()
    assert "Status: queued" in part and "hx-trigger" in part
    worker = SimpleNamespace(request=SimpleNamespace(id=tid, is_eager=False))
    asked = tasks.actor_to_primitive(reviewer.actor)
    with maintenance.job_lock(memory, "rebuild", "another-task"):
        tasks.run_task(worker, "rebuild", memory.pk, dry_run=True, actor=asked, correlation_id=None)
    part = browser.get(page, headers={"HX-Request": "true"}).content.decode()
    assert "Status: skipped" in part and "hx-trigger" not in part
    assert "Not run: the same job was already running on this Memory when a worker took it." in part
    assert not MaintenanceRun.objects.exists()


def test_the_history_chart_is_replayed_backwards_over_its_window_only(
    memory, agent, django_assert_num_queries
):
    """The chart's points are today's counts less the changes of later days, read from the
    revisions of the last 90 days only (two queries, whatever the Memory's age)."""
    from datetime import timedelta
    from unittest import mock

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from memory import inventory
    from memory.web.home import active_over_time

    now = timezone.now()

    def at(days_ago: int) -> Any:
        return mock.patch("django.utils.timezone.now", return_value=now - timedelta(days_ago))

    def forget(uid: str) -> None:
        actions.forget_entry(memory, actor=agent.actor, entry_uid=uid, reason="outdated")

    with at(120):  # before the window: counted in today's figures, never replayed
        old = [remember(memory, agent.actor, f"Old fact {i}", dedupe=False) for i in range(3)]
        forget(old[0].entry.uid)
    with at(60):
        [remember(memory, agent.actor, f"Spring fact {i}", dedupe=False) for i in range(2)]
        forget(old[1].entry.uid)
    with at(10):
        actions.reactivate_entry(memory, actor=agent.actor, entry_uid=old[0].entry.uid)
        remember(memory, agent.actor, "Autumn fact", dedupe=False)
    remember(memory, agent.actor, "Today's fact", dedupe=False)

    figures = inventory.inventory(memory)
    assert (figures["active"], figures["inactive"]) == (6, 1)
    days = [str((now - timedelta(d)).date()) for d in (60, 10, 0)]
    with django_assert_num_queries(2), CaptureQueriesContext(connection) as queries:
        history = active_over_time(memory, figures["active"], figures["inactive"])
    assert history == [
        {"day": days[0], "active": 3, "inactive": 2},
        {"day": days[1], "active": 5, "inactive": 1},
        {"day": days[2], "active": 6, "inactive": 1},
    ]
    # Only the changes after the newest revision before the window are aggregated: revision 4
    # (the forget 120 days ago) bounds the aggregate, so the Memory's older history is not read.
    aggregate = queries.captured_queries[1]["sql"]
    assert "memory_revisionchange" in aggregate and '"number" > 4' in aggregate
    # The points follow from today's counts, not from a replay of the whole history.
    shifted = active_over_time(memory, figures["active"] + 100, figures["inactive"])
    assert [p["active"] for p in shifted] == [103, 105, 106]


def test_the_maintenance_page_lists_each_job_with_what_it_does_its_schedule_and_last_run(
    browser, memory, agent, staff, django_assert_max_num_queries
):
    from memory import actions as memory_actions

    memory_actions.update_memory_policy(
        memory,
        actor=staff,
        policy={"jobs": {"near_duplicates": {"enabled": True, "every_hours": 6}}},
    )
    html = browser.get("/memories/acme/maintenance/").content.decode()
    row = html.split('<tr id="job-near_duplicates">')[1].split("</tr>")[0]
    assert "files consolidation proposals" in row and "every 6 h" in row and "never" in row
    capacity = html.split('<tr id="job-capacity">')[1].split("</tr>")[0]
    assert "off — runs only when started here" in capacity
    browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "dry_run"})
    run = MaintenanceRun.objects.get()
    html = browser.get("/memories/acme/maintenance/").content.decode()
    row = html.split('<tr id="job-near_duplicates">')[1].split("</tr>")[0]
    assert f'href="/memories/acme/maintenance/{run.pk}/">#{run.pk}</a>' in row
