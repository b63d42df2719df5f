"""Policy changes in real Chromium: the maintenance page's schedule switch and the replay's
"Enable" file a ``policy`` proposal; its page shows each key before and after; the reviewer who
filed it cannot approve it, a second reviewer does, and only then the policy changes."""

from __future__ import annotations

import pytest

from memory.models import AuditEvent, Memory
from proposals.models import Proposal, ProposalStatus
from tests.review_ui.conftest import add, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def squash(text: str) -> str:
    return " ".join(text.split())


def test_a_schedule_switch_files_a_policy_change_a_second_reviewer_approves(
    page, browser, live_server, memory, reviewer, other_reviewer
):
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/maintenance/")
    row = page.locator("#job-contradictions")
    assert "off" in row.inner_text()
    row.get_by_role("button", name="Propose scheduling contradictions").click()
    page.wait_for_url("**/review/proposals/*/")
    p = Proposal.objects.get(kind="policy")
    assert p.status == ProposalStatus.PENDING
    assert Memory.objects.get(slug="acme").policy == {}  # nothing changes before approval
    assert f"Proposal #{p.pk} turns contradictions's schedule on" in page.content()
    diff = page.locator("table.policy-diff")
    assert squash(diff.locator("#policy-jobs").text_content() or "") == (
        'jobs not set {"contradictions": {"enabled": true}}'
    )
    checks = page.locator("#verification").inner_text()
    assert "Schedules contradictions every 24 h" in checks
    decision = page.locator("#decision")
    assert decision.get_by_role("button", name="Approve", exact=True).count() == 0
    assert "You submitted this proposal; another reviewer decides it." in decision.inner_text()
    # The same switch again: the open proposal is named, nothing new is filed.
    page.goto("/memories/acme/maintenance/")
    page.locator("#job-contradictions").get_by_role("button").click()
    page.wait_for_url("**/memories/acme/maintenance/")
    assert f"Proposal {p.pk} (policy) is already open" in page.content()
    assert Proposal.objects.filter(kind="policy").count() == 1

    second = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    other = second.new_page()
    login(other, "ravi", "pw-ravi-123", next_path=f"/review/proposals/{p.pk}/")
    other.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    other.locator("#decision .notice.success").wait_for()
    assert other.locator("#proposal-status").inner_text().strip() == "approved"
    other.goto("/memories/acme/maintenance/")
    assert "every 24 h" in other.locator("#job-contradictions").inner_text()
    assert (
        other.locator("#job-contradictions")
        .get_by_role("button", name="Propose turning off the schedule of contradictions")
        .is_visible()
    )
    second.close()

    assert Memory.objects.get(slug="acme").policy == {"jobs": {"contradictions": {"enabled": True}}}
    event = AuditEvent.objects.get(action="memory.policy_changed")
    assert event.proposal_id == p.pk and event.actor_label == "ravi"


def test_enabling_a_replayed_candidate_files_a_policy_change(page, memory, reviewer, staff):
    add(memory, staff, "Deploys run nightly at 02:00 UTC")
    login(page, "rita", "pw-rita-123", next_path="/memories/acme/replay/")
    page.get_by_label("Candidate policy keys").fill('{"quality_ranking": true}')
    page.get_by_label("Queries, one per line").fill("deploy schedule")
    page.get_by_role("button", name="Replay").click()
    page.get_by_label("Why (the approving reviewer reads this)").fill("Ranking looked better")
    page.get_by_role("button", name="Enable this policy").click()
    page.wait_for_url("**/review/proposals/*/")
    p = Proposal.objects.get(kind="policy")
    assert p.payload == {"policy": {"quality_ranking": True}, "before": {}}
    assert p.rationale == "Ranking looked better"
    assert "Ranking looked better" in page.locator(".rationale").inner_text()
    assert squash(page.locator("#policy-quality_ranking").text_content() or "") == (
        "quality_ranking not set true"
    )
    assert Memory.objects.get(slug="acme").policy == {}
