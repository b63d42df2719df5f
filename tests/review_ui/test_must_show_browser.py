"""Issue #12's "Must show", in real Chromium at 1280 px, for what the other browser tests leave
out. Each test drives the page with clicks and keys and checks the page and the database:

- keyboard confirmation: Enter on the dialog's Cancel and Esc decide nothing, a row with lost
  details opens its page instead of asking, and on the page ``a`` first goes to the unticked
  acknowledgements; only the confirmation approves (one Decision, with the acknowledgements);
- a bulk rejection with an item that went stale and one another reviewer decided after the page
  was loaded: each row's own outcome, the kind counts, and Decisions only for the rejected two;
- request changes → the submitter amends over the REST API → approve, with two approvals
  required: the approval given on revision 1 is void, revision 2 needs two fresh ones;
- a reviewer amends in the page, then cannot approve (not even with ``a``), and a second
  reviewer approves: the written revision carries the amended text;
- refreshed regions after Reject, a comment, and an Approve that finds the proposal stale.

(Covered elsewhere: tests/review_ui/test_discussion_pages.py, test_inbox_workflow.py,
test_refresh_browser.py, test_browser.py; no overflow at 390 px: tests/browser/.)
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from django.contrib.auth.models import User
from playwright.sync_api import expect

from memory import actions as memory_actions
from memory.actions import update_memory_policy
from memory.actors import Actor
from memory.models import Head, Revision
from proposals.actions.discussion import amend_proposal
from proposals.models import Proposal, ProposalAmendment, ProposalComment, ProposalStatus
from review import actions
from review.models import Decision
from tests.review_ui.conftest import consolidate, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKER = "window.__stewardMarker"


def url(pk: int) -> str:
    return f"/review/proposals/{pk}/"


def squash(text: str) -> str:
    return " ".join(text.split())


def fresh(p: Proposal) -> Proposal:
    return Proposal.objects.get(pk=p.pk)


def user_actor(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def verdicts(p: Proposal) -> list[tuple[str, int, str]]:
    """(verdict, proposal revision, who) of each Decision on ``p``, oldest first."""
    return [
        (d.verdict, d.proposal_revision, d.actor_label)
        for d in Decision.objects.filter(proposal=p).order_by("decided_at", "pk")
    ]


def make_stale(memory: Any, agent: Any, p: Proposal) -> None:
    target = p.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys moved to 03:00 UTC."
    )


def head_body(p: Proposal) -> str:
    """The current text of the proposal's target entry."""
    target = p.targets.order_by("position")[0].entry
    return str(Head.objects.select_related("version").get(entry=target).version.body)


# --- Keyboard confirmation -----------------------------------------------------------------------


def test_keyboard_approval_only_through_the_confirmation(page, memory, agent, reviewer, lossy):
    login(page, "rita", "pw-rita-123", next_path="/review/")
    confirm = page.locator("#shortcut-confirm")
    # The only row has lost details: "a" opens its page to acknowledge them, it asks nothing.
    page.keyboard.press("j")
    assert "selected" in (page.locator(f"#proposal-{lossy.pk}").get_attribute("class") or "")
    page.keyboard.press("a")
    page.wait_for_url(f"**{url(lossy.pk)}#decision")
    assert not confirm.is_visible()
    assert fresh(lossy).status == ProposalStatus.PENDING and verdicts(lossy) == []

    # On the page, "a" goes to the first unticked acknowledgement instead of asking.
    page.keyboard.press("a")
    first = page.locator("#decision input[name=acknowledge]").first
    assert first.evaluate("el => el === document.activeElement")
    assert not confirm.is_visible()
    for box in page.locator("#decision input[name=acknowledge]").all():
        box.check()
    # The focus is still on the last ticked checkbox: "a" works there (a checkbox takes no
    # letters), no need to leave it first.
    assert page.evaluate("document.activeElement.type") == "checkbox"
    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    assert f"Approve proposal #{lossy.pk}" in confirm.inner_text()

    # Enter on Cancel cancels; Esc cancels.
    confirm.locator("[data-confirm-cancel]").focus()
    page.keyboard.press("Enter")
    confirm.wait_for(state="hidden")
    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    page.keyboard.press("Escape")
    confirm.wait_for(state="hidden")
    page.wait_for_timeout(300)
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    assert fresh(lossy).status == ProposalStatus.PENDING and verdicts(lossy) == []

    # The confirmation's own button approves — with the ticked acknowledgements.
    page.evaluate(f"{MARKER} = 'same page'")
    page.keyboard.press("a")
    confirm.get_by_role("button", name="Yes, approve").click()
    page.locator("#decision .notice.success").wait_for()
    assert page.locator("#proposal-status").inner_text().strip() == "approved"
    assert page.evaluate(MARKER) == "same page"
    assert fresh(lossy).status == ProposalStatus.APPROVED
    (decision,) = Decision.objects.filter(proposal=lossy)
    assert decision.verdict == "approve" and decision.actor_label == "rita"
    assert sorted(decision.acknowledged_lost_details) == sorted(["02:00", "UTC", "deploy.sh"])


