"""The reviewer's day in real headless Chromium: log in, open the inbox, open a consolidation,
read the diff and lost details, acknowledge, approve — the panel and the inbox row update in
place (no page load) — and the revision shows up in the API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from memory.demo import DEMO_PASSWORD, load_demo
from proposals.models import Proposal
from proposals.requests import submit_request
from tests.review_ui.conftest import consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKER = "window.__stewardMarker"


def api_revisions(base: str, key, slug: str = "acme") -> list[dict]:
    r = requests.get(
        f"{base}/api/v1/memories/{slug}/revisions",
        headers={"Authorization": f"Bearer {key.secret}"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    return body["items"] if isinstance(body, dict) else body


def test_reviewer_acknowledges_lost_details_and_approves_without_a_page_load(
    page, live_server, memory, agent, reviewer, lossy
):
    base = live_server.url
    login(page, "rita", "pw-rita-123", next_path="/review/")
    row = page.locator(f"#proposal-{lossy.pk}")
    assert row.is_visible()
    assert "3 lost details" in row.inner_text()

    row.get_by_role("link", name="Open").click()
    page.wait_for_url(f"{base}/review/proposals/{lossy.pk}/")
    # The diff: the redundant input's dropped words, and the lost details marked where they occur.
    lost_marks = page.locator(".pane-inputs mark.lost")
    assert {t.strip() for t in lost_marks.all_inner_texts()} >= {"02:00", "UTC", "deploy.sh"}
    assert page.locator(".pane-inputs del").count() >= 1
    assert page.locator(".verification").get_by_text("deploy.sh").count() >= 1

    page.evaluate(f"{MARKER} = 'same page'")
    decision = page.locator("#decision")
    decision.get_by_role("button", name="Approve", exact=True).click()
    # 422 swapped in place: the form asks for the acknowledgements.
    decision = page.locator("#decision")
    decision.locator(".field-error").wait_for()
    assert "Acknowledge each lost detail" in decision.inner_text()
    assert page.evaluate(MARKER) == "same page"

    for detail in ("02:00", "UTC", "deploy.sh"):
        page.locator(f"#decision input[name=acknowledge][value='{detail}']").check()
    approve_form = page.get_by_role("form", name="Approve this proposal")
    approve_form.get_by_label("Comment").fill("Shorter is fine; the schedule lives in the runbook.")
    approve_form.get_by_role("button", name="Approve", exact=True).click()
    page.locator("#decision .notice.success").wait_for()
    assert "Approved proposal" in page.locator("#decision").inner_text()
    assert page.locator("#proposal-status").inner_text().strip() == "approved"
    assert page.evaluate(MARKER) == "same page", "the approval reloaded the page"

    revisions = api_revisions(base, reviewer)
    mine = [r for r in revisions if r.get("proposal") == lossy.pk]
    assert len(mine) == 1 and mine[0]["kind"] == "consolidate", revisions


def test_inbox_row_updates_in_place_after_approve(
    page, live_server, memory, agent, reviewer, proposal
):
    base = live_server.url
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.evaluate(f"{MARKER} = 'inbox'")
    row = page.locator(f"#proposal-{proposal.pk}")
    row.get_by_role("button", name="Approve").click()
    # One click only asks: the dialog names the inputs and the result, and what it loses.
    confirm = page.locator("#shortcut-confirm")
    expect(confirm).to_be_visible()
    assert f"Approve proposal #{proposal.pk} — consolidation?" in confirm.inner_text()
    assert "loses no detail" in confirm.inner_text()
    assert Proposal.objects.get(pk=proposal.pk).status == "pending"
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_be_hidden()
    assert Proposal.objects.get(pk=proposal.pk).status == "pending"
    row.get_by_role("button", name="Approve").click()
    confirm.get_by_role("button", name="Yes, approve").click()
    row = page.locator(f"#proposal-{proposal.pk}")
    row.locator(".notice.success").wait_for()
    assert "approved" in row.inner_text() and "rita" in row.inner_text()
    assert row.get_by_role("button", name="Approve").count() == 0
    assert page.evaluate(MARKER) == "inbox", "the approval reloaded the page"
    assert any(r.get("proposal") == proposal.pk for r in api_revisions(base, reviewer))


def test_keyboard_shortcuts_move_reject_and_can_be_switched_off(
    page, live_server, memory, agent, reviewer
):
    first = consolidate(memory, agent.actor)
    second = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.keyboard.press("j")
    assert page.locator(f"#proposal-{first.pk}").get_attribute("class").count("selected") == 1
    page.keyboard.press("j")
    assert "selected" in page.locator(f"#proposal-{second.pk}").get_attribute("class")
    page.keyboard.press("k")
    assert "selected" in page.locator(f"#proposal-{first.pk}").get_attribute("class")

    page.keyboard.press("?")
    assert page.locator("#shortcut-help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#shortcut-help").is_visible()

    # r opens the reject form; typing inside it does not trigger shortcuts.
    page.keyboard.press("r")
    row = page.locator(f"#proposal-{first.pk}")
    assert row.locator("details.reject").get_attribute("open") is not None
    row.get_by_label("Reason").select_option("wrong")
    comment = row.get_by_label("Comment")
    comment.fill("")
    comment.type("just a test")  # 'j', 'a' and 'r' typed here must not approve or move
    assert row.get_by_role("button", name="Approve").count() == 1
    row.get_by_role("button", name="Reject").click()
    row = page.locator(f"#proposal-{first.pk}")
    row.locator(".notice.success").wait_for()
    assert "rejected" in row.inner_text()

    # Switch the shortcuts off: the choice survives a reload.
    page.get_by_role("checkbox", name="Keyboard shortcuts").uncheck()
    page.reload()
    assert not page.get_by_role("checkbox", name="Keyboard shortcuts").is_checked()
    page.keyboard.press("j")
    assert page.locator(".item.selected").count() == 0


def test_claim_next_opens_the_oldest_unclaimed_proposal(
    page, live_server, memory, agent, reviewer, proposal
):
    base = live_server.url
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.get_by_role("button", name="Claim next").click()
    page.wait_for_url(f"{base}/review/proposals/{proposal.pk}/")
    assert "You hold this proposal" in page.locator("#decision").inner_text()


def _demo_proposals() -> list[int]:
    demo = load_demo()
    ids, agent, slug = demo.entries, demo.agent, demo.memory.slug

    def ref(key: str, version: int = 1) -> dict:
        return {"entry_id": ids[key], "version": version}

    made = []
    for data in (
        {
            "kind": "consolidation",
            "rationale": "Both entries state the production deploy schedule; keep one.",
            "target": ref("deploy_time"),
            "redundant": [ref("deploy_nightly")],
            "body": "Production deploys run nightly at 02:00 UTC via scripts/deploy.sh.",
        },
        {
            "kind": "supersession",
            "rationale": "Logs moved from Loki to the new OpenSearch cluster in November.",
            "old": ref("logs_retention"),
            "successor": {
                "body": "Application logs are retained for 30 days in OpenSearch (logs-prod).",
                "kind": "fact",
                "evidence": [{"source": "repo", "ref": "infra/logging.tf"}],
            },
        },
        {
            "kind": "cleanup",
            "rationale": "Short-tier facts nobody recalled in 90 days.",
            "entries": [ref("staging_db"), ref("tabs")],
        },
        {
            "kind": "consolidation",
            "rationale": "Shorter wording for the on-call facts.",
            "target": ref("oncall"),
            "redundant": [ref("pager")],
            "body": "On-call rotates weekly; pages go to the on-call channel.",
        },
    ):
        made.append(submit_request(actor=agent, data={"memory": slug, **data}).proposal.pk)
    return made


def test_screenshots_of_the_inbox_and_a_proposal_at_1280_and_on_a_phone(
    page, live_server, browser, tmp_path
):
    """Renders the demo queue; with SCREENSHOT_DIR set (e.g. docs/screenshots) the images are
    kept for the README, otherwise they go to a temporary directory."""
    made = _demo_proposals()
    out = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    login(page, "rita", DEMO_PASSWORD, next_path="/review/")
    page.keyboard.press("j")
    page.screenshot(path=str(out / "inbox.png"), full_page=True)
    page.goto(f"{base}/review/proposals/{made[3]}/")
    page.screenshot(path=str(out / "proposal.png"), full_page=True)
    # Nothing may overflow horizontally at 1280 px.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    phone = browser.new_context(base_url=base, viewport={"width": 390, "height": 844})
    mobile = phone.new_page()
    login(mobile, "rita", DEMO_PASSWORD, next_path="/review/")
    assert mobile.evaluate("document.documentElement.scrollWidth") <= 390
    mobile.screenshot(path=str(out / "inbox-phone.png"))
    mobile.goto(f"{base}/review/proposals/{made[0]}/")
    assert mobile.evaluate("document.documentElement.scrollWidth") <= 390
    mobile.screenshot(path=str(out / "proposal-phone.png"))
    phone.close()
    for name in ("inbox.png", "proposal.png", "inbox-phone.png", "proposal-phone.png"):
        assert (out / name).stat().st_size > 10_000
