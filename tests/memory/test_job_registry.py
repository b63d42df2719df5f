"""The maintenance job registry (``memory.jobs``): a job an app registers is known to policy
validation, the runner, the beat fan-out, the Celery tasks, the maintenance page and the API,
and nothing else names it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from lib.errors import ValidationFailed
from memory import jobs, maintenance, tasks
from memory.actions.memories import clean_policy
from memory.actors import Actor
from memory.models import MaintenanceRun, Memory

PASSES = ["near_duplicates", "contradictions", "promotion", "capacity", "injection_scan"]


def count_widgets(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    cfg = jobs.job_policy(memory.policy or {}, "widgets")
    return maintenance.record_run(
        memory,
        actor=actor,
        job="widgets",
        dry_run=dry_run,
        parameters={"limit": cfg.get("limit", 3)},
        counts={"widgets": 0},
        items=[],
        started_at=timezone.now(),
    )


WIDGETS = jobs.Job(
    name="widgets",
    runner=count_widgets,
    task="tests.widgets",
    description="Counts the widgets.",
    settings={"limit": jobs.Number(1, 10)},
)


@pytest.fixture
def widgets() -> Iterator[jobs.Job]:
    jobs.register_job(WIDGETS)
    tasks.job_task(WIDGETS)
    yield WIDGETS
    jobs.unregister_job(WIDGETS.name)


def bearer(key: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {key.secret}"}


def test_a_registered_job_is_validated_listed_run_and_scheduled(memory, reviewer, widgets):
    with pytest.raises(ValidationFailed) as unknown:
        clean_policy({"jobs": {"nope": {"enabled": True}}})
    assert "widgets" in unknown.value.details["policy.jobs.nope"][0]
    assert clean_policy({"jobs": {"widgets": {"enabled": True, "limit": 5}}})
    with pytest.raises(ValidationFailed) as bad:
        clean_policy({"jobs": {"widgets": {"limit": 50}}})
    assert bad.value.details == {"policy.jobs.widgets.limit": ["Not a valid setting for this job."]}

    # Started over the API: run in-process (no broker) through its Celery task.
    client = Client()
    r = client.post(
        "/api/v1/memories/acme/maintenance/widgets",
        {"dry_run": True},
        content_type="application/json",
        headers=bearer(reviewer),
    )
    assert r.status_code == 202, r.content
    assert r.json()["job"] == "widgets" and r.json()["counts"] == {"widgets": 0}
    r = client.get("/api/v1/memories/acme/maintenance/runs?job=widgets", headers=bearer(reviewer))
    assert r.status_code == 200, r.content
    assert [run["job"] for run in r.json()["items"]] == ["widgets"]

    # Named in the OpenAPI document: the start endpoint's summary, the runs' job filter.
    schema = client.get("/api/v1/schema/?format=json", headers=bearer(reviewer)).json()
    start = schema["paths"]["/api/v1/memories/{slug}/maintenance/{job}"]["post"]
    assert start["summary"].endswith("injection_scan, widgets); dry run by default")
    runs = schema["paths"]["/api/v1/memories/{slug}/maintenance/runs"]["get"]
    (job,) = [p for p in runs["parameters"] if p["name"] == "job"]
    assert "widgets" in job["schema"]["enum"]

    # Listed on the maintenance page with what it does, after the passes.
    page = Client()
    page.force_login(User.objects.get(username="rita"))
    html = page.get("/memories/acme/maintenance/").content.decode()
    assert '<tr id="job-widgets">' in html and "Counts the widgets." in html
    assert html.index('id="job-injection_scan"') < html.index('id="job-widgets"')

    # The beat fan-out queues it once its policy enables it.
    memory.policy = {"jobs": {"widgets": {"enabled": True, "limit": 4}}}
    memory.save(update_fields=["policy"])
    assert maintenance.due_jobs(memory, timezone.now()) == ["widgets"]
    queued = tasks.schedule_maintenance()
    assert queued == [["acme", "widgets"]]
    last = MaintenanceRun.objects.order_by("-pk").first()
    assert last is not None and last.job == "widgets" and not last.dry_run
    assert last.parameters["limit"] == 4


def test_jobs_are_listed_in_one_order_and_the_page_offers_the_passes_first():
    assert jobs.job_names() == ["l1", "rebuild", *PASSES, "revalidation"]
    from memory.web.home import page_jobs

    assert [job.name for job in page_jobs()] == [*PASSES, "l1", "rebuild", "revalidation"]


def test_a_setting_that_only_other_jobs_read_must_be_valid_for_each_of_them():
    # ``min_subject`` is a threshold for near_duplicates (a number or one per method) and a
    # plain number for contradictions: another job's section takes only what both accept.
    assert clean_policy({"jobs": {"near_duplicates": {"min_subject": {"lexical": 0.5}}}})
    assert clean_policy({"jobs": {"l1": {"min_subject": 0.5}}})
    with pytest.raises(ValidationFailed) as refused:
        clean_policy({"jobs": {"l1": {"min_subject": {"lexical": 0.5}}}})
    assert refused.value.details == {
        "policy.jobs.l1.min_subject": ["Not a valid setting for this job."]
    }
    # A setting no job reads is refused everywhere.
    with pytest.raises(ValidationFailed):
        clean_policy({"jobs": {"l1": {"limit": 5}}})


def test_a_job_enabled_by_a_top_level_switch_is_enabled_by_it():
    assert jobs.job_enabled({"l1_enabled": True}, "l1")
    assert not jobs.job_enabled({"l1_enabled": True}, "rebuild")
    assert jobs.job_enabled({"jobs": {"rebuild": {"enabled": True}}}, "rebuild")
