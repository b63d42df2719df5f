"""In real Chromium, every region an action affects shows the new state without a reload: after
Approve the proposal page's recall preview, status and verification; after Compensate the
operation's status badge and "Now" column; after a row's Approve or Reject the inbox's kind
counts. And moving through the queue: previous / next and "Approve & next" keep the inbox's
filters; saved views are saved and listed in place. No page overflows at 390 px."""

from __future__ import annotations

import pytest

from proposals.models import Proposal, ProposalStatus
from review import actions
from review.models import MaintenanceOperation
from tests.review_ui.conftest import consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKER = "window.__stewardMarker"
NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def squash(text: str) -> str:
    return " ".join(text.split())


def fresh(p: Proposal) -> Proposal:
    return Proposal.objects.get(pk=p.pk)


def test_approve_refreshes_the_recall_preview_status_and_verification(
    page, memory, agent, reviewer, proposal
):
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{proposal.pk}/")
    preview = page.locator("#recall-preview")
    assert "leaves" in preview.inner_text()
    page.evaluate(f"{MARKER} = 'same page'")
    page.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    page.locator("#decision .notice.success").wait_for()
    assert page.evaluate(MARKER) == "same page", "the approval reloaded the page"
    assert page.locator("#proposal-status").inner_text().strip() == "approved"
    preview = page.locator("#recall-preview")
    assert "leaves" not in preview.inner_text()
    assert "Approved: current-state recall now returns the result" in preview.inner_text()
    assert page.locator("#verification").count() == 1
    assert fresh(proposal).status == ProposalStatus.APPROVED


def test_compensate_refreshes_the_status_badge_and_the_now_column(
    page, memory, agent, reviewer, proposal
):
    result = actions.approve_proposal(proposal.pk, actor=reviewer.actor, comment="")
    op = result.operation
    assert op is not None
    login(page, "rita", "pw-rita-123", next_path=f"/operations/{op.pk}/")
    assert page.locator("#op-status").inner_text().strip() == "in force"
    now_cells = page.locator("#pre-state td.now")
    assert "v2 active" in squash(" ".join(now_cells.all_inner_texts()))
    page.evaluate(f"{MARKER} = 'same page'")
    page.get_by_label("Reason for undoing it").fill("The merge was premature.")
    page.get_by_role("button", name="Compensate").click()
    page.locator("#compensation .notice.success").wait_for()
    assert page.evaluate(MARKER) == "same page", "the compensation reloaded the page"
    assert page.locator("#op-status").inner_text().strip() == "compensated"
    texts = squash(" ".join(page.locator("#pre-state td.now").all_inner_texts()))
    assert "v2 active" not in texts and "v1 active (restored)" in texts
    assert MaintenanceOperation.objects.get(pk=op.pk).compensation is not None


def test_row_approve_and_reject_refresh_the_kind_counts(page, memory, agent, reviewer):
    a, b, _c = (consolidate(memory, agent.actor) for _ in range(3))
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto("/review/?kind=consolidation")
    tabs = page.locator("#kind-tabs")
    assert "All 3" in squash(tabs.inner_text()) and "Consolidation 3" in squash(tabs.inner_text())
    page.evaluate(f"{MARKER} = 'inbox'")

    page.locator(f"#proposal-{a.pk}").get_by_role(
        "button", name=f"Approve proposal #{a.pk}"
    ).click()
    page.locator("#shortcut-confirm").get_by_role("button", name="Yes, approve").click()
    page.locator(f"#proposal-{a.pk} .notice.success").wait_for()
    page.wait_for_function(
        "document.querySelector('#kind-tabs').innerText.replace(/\\s+/g, ' ').includes('All 2')"
    )
    # The tabs keep the page's kind filter (the current one stays marked).
    assert "Consolidation 2" in squash(page.locator("#kind-tabs").inner_text())
    assert page.locator("#kind-tabs [aria-current=page]").inner_text().startswith("Consolidation")

    row = page.locator(f"#proposal-{b.pk}")
    row.locator("summary").click()
    row.get_by_label("Reason").select_option("wrong")
    row.get_by_label("Rejection comment").fill("Not the same schedule.")
    row.get_by_role("button", name=f"Reject proposal #{b.pk}", exact=True).click()
    page.locator(f"#proposal-{b.pk} .notice.success").wait_for()
    page.wait_for_function(
        "document.querySelector('#kind-tabs').innerText.replace(/\\s+/g, ' ').includes('All 1')"
    )
    # The rejected row says why.
    assert "Reason: Wrong" in page.locator(f"#proposal-{b.pk}").inner_text()
    assert page.evaluate(MARKER) == "inbox"
    assert fresh(a).status == ProposalStatus.APPROVED
    assert fresh(b).status == ProposalStatus.REJECTED