# --- Bulk decisions with a stale item ----------------------------------------------------------------


def test_bulk_reject_with_a_stale_and_an_already_decided_item(
    page, memory, agent, reviewer, other_reviewer
):
    a, b, stale, taken, keep = (consolidate(memory, agent.actor) for _ in range(5))
    login(page, "rita", "pw-rita-123", next_path="/review/")
    assert "All 5" in squash(page.locator("#kind-tabs").inner_text())
    # After the page was loaded: an input of one changes, ravi approves another.
    make_stale(memory, agent, stale)
    actions.approve_proposal(taken.pk, actor=user_actor("ravi"), comment="")
    page.evaluate(f"{MARKER} = 'inbox'")

    for p in (a, stale, taken, b):
        page.get_by_label(f"Select proposal #{p.pk}").check()
    assert page.locator("[data-selected-count]").inner_text() == "4 selected"
    bulk = page.get_by_role("form", name="Bulk decision")
    # Reject without a reason and comment: refused beside the bar, nothing decided.
    bulk.get_by_role("button", name="Reject selected").click()
    page.locator("#bulk-result .errors").wait_for()
    assert "Choose a reason to reject." in page.locator("#bulk-result").inner_text()
    assert Decision.objects.filter(verdict="reject").count() == 0

    bulk.get_by_label("Reason (to reject)").select_option("wrong")
    bulk.get_by_label("Comment (required to reject)").fill("Not the same schedule.")
    bulk.get_by_role("button", name="Reject selected").click()
    summary = page.locator("[data-bulk-summary]")
    expect(summary).to_contain_text("2 of 4 decided.")
    assert f"#{stale.pk}: Stale" in summary.inner_text()
    assert f"#{taken.pk}: Already decided: approved." in summary.inner_text()
    for p in (a, b):
        row = page.locator(f"#proposal-{p.pk}")
        assert "Rejected" in row.locator(".notice.success").inner_text()
        assert "Reason: Wrong" in row.inner_text()
    stale_row = page.locator(f"#proposal-{stale.pk}")
    assert "Stale" in stale_row.locator(".notice").inner_text()
    assert stale_row.locator(".badge.stale").count() == 1
    taken_row = page.locator(f"#proposal-{taken.pk}")
    assert "Already decided: approved" in taken_row.locator(".notice").inner_text()
    assert "ravi" in taken_row.inner_text()
    assert "All 1" in squash(page.locator("#kind-tabs").inner_text())
    assert page.locator("[data-selected-count]").inner_text() == "None selected"
    assert page.evaluate(MARKER) == "inbox", "the bulk decision reloaded the page"

    assert fresh(a).status == fresh(b).status == ProposalStatus.REJECTED
    assert fresh(stale).status == ProposalStatus.STALE and verdicts(stale) == []
    assert fresh(taken).status == ProposalStatus.APPROVED
    assert verdicts(taken) == [("approve", 1, "ravi")]
    assert fresh(keep).status == ProposalStatus.PENDING
    rejected = Decision.objects.filter(verdict="reject").order_by("proposal_id")
    assert [(d.proposal_id, d.reason, d.comment, d.actor_label) for d in rejected] == [
        (a.pk, "wrong", "Not the same schedule.", "rita"),
        (b.pk, "wrong", "Not the same schedule.", "rita"),
    ]


# --- Request changes → the submitter amends → approve --------------------------------------------


