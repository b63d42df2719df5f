"""The maintenance page with a real Celery worker and Redis (PostgreSQL: the worker is another
process and must see the same committed database): Apply queues the run instead of running it
in the web request, and the run's page follows it until the worker has recorded it."""

from __future__ import annotations

import html
import re
import time

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client

from memory import actions
from memory.actors import Actor
from memory.models import MaintenanceLock, MaintenanceRun
from proposals.models import Proposal
from tests.celery_worker import running_worker

pytestmark = [
    pytest.mark.celery,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the worker needs a shared DB"),
    pytest.mark.django_db(transaction=True),
]

QUEUED_LINK = re.compile(
    r'href="(/memories/acme/maintenance/tasks/near_duplicates/([0-9a-f-]{36})/[^"]*)"'
)
TOPICS = ["build cache", "release notes", "payments service", "feature flags"]


def test_apply_on_the_page_is_run_by_the_worker_and_followed_on_the_run_page(memory, agent):
    rita = User.objects.create_user("rita", password="pw-rita-123")
    rita.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    browser = Client()
    browser.force_login(rita)
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(
        memory, actor=founder, policy={"jobs": {"near_duplicates": {"enabled": True}}}
    )
    for i, topic in enumerate(TOPICS):
        for tail in (" and reviewed monthly", ""):
            body = f"The {topic} runbook is kept in docs/{i}/runbook.md{tail}"
            actions.add_entry(memory, actor=agent.actor, body=body, kind="fact", dedupe=False)
    with running_worker():
        r = browser.post("/memories/acme/maintenance/", {"job": "near_duplicates", "mode": "apply"})
        assert r.status_code == 302 and r["Location"] == "/memories/acme/maintenance/"
        listing = browser.get(r["Location"]).content.decode()
        assert "<code>near_duplicates</code> (real run) is queued." in listing
        found = QUEUED_LINK.search(listing)
        assert found, listing
        link, task_id = found.groups()
        link = html.unescape(link)
        # A real run of a job that writes memory itself (the decay scan) the policy does not
        # enable is refused on the page, never queued; the proposal-filing passes need no switch.
        refused = browser.post("/memories/acme/maintenance/", {"job": "l1", "mode": "apply"})
        assert "is disabled" in browser.get(refused["Location"]).content.decode()

        seen: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            part = browser.get(link, headers={"HX-Request": "true"}).content.decode()
            status = re.search(r"Status: (\w+)", part)
            assert status, part
            state = status.group(1)
            if not seen or seen[-1] != state:
                seen.append(state)
            if state == "finished":
                break
            assert "hx-trigger" in part  # polls again while not finished
            time.sleep(0.1)
        assert seen[-1] == "finished", seen
        assert set(seen) <= {"queued", "running", "finished"}
    run = MaintenanceRun.objects.get(job="near_duplicates")
    assert run.parameters["lock_holder"] == task_id
    assert not run.dry_run and run.actor_label == "rita"
    assert len(run.counts["proposals"]) == len(TOPICS)
    assert "hx-trigger" not in part
    assert f'href="/memories/acme/maintenance/{run.pk}/">Run #{run.pk}</a>, applied' in part
    page = browser.get(link).content.decode()  # the whole page, once finished, stops polling
    assert "Status: finished" in page and "hx-trigger" not in page.split("<main", 1)[1]
    assert Proposal.objects.filter(memory=memory, kind="consolidation").count() == len(TOPICS)
    assert not MaintenanceRun.objects.filter(job="contradictions").exists()
    assert not MaintenanceLock.objects.exists()