def test_approve_and_next_walks_the_filtered_queue(page, memory, agent, reviewer):
    a, b, c = (consolidate(memory, agent.actor) for _ in range(3))
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto("/review/?sort=newest")
    page.locator(f"#proposal-{c.pk}").get_by_role("link", name=f"Open proposal #{c.pk}").click()
    page.wait_for_url(f"**/review/proposals/{c.pk}/?sort=newest")
    assert page.locator("[data-queue-next]").get_attribute("href") == (
        f"/review/proposals/{b.pk}/?sort=newest"
    )
    page.get_by_role("button", name="Approve & next").click()
    page.wait_for_url(f"**/review/proposals/{b.pk}/?sort=newest")
    assert "Approved proposal" in page.locator(".messages").inner_text()
    # The queue is the pending view: the approved proposal is no longer in it.
    assert page.locator("[data-queue-prev]").count() == 0
    page.locator("[data-queue-next]").click()
    page.wait_for_url(f"**/review/proposals/{a.pk}/?sort=newest")
    page.get_by_role("button", name="Approve & next").click()
    page.wait_for_url("**/review/?sort=newest")
    # b, listed before a, still waits: the message says so instead of "nothing left".
    assert (
        f"None after #{a.pk} in this view; proposals listed before it are still pending."
        in page.locator(".messages").inner_text()
    )
    assert fresh(c).status == fresh(a).status == ProposalStatus.APPROVED
    assert fresh(b).status == ProposalStatus.PENDING


def test_a_view_is_saved_and_listed_in_place(page, memory, agent, reviewer):
    consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto("/review/?lost=no&sort=newest")
    page.evaluate(f"{MARKER} = 'inbox'")
    page.get_by_label("Save the current filters as").fill("Clean merges")
    page.get_by_role("button", name="Save view").click()
    page.locator("#saved-views .notice.success").wait_for()
    link = page.locator("#saved-views").get_by_role("link", name="Clean merges")
    assert link.get_attribute("href") == "/review/?lost=no&sort=newest"
    # A second view of the same name: 409, said beside the field.
    page.get_by_label("Save the current filters as").fill("Clean merges")
    page.get_by_role("button", name="Save view").click()
    page.locator("#view-name-error").wait_for()
    assert "already have a saved view" in page.locator("#view-name-error").inner_text()
    assert page.evaluate(MARKER) == "inbox"
    page.get_by_role("button", name="Delete saved view Clean merges").click()
    page.locator("#saved-views .notice.success").wait_for()
    assert page.locator("#saved-views").get_by_role("link", name="Clean merges").count() == 0


@pytest.mark.parametrize("width", [1280, 390])
def test_inbox_proposal_and_operation_pages_do_not_overflow(
    page, memory, agent, reviewer, width, lossy
):
    from django.contrib.auth.models import User

    from review.actions.saved_views import save_view

    other = consolidate(memory, agent.actor)
    result = actions.approve_proposal(other.pk, actor=reviewer.actor, comment="")
    assert result.operation is not None
    save_view(User.objects.get(username="rita"), name="A rather long saved view name", params={})
    page.set_viewport_size({"width": width, "height": 900})
    login(page, "rita", "pw-rita-123", next_path="/review/")
    for path in (
        "/review/",
        "/review/?status=all",
        f"/review/proposals/{lossy.pk}/",
        f"/review/proposals/{other.pk}/",
        f"/operations/{result.operation.pk}/",
    ):
        page.goto(path)
        width_now = page.evaluate("document.documentElement.scrollWidth")
        assert page.evaluate(NO_OVERFLOW), f"{path} is {width_now} px wide at {width} px"