def test_request_changes_submitter_amends_over_the_api_and_two_reviewers_approve(
    browser, page, live_server, memory, agent, reviewer, other_reviewer
):
    update_memory_policy(
        memory, actor=reviewer.actor, policy={"approvals_required": {"consolidation": 2}}
    )
    p = consolidate(memory, agent.actor)
    actions.approve_proposal(p.pk, actor=user_actor("ravi"), comment="Fine by me")
    login(page, "rita", "pw-rita-123", next_path=url(p.pk))
    assert "1 of 2 required approvals recorded" in page.locator("#decision").inner_text()

    decision = page.locator("#decision")
    decision.get_by_text("Request changes…").click()
    decision.get_by_label("What should change").fill("Name the repository of deploy.sh.")
    decision.get_by_role("button", name="Request changes").click()
    page.locator("#decision .notice.success").wait_for()
    assert page.locator("#proposal-status").inner_text().strip() == "changes requested"
    assert "Name the repository of deploy.sh." in page.locator("#thread").inner_text()
    assert "POST /api/v1/proposals/" in page.locator("#decision").inner_text()
    assert fresh(p).status == ProposalStatus.CHANGES_REQUESTED

    # The submitting agent amends over the REST API.
    amended_text = f"{p.payload['body']} (infra repository)"
    r = requests.post(
        f"{live_server.url}/api/v1/proposals/{p.pk}/amend",
        json={"body": amended_text, "comment": "Named the repository"},
        headers={"Authorization": f"Bearer {agent.secret}"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    assert r.json()["revision"] == 2 and r.json()["status"] == "pending"

    page.reload()
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    thread = page.locator("#thread")
    assert "now revision 2" in thread.inner_text()
    assert "(infra repository)" in thread.locator("ins").first.inner_text()
    assert "Named the repository" in thread.inner_text()
    # ravi's approval was of revision 1: void.
    assert "0 of 2 required approvals recorded on revision 2" in squash(
        page.locator("#decision").inner_text()
    )
    page.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    page.locator("#decision .notice.success").wait_for()
    assert "is recorded (1 of 2)" in page.locator("#decision").inner_text()
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    assert fresh(p).status == ProposalStatus.PENDING

    second = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    other = second.new_page()
    login(other, "ravi", "pw-ravi-123", next_path=url(p.pk))
    other.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    other.locator("#decision .notice.success").wait_for()
    assert other.locator("#proposal-status").inner_text().strip() == "approved"
    second.close()

    done = fresh(p)
    assert done.status == ProposalStatus.APPROVED and done.revision == 2
    assert verdicts(p) == [
        ("approve", 1, "ravi"),
        ("request_changes", 1, "rita"),
        ("approve", 2, "rita"),
        ("approve", 2, "ravi"),
    ]
    assert Revision.objects.filter(proposal_id=p.pk).count() == 1
    assert head_body(p) == amended_text


# --- A reviewer amends, a second reviewer approves ---------------------------------------------


def test_reviewer_amends_in_the_page_and_a_second_reviewer_approves(
    browser, page, live_server, memory, agent, reviewer, other_reviewer
):
    p = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path=url(p.pk))
    page.locator("#amend summary").click()
    text = page.get_by_label("Proposed merged text")
    assert text.input_value() == p.payload["body"]
    amended_text = f"{p.payload['body']} (scripts/ in the infra repository)"
    text.fill(amended_text)
    page.get_by_label("Note on this edit").fill("The script's path.")
    page.get_by_role("button", name="Save as revision 2").click()
    page.wait_for_url(f"**{url(p.pk)}")
    assert "Amended proposal" in page.inner_text(".messages")
    assert "Amended by rita" in page.locator("#thread").inner_text()
    decision = page.locator("#decision")
    assert "you count as its author" in decision.inner_text()
    assert decision.get_by_role("button", name="Approve", exact=True).count() == 0
    # Nor does the keyboard approve for her.
    page.keyboard.press("a")
    page.wait_for_timeout(300)
    assert not page.locator("#shortcut-confirm").is_visible()
    assert fresh(p).status == ProposalStatus.PENDING and fresh(p).revision == 2
    (amendment,) = ProposalAmendment.objects.filter(proposal=p)
    assert amendment.author_label == "rita" and amendment.comment == "The script's path."

    second = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    other = second.new_page()
    login(other, "ravi", "pw-ravi-123", next_path=url(p.pk))
    assert amended_text in other.locator(".pane-result").inner_text()
    other.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    other.locator("#decision .notice.success").wait_for()
    assert other.locator("#proposal-status").inner_text().strip() == "approved"
    second.close()

    assert fresh(p).status == ProposalStatus.APPROVED
    assert verdicts(p) == [("approve", 2, "ravi")]
    assert head_body(p) == amended_text


# --- Refreshed regions ---------------------------------------------------------------------------


def test_reject_on_the_page_refreshes_status_thread_and_preview(
    page, memory, agent, reviewer, proposal
):
    login(page, "rita", "pw-rita-123", next_path=url(proposal.pk))
    assert "leaves" in page.locator("#recall-preview").inner_text()
    page.evaluate(f"{MARKER} = 'same page'")
    decision = page.locator("#decision")
    decision.locator("details.reject summary").click()
    decision.get_by_label("Reason").select_option("wrong")
    decision.get_by_label("Rejection comment").fill("These are two different schedules.")
    decision.get_by_role("button", name="Reject", exact=True).click()
    page.locator("#decision .notice.success").wait_for()
    assert page.evaluate(MARKER) == "same page", "the rejection reloaded the page"
    assert page.locator("#proposal-status").inner_text().strip() == "rejected"
    assert "Reason: Wrong" in page.locator("#decision").inner_text()
    assert "These are two different schedules." in page.locator("#thread").inner_text()
    assert "leaves" not in page.locator("#recall-preview").inner_text()
    assert fresh(proposal).status == ProposalStatus.REJECTED
    assert verdicts(proposal) == [("reject", 1, "rita")]


def test_a_comment_appears_in_the_thread_without_a_reload(page, memory, agent, reviewer, proposal):
    login(page, "rita", "pw-rita-123", next_path=url(proposal.pk))
    page.evaluate(f"{MARKER} = 'same page'")
    thread = page.locator("#thread")
    thread.get_by_role("textbox", name="Your comment").fill(
        "Is 02:00 UTC still right after the DST change?"
    )
    thread.get_by_role("button", name="Comment").click()
    expect(page.locator("#thread .thread-item")).to_contain_text(["after the DST change"])
    assert page.evaluate(MARKER) == "same page"
    assert page.locator("#thread textarea").input_value() == ""
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    (comment,) = ProposalComment.objects.filter(proposal=proposal)
    assert comment.body == "Is 02:00 UTC still right after the DST change?"
    assert verdicts(proposal) == []


def test_approving_a_proposal_gone_stale_refreshes_status_and_verification(
    page, memory, agent, reviewer, proposal
):
    login(page, "rita", "pw-rita-123", next_path=url(proposal.pk))
    assert page.locator("#proposal-status").inner_text().strip() == "pending"
    make_stale(memory, agent, proposal)  # after the page was loaded
    page.evaluate(f"{MARKER} = 'same page'")
    page.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("#proposal-status")).to_have_text("stale")
    assert page.evaluate(MARKER) == "same page"
    decision = page.locator("#decision")
    assert "Next step" in decision.inner_text()
    assert decision.get_by_role("button", name="Approve", exact=True).count() == 0
    assert "every referenced version is its entry's head" not in (
        page.locator("#verification").inner_text()
    )
    assert fresh(proposal).status == ProposalStatus.STALE
    assert verdicts(proposal) == []


