"""An auditor in real Chromium: logs in, reads the log, filters it (htmx, shareable URL), loads
more, opens an entry's timeline and sees the word diff, then the revision page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from memory.models import AuditEvent
from tests.audit.conftest import history  # noqa: F401  (fixture)
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rows(page):
    return page.locator("#audit-rows tr[id^=event-]")


def test_auditor_filters_the_log_and_reads_an_entry_timeline(page, auditor, history):  # noqa: F811
    login(page, "ada", "pw-ada-123")
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    expect(rows(page)).to_have_count(AuditEvent.objects.count())

    # Filter by action: htmx swaps the results and pushes a shareable URL.
    page.get_by_label("Action").select_option("entry.revised")
    page.wait_for_url(re.compile(r"/audit/\?.*action=entry\.revised"))
    expect(rows(page)).to_have_count(2)
    # Free text narrows further while typing.
    page.get_by_label("Search labels").fill("k8s-prod")
    expect(rows(page)).to_have_count(1)
    shared = page.url
    assert "q=k8s-prod" in shared

    # The shared URL shows the same view on its own.
    page.goto(shared)
    expect(rows(page)).to_have_count(1)
    expect(page.get_by_label("Action")).to_have_value("entry.revised")

    # Open the entry's timeline from the row.
    page.locator("#audit-rows").get_by_role("link", name=history.entry_id).click()
    page.wait_for_url(f"**/memories/acme/entries/{history.entry_id}/")
    expect(page.get_by_role("heading", name=f"Entry {history.entry_id}")).to_be_visible()
    version2 = page.locator("#v2")
    expect(version2.locator("del")).to_have_text("eu-2")
    expect(version2.locator("ins")).to_have_text("eu-3")
    expect(page.locator("#v3 ins")).to_have_text(" (k8s-prod-3)")
    lifecycle = page.locator("#lifecycle tbody tr")
    expect(lifecycle).to_have_count(3)
    expect(lifecycle.nth(1)).to_contain_text("cluster decommissioned")

    # And from the version to the revision that wrote it: before and after.
    version2.get_by_role("link", name="revision 2").click()
    page.wait_for_url("**/memories/acme/revisions/2/")
    expect(page.get_by_role("heading", name="Before (version 1)")).to_be_visible()
    expect(page.locator(".diff del")).to_have_text("eu-2")


def test_load_more_appends_rows_without_leaving_the_page(page, auditor, history):  # noqa: F811
    login(page, "ada", "pw-ada-123", next_path="/audit/?limit=4")
    expect(rows(page)).to_have_count(4)
    url = page.url
    page.get_by_role("link", name="Load more").click()
    expect(rows(page)).to_have_count(8)
    assert page.url == url
    ids = [int(x.split("-")[1]) for x in rows(page).evaluate_all("els => els.map(e => e.id)")]
    assert ids == list(AuditEvent.objects.order_by("-id").values_list("id", flat=True))[:8]


def test_a_reviewer_may_read_but_a_user_without_a_role_may_not(page, history):  # noqa: F811
    from django.contrib.auth.models import User

    User.objects.create_user("nobody", password="pw-nobody-123")
    login(page, "nobody", "pw-nobody-123", next_path="/review/")
    response = page.goto("/audit/")
    assert response is not None and response.status == 403


def test_auditor_follows_a_consolidation_from_the_log_to_the_operation_and_both_timelines(
    page, memory, agent, reviewer, auditor
):
    from memory import actions
    from proposals.requests import submit_request
    from review.actions import approve_proposal
    from tests.audit.conftest import in_request

    target = in_request(
        actions.add_entry,
        memory,
        actor=agent.actor,
        body="Deploys run at 02:00 UTC via deploy.sh",
        kind="fact",
        dedupe=False,
    ).entry.uid
    redundant = in_request(
        actions.add_entry,
        memory,
        actor=agent.actor,
        body="Deploys run nightly",
        kind="fact",
        dedupe=False,
    ).entry.uid
    proposal = in_request(
        submit_request,
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "The same schedule, twice",
            "target": {"entry_id": target, "version": 1},
            "redundant": [{"entry_id": redundant, "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    ).proposal
    result = in_request(
        approve_proposal, proposal.pk, actor=reviewer.actor, comment="Same schedule"
    )
    operation = result.operation.pk

    login(page, "ada", "pw-ada-123")
    page.get_by_label("Action").select_option("proposal.approved")
    expect(rows(page)).to_have_count(1)
    page.locator("#audit-rows").get_by_role("link", name=f"operation {operation}").click()
    page.wait_for_url(f"**/operations/{operation}/")
    expect(page.get_by_role("heading", name=re.compile(f"Operation #{operation}"))).to_be_visible()

    # The target: a new version with the merged body, and the decision that made it.
    page.get_by_role("link", name=target).first.click()
    page.wait_for_url(f"**/memories/acme/entries/{target}/")
    expect(page.locator("#v2 ins").first).to_be_visible()
    expect(page.locator("#v2")).to_contain_text("Deploys run nightly at 02:00 UTC via deploy.sh")
    proposals = page.locator("#proposals")
    expect(proposals).to_contain_text(f"Proposal {proposal.pk}")
    expect(proposals).to_contain_text("approve by")
    expect(proposals).to_contain_text("Same schedule")
    expect(proposals.get_by_role("link", name=f"operation {operation}").first).to_be_visible()

    # The redundant entry: retired into the target by the same revision.
    page.go_back()
    page.get_by_role("link", name=redundant).first.click()
    page.wait_for_url(f"**/memories/acme/entries/{redundant}/")
    intervals = page.locator("#lifecycle tbody tr")
    expect(intervals).to_have_count(2)
    expect(intervals.nth(1)).to_contain_text("inactive")
    expect(intervals.nth(1)).to_contain_text(f"consolidated_into:{target}")
    expect(page.locator("#relations")).to_contain_text("consolidated_into")
