"""A reviewer who uses only the keyboard and a screen reader keeps their place across htmx swaps.

Approving or rejecting a row of the inbox, commenting on or deciding a proposal, compensating an
operation and "Load more" replace the fragment that holds the focused control. The focus then
moves into the new fragment (static/js/swap-focus.js) instead of falling back to <body>: to the
field a refused form marks invalid — the error is its description — or else to the outcome
notice, the comment just posted, or the first new row, so it is read out.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from memory import actions as memory_actions
from memory.actors import Actor
from proposals.requests import submit_request
from review.actions import approve_proposal
from tests.audit.conftest import history  # noqa: F401  (fixture)
from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The focused element: tag, id, text, aria-invalid and the text of what describes it.
FOCUSED = """() => {
  const e = document.activeElement;
  const described = (e.getAttribute("aria-describedby") || "").split(/\\s+/).filter(Boolean)
    .map((id) => (document.getElementById(id) || {}).textContent || "MISSING " + id).join(" ");
  return {tag: e.tagName.toLowerCase(), id: e.id, text: e.textContent.trim().slice(0, 200),
          invalid: e.getAttribute("aria-invalid"), described: described.trim()};
}"""


def _consolidation(memory: Any, agent: Any, topic: str) -> int:
    """A pending consolidation whose merged text keeps every detail (nothing to acknowledge)."""
    first, second = f"{topic} run nightly", f"{topic} are kept for a week"
    uids = [
        str(
            memory_actions.add_entry(
                memory, actor=agent.actor, body=body, kind="fact", dedupe=False
            ).entry.uid
        )
        for body in (first, second)
    ]
    return submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "consolidation",
            "rationale": f"{topic} stated twice",
            "target": {"entry_id": uids[0], "version": 1},
            "redundant": [{"entry_id": uids[1], "version": 1}],
            "body": f"{first}; {second}",
        },
    ).proposal.pk


def _press(page: Any, locator: Any) -> dict[str, Any]:
    """Focus ``locator``, press Enter on it and wait for the swap: what has the focus then."""
    locator.focus()
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement !== document.body")
    return page.evaluate(FOCUSED)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_inbox_keeps_the_focus_on_a_row_after_approving_or_a_refused_reject(
    page, reviewer, memory, agent, width
):
    page.set_viewport_size({"width": width, "height": 900})
    backups = _consolidation(memory, agent, "Backups")
    builds = _consolidation(memory, agent, "Builds")
    login(page, "rita", "pw-rita-123", next_path="/review/")

    page.get_by_label(f"Reject proposal #{builds}…").focus()
    page.keyboard.press("Enter")
    page.locator(f"#reject-reason-{builds}").select_option("wrong")
    # Blank passes the field's `required`; the server refuses it.
    page.locator(f"#reject-comment-{builds}").fill("   ")
    reject = page.get_by_role("button", name=f"Reject proposal #{builds}", exact=True)
    focused = _press(page, reject)
    assert focused["id"] == f"reject-comment-{builds}"
    assert focused["invalid"] == "true"
    assert focused["described"] == "This field is required."

    # Enter on a row's Approve asks first; Enter again (on "Yes, approve") approves.
    page.get_by_role("button", name=f"Approve proposal #{backups}").focus()
    page.keyboard.press("Enter")
    focused = _press(page, page.locator("#shortcut-confirm [data-confirm-ok]"))
    assert focused["text"].startswith(f"Approved proposal #{backups}")
    status = page.locator(f"#proposal-{backups} [role=status]")
    expect(status).to_be_focused()


def test_the_proposal_page_keeps_the_focus_after_comments_and_decisions(
    page, reviewer, memory, agent
):
    pk = _consolidation(memory, agent, "Backups")
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{pk}/")
    post = page.get_by_role("button", name="Post comment")

    page.get_by_label("Your comment").fill("  ")
    focused = _press(page, post)
    assert (focused["id"], focused["invalid"]) == ("thread-body", "true")
    assert focused["described"] == "This field is required."

    page.get_by_label("Your comment").fill("Both say nightly")
    focused = _press(page, post)
    # The new comment, with its Resolve button last.
    assert focused["tag"] == "li"
    assert " ".join(focused["text"].split()).endswith("Both say nightly Resolve")

    page.locator("#decision details.reject summary").focus()
    page.keyboard.press("Enter")
    page.get_by_label("Reason", exact=True).select_option("wrong")
    page.get_by_label("Rejection comment (required)").fill("  ")
    focused = _press(page, page.locator("#decision [data-reject]"))
    assert (focused["id"], focused["invalid"]) == ("reject-comment", "true")
    assert focused["described"] == "This field is required."

    page.locator("#decision details.changes summary").focus()
    page.keyboard.press("Enter")
    page.get_by_label("What should change").fill("  ")
    focused = _press(page, page.get_by_role("button", name="Request changes", exact=True))
    assert (focused["id"], focused["invalid"]) == ("changes-comment", "true")
    assert focused["described"] == "This field is required."

    focused = _press(page, page.locator("#decision [data-approve]"))
    assert focused["text"].startswith(f"Approved proposal #{pk}")
    expect(page.locator("#decision [role=status]")).to_be_focused()


def test_a_refused_edit_of_the_proposed_text_marks_the_field_described_by_its_error(
    page, reviewer, memory, agent
):
    pk = _consolidation(memory, agent, "Backups")
    login(page, "rita", "pw-rita-123", next_path=f"/review/proposals/{pk}/")
    page.locator("#amend summary").focus()
    page.keyboard.press("Enter")
    page.locator("#amend-text").fill("  ")
    page.get_by_role("button", name="Save as revision 2").press("Enter")
    page.wait_for_load_state()
    text = page.locator("#amend-text")
    expect(text).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#" + text.get_attribute("aria-describedby"))).to_have_text(
        "Must not be empty."
    )


def test_a_refused_compensation_focuses_its_reason_described_by_the_error(
    page, reviewer, memory, agent
):
    pk = _consolidation(memory, agent, "Backups")
    rita = Actor.for_user(User.objects.get(username="rita"))
    operation = approve_proposal(pk, actor=rita).proposal.operation
    login(page, "rita", "pw-rita-123", next_path=f"/operations/{operation.pk}/")
    page.locator("#compensate-comment").fill("  ")
    focused = _press(page, page.locator("#compensation button[type=submit]"))
    assert (focused["id"], focused["invalid"]) == ("compensate-comment", "true")
    assert focused["described"] == "This field is required."


def test_load_more_moves_the_focus_to_the_first_new_row(page, auditor, history):  # noqa: F811
    login(page, "ada", "pw-ada-123", next_path="/audit/?limit=4")
    page.get_by_role("link", name="Load more").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#audit-rows tr[id^=event-]")).to_have_count(8)
    page.wait_for_function("() => document.activeElement !== document.body")
    assert page.evaluate(
        "() => document.activeElement === document.querySelectorAll('#audit-rows tr')[4]"
    )


def test_a_filter_announces_its_results_while_the_focus_stays_on_it(page, auditor, history):  # noqa: F811
    status = page.locator("#swap-status")
    login(page, "ada", "pw-ada-123")
    expect(status).to_have_attribute("role", "status")
    action = page.get_by_label("Action")
    action.focus()
    action.select_option("entry.revised")
    expect(page.locator("#audit-rows tr[id^=event-]")).to_have_count(2)
    expect(status).to_have_text("2 events shown")
    expect(action).to_be_focused()
    action.select_option("proposal.rejected")
    expect(status).to_have_text("No events match these filters.")

    page.goto("/memories/acme/entries/")
    state = page.get_by_label("State")
    state.focus()
    state.select_option("active")
    expect(status).to_have_text(re.compile(r"^\d+ entr(y|ies) shown$"))
    shown = int(status.inner_text().split()[0])
    expect(page.locator("#entry-rows tr")).to_have_count(shown)
    expect(state).to_be_focused()

    page.goto("/memories/acme/search/")
    page.get_by_label("Query").fill("cluster")
    page.keyboard.press("Enter")
    expect(status).to_have_text(re.compile(r"^\d+ hits? of limit \d+$"))
    expect(page.get_by_label("Query")).to_be_focused()


def test_the_shortcut_help_button_is_named_and_opens_its_help_from_the_keyboard(page, reviewer):
    login(page, "rita", "pw-rita-123", next_path="/review/")
    help_button = page.get_by_role("button", name="Keyboard shortcut help")  # not just "?"
    help_button.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(help_button).to_be_focused()


def test_the_outcome_is_focused_even_where_htmx_kept_the_focus_on_a_control_of_the_same_id(
    page, reviewer, memory, agent
):
    """Saving a view from its name field (Enter), approving with the "a" shortcut from the row's
    title: htmx handed the focus back to the new field or title, and the outcome went unread."""
    pk = _consolidation(memory, agent, "Backups")
    login(page, "rita", "pw-rita-123", next_path="/review/")
    name = page.get_by_label("Save the current filters as")
    name.fill("Mine")
    name.focus()
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.press("Enter")
    expect(page.locator("#saved-views [role=status]")).to_have_text("Saved view “Mine”.")
    expect(page.locator("#saved-views [role=status]")).to_be_focused()

    page.keyboard.press("j")
    expect(page.locator(f"#proposal-{pk}-title")).to_be_focused()
    page.keyboard.press("a")
    expect(page.get_by_role("button", name="Yes, approve")).to_be_focused()
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.press("Enter")
    notice = page.locator(f"#proposal-{pk} [role=status]")
    expect(notice).to_have_text(re.compile(f"^Approved proposal #{pk}"))
    expect(notice).to_be_focused()