# --- An approval is for the revision the reviewer read ------------------------------------------


def test_approve_from_a_page_of_an_earlier_revision_is_refused(
    page, memory, agent, reviewer, other_reviewer
):
    p = consolidate(memory, agent.actor)
    login(page, "ravi", "pw-ravi-123", next_path=url(p.pk))
    assert "revision 1" in page.locator("#thread").inner_text()
    # Meanwhile rita edits the proposed text: revision 2, which ravi has not read.
    amend_proposal(p, actor=user_actor("rita"), changes={"body": f"{p.payload['body']} (or 03:00)"})
    page.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    page.locator("#decision .notice").wait_for()
    assert fresh(p).status == ProposalStatus.PENDING, "approved a text the reviewer never saw"
    assert verdicts(p) == []
    assert "revision 2" in page.locator("#decision").inner_text()


def test_a_stale_proposal_is_closed_from_its_page(page, memory, agent, reviewer, proposal):
    make_stale(memory, agent, proposal)
    login(page, "rita", "pw-rita-123", next_path=url(proposal.pk))
    assert page.locator("#proposal-status").inner_text().strip() == "stale"
    page.evaluate(f"{MARKER} = 'same page'")
    decision = page.locator("#decision")
    decision.get_by_role("button", name="Close as stale").click()
    expect(page.locator("#proposal-status")).to_have_text("rejected")
    assert fresh(proposal).status == ProposalStatus.REJECTED
    assert verdicts(proposal) == [("reject", 1, "rita")]
    # It has left the queue of what waits for a reviewer.
    page.goto("/review/?status=stale")
    assert page.locator(f"#proposal-{proposal.pk}").count() == 0
