"""The inbox as a workflow: search and filters in the URL, bulk decisions with an outcome per
row, assignment from the row, accessible names that say which proposal, a fixed number of
queries with every filter set — and, in Chromium, a bulk approval on a phone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from playwright.sync_api import expect

from memory import actions as memory_actions
from memory.actors import Actor
from proposals.actions.discussion import assign_proposal
from proposals.actions.status import withdraw_proposal
from proposals.models import Proposal, ProposalStatus
from review import actions, claims
from review.models import Decision
from tests.review_ui.conftest import consolidate, login

pytestmark = pytest.mark.django_db

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def ids_on(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'<li id="proposal-(\d+)"', html)]


def listed(client: Any, query: str) -> list[int]:
    r = client.get(f"/review/{query}")
    assert r.status_code == 200, r.content
    return ids_on(r.content.decode())


def user_actor(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def fresh(p: Proposal) -> Proposal:
    return Proposal.objects.get(pk=p.pk)


def make_stale(memory: Any, agent: Any, p: Proposal) -> None:
    target = p.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys moved to 03:00 UTC."
    )


def lossy_one(memory: Any, agent: Any) -> Proposal:
    return consolidate(
        memory,
        agent.actor,
        a="Backups run at 04:00 UTC via backup.sh",
        b="Backups run nightly",
        body="Backups run nightly",
        rationale="Shorter",
    )


@pytest.fixture(autouse=True)
def _cast(reviewer, other_reviewer) -> None:
    """rita and ravi exist in every test here."""


# --- Search and filters ------------------------------------------------------------------------


def test_q_matches_rationale_proposed_text_and_entry_id(rita, memory, agent):
    by_rationale = consolidate(memory, agent.actor, rationale="Zebra crossing notes overlap")
    by_text = consolidate(memory, agent.actor, body="The quokka cluster deploys at dawn")
    other = consolidate(memory, agent.actor)
    entry = other.targets.order_by("position")[0].entry.uid
    assert listed(rita, "?q=zebra") == [by_rationale.pk]
    assert listed(rita, "?q=QUOKKA") == [by_text.pk]
    assert listed(rita, f"?q={entry}") == [other.pk]
    assert listed(rita, "?q=nothing-matches-this") == []


def test_q_matches_the_text_of_an_affected_entry(rita, memory, agent):
    by_input = consolidate(
        memory,
        agent.actor,
        a="The wombat runbook lives in ops/runbooks",
        body="The runbook lives in ops/runbooks",
    )
    consolidate(memory, agent.actor)
    assert listed(rita, "?q=Wombat") == [by_input.pk]


def test_each_filter_narrows(rita, memory, agent, other_agent, reviewer):
    mine = consolidate(memory, agent.actor)
    theirs = consolidate(memory, other_agent.actor)
    lossy = lossy_one(memory, agent)
    entry = theirs.targets.order_by("position")[1].entry.uid
    assert listed(rita, "?submitter=agent-2") == [theirs.pk]
    assert listed(rita, f"?entry={entry}") == [theirs.pk]
    assert listed(rita, "?lost=yes") == [lossy.pk]
    assert listed(rita, "?lost=no") == [mine.pk, theirs.pk]

    assert listed(rita, "?claimed=me") == []
    claims.claim_next_proposal(actor=user_actor("rita"))  # the oldest: ``mine``
    assert listed(rita, "?claimed=me") == [mine.pk]

    assert listed(rita, "?assigned=me") == []
    assign_proposal(theirs, actor=user_actor("ravi"), reviewer="rita")
    assert listed(rita, "?assigned=me") == [theirs.pk]
    assert listed(rita, "?assigned=me&submitter=agent-1") == []


def test_changes_requested_has_a_status_filter_and_its_own_badge(rita, memory, agent, reviewer):
    waiting = consolidate(memory, agent.actor)
    pending = consolidate(memory, agent.actor)
    actions.request_changes(waiting.pk, actor=reviewer.actor, comment="Say where it lives.")
    assert listed(rita, "") == [pending.pk]
    r = rita.get("/review/?status=changes_requested")
    html = r.content.decode()
    assert ids_on(html) == [waiting.pk]
    assert '<option value="changes_requested" selected>Changes requested</option>' in html
    assert '<span class="badge status status-changes_requested">changes requested</span>' in html


def test_bad_filter_values_are_reported(rita, proposal):
    r = rita.get("/review/?lost=maybe&claimed=you&assigned=him")
    assert r.status_code == 400
    html = r.content.decode()
    assert "lost: yes or no." in html and "claimed: Only" in html and "assigned: Only" in html


def test_next_page_keeps_limit_and_every_filter(rita, memory, agent, other_agent):
    made = [consolidate(memory, agent.actor, rationale=f"Deploy overlap {i}") for i in range(5)]
    consolidate(memory, other_agent.actor, rationale="Deploy overlap elsewhere")
    query = "?q=overlap&submitter=agent-1&lost=no&limit=2&sort=newest"
    seen: list[int] = []
    url = f"/review/{query}"
    for _ in range(5):
        html = rita.get(url).content.decode()
        seen += ids_on(html)
        link = re.search(r'<a href="([^"]+)" rel="next">', html)
        if not link:
            break
        href = link.group(1).replace("&amp;", "&")
        for kept in ("q=overlap", "submitter=agent-1", "lost=no", "limit=2", "sort=newest"):
            assert kept in href, (kept, href)
        url = href
    assert seen == [p.pk for p in made][::-1]


# --- Bulk decisions ----------------------------------------------------------------------------


def test_bulk_approve_reports_each_outcome_and_approves_the_rest(rita, memory, agent):
    good = [consolidate(memory, agent.actor) for _ in range(2)]
    stale = consolidate(memory, agent.actor)
    lossy = lossy_one(memory, agent)
    make_stale(memory, agent, stale)
    ids = [good[0].pk, stale.pk, lossy.pk, good[1].pk]
    r = rita.post(
        "/review/bulk/",
        {"action": "approve", "ids": ids, "comment": "", "next": "/review/"},
        **HTMX,
    )
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert "2 of 4 decided." in html
    assert ids_on(html) == ids  # each row, refreshed, in the order given
    rows = {pk: html[html.index(f'<li id="proposal-{pk}"') :] for pk in ids}
    rows = {pk: part[: part.index("</li>\n")] for pk, part in rows.items()}
    for p in good:
        assert 'hx-swap-oob="true"' in rows[p.pk]
        assert "Approved." in rows[p.pk]
        assert fresh(p).status == ProposalStatus.APPROVED
    assert "Stale: an affected entry changed" in rows[stale.pk]
    assert "Needs acknowledging lost details" in rows[lossy.pk]
    assert fresh(stale).status == ProposalStatus.STALE
    assert fresh(lossy).status == ProposalStatus.PENDING
    assert 'id="kind-tabs"' in html and 'hx-swap-oob="true"' in html
    tabs = html[html.index('id="kind-tabs"') :]
    assert re.search(r'All <span class="count">1</span>', tabs), "only the lossy one waits"


def test_bulk_without_js_redirects_back_with_a_summary(rita, memory, agent):
    p = consolidate(memory, agent.actor)
    decided = consolidate(memory, agent.actor)
    actions.approve_proposal(decided.pk, actor=user_actor("ravi"))
    r = rita.post(
        "/review/bulk/",
        {"action": "approve", "ids": [p.pk, decided.pk], "next": "/review/?q=deploy"},
        follow=True,
    )
    assert r.redirect_chain[-1][0] == "/review/?q=deploy"
    html = r.content.decode()
    assert "1 of 2 decided." in html and f"#{decided.pk}: Already decided: approved." in html
    assert fresh(p).status == ProposalStatus.APPROVED


def test_bulk_reject_needs_reason_and_comment(rita, memory, agent):
    a, b = consolidate(memory, agent.actor), consolidate(memory, agent.actor)
    r = rita.post("/review/bulk/", {"action": "reject", "ids": [a.pk, b.pk]}, **HTMX)
    assert r.status_code == 422
    assert "Choose a reason to reject." in r.content.decode()
    assert "Say why you reject them." in r.content.decode()
    assert fresh(a).status == fresh(b).status == ProposalStatus.PENDING
    r = rita.post("/review/bulk/", {"action": "approve", "ids": []}, **HTMX)
    assert r.status_code == 422 and b"Select at least one proposal." in r.content
    r = rita.post(
        "/review/bulk/",
        {"action": "reject", "ids": [a.pk, b.pk], "reason": "wrong", "comment": "Not true."},
        **HTMX,
    )
    assert r.status_code == 200 and b"2 of 2 decided." in r.content
    assert fresh(a).status == fresh(b).status == ProposalStatus.REJECTED


def test_reviewers_get_bulk_controls_and_auditors_none(rita, ada, memory, agent):
    p = consolidate(memory, agent.actor)
    html = rita.get("/review/").content.decode()
    assert 'id="bulk"' in html and "Approve selected" in html and "Reject selected" in html
    assert f'name="ids" value="{p.pk}"' in html
    assert "data-select-all" in html
    audit = ada.get("/review/").content.decode()
    assert ids_on(audit) == [p.pk]
    for absent in ('id="bulk"', 'name="ids"', "Approve selected", 'name="reviewer"'):
        assert absent not in audit, absent
    before = Decision.objects.count()
    assert ada.post("/review/bulk/", {"action": "approve", "ids": [p.pk]}).status_code == 403
    assert (
        ada.post("/review/bulk/", {"action": "approve", "ids": [p.pk]}, **HTMX).status_code == 403
    )
    assert Decision.objects.count() == before and fresh(p).status == ProposalStatus.PENDING


def test_row_buttons_name_their_proposal(rita, memory, agent):
    p = consolidate(memory, agent.actor)
    lossy = lossy_one(memory, agent)
    html = rita.get("/review/").content.decode()
    for label in (
        f'aria-label="Open proposal #{p.pk}"',
        f'aria-label="Approve proposal #{p.pk}"',
        f'aria-label="Reject proposal #{p.pk}…"',
        f'aria-label="Reject proposal #{p.pk}"',
        f'aria-label="Select proposal #{p.pk}"',
        f'aria-label="Assign proposal #{p.pk}"',
        f'aria-label="Reviewer for proposal #{p.pk}"',
        f'aria-label="Acknowledge lost details and approve proposal #{lossy.pk}…"',
    ):
        assert label in html, label


# --- Assignment --------------------------------------------------------------------------------


def test_assign_from_the_row_and_clear(rita, ravi, memory, agent):
    p = consolidate(memory, agent.actor)
    html = rita.get("/review/").content.decode()
    assert '<option value="ravi">ravi</option>' in html and "founder" in html  # staff count
    r = rita.post(f"/review/proposals/{p.pk}/assign/", {"reviewer": "ravi"}, **HTMX)
    assert r.status_code == 200
    assert "assigned to ravi" in r.content.decode() and "Assigned to ravi." in r.content.decode()
    assignee = fresh(p).assigned_to
    assert assignee is not None and assignee.username == "ravi"
    assert "assigned to you" in ravi.get("/review/").content.decode()
    assert listed(ravi, "?assigned=me") == [p.pk]

    r = rita.post(f"/review/proposals/{p.pk}/assign/", {"reviewer": "ada"}, **HTMX)
    assert r.status_code == 422 and b"is not a reviewer" in r.content
    r = rita.post(
        f"/review/proposals/{p.pk}/assign/", {"reviewer": "ravi", "clear": "1", "next": "/review/"}
    )
    assert r.status_code == 302 and r["Location"] == "/review/"
    assert fresh(p).assigned_to is None


def test_auditor_cannot_assign(ada, memory, agent, auditor):
    p = consolidate(memory, agent.actor)
    assert ada.post(f"/review/proposals/{p.pk}/assign/", {"reviewer": "rita"}).status_code == 403
    assert fresh(p).assigned_to is None


# --- Cost --------------------------------------------------------------------------------------


def _queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(url)
    assert r.status_code == 200, r.content
    return len(ctx.captured_queries)


def test_filtered_inbox_costs_the_same_queries_for_6_and_60_proposals(rita, memory, agent):
    rita_actor = user_actor("rita")
    query = (
        "?q=deploy&submitter=agent-1&entry={entry}&lost=no&claimed=me&assigned=me"
        "&status=pending&sort=newest&limit=50"
    )

    def make(n: int) -> list[Proposal]:
        return [consolidate(memory, agent.actor) for _ in range(n)]

    first = make(6)
    entry = first[0].targets.order_by("position")[0].entry.uid
    claims.claim_next_proposal(actor=rita_actor)
    assign_proposal(first[0], actor=rita_actor, reviewer="rita")
    small = _queries(rita, "/review/" + query.format(entry=entry))
    assert listed(rita, query.format(entry=entry)) == [first[0].pk]
    make(54)
    large = _queries(rita, "/review/" + query.format(entry=entry))
    assert small == large <= 11  # 11: + the signed-in user's saved views
    # Without the entry and claim filters 50 rows show: the same count.
    wide = _queries(rita, "/review/?q=deploy&submitter=agent-1&lost=no&limit=50")
    assert len(listed(rita, "?q=deploy&submitter=agent-1&lost=no&limit=50")) == 50
    assert wide <= large


# --- In Chromium -------------------------------------------------------------------------------

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_bulk_approve_on_a_phone_shows_each_outcome_and_updates_counts(
    page, memory, agent, reviewer, other_reviewer
):
    a, b, c = (consolidate(memory, agent.actor) for _ in range(3))
    keep = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    assert page.evaluate(NO_OVERFLOW), "overflow at 1280 px"
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate(NO_OVERFLOW), "overflow at 390 px"
    tabs = page.locator("#kind-tabs")
    assert "All 4" in " ".join(tabs.inner_text().split())
    make_stale(memory, agent, c)  # goes stale after the page was loaded

    select_all = page.get_by_label("Select all on this page")
    select_all.check()
    page.get_by_label(f"Select proposal #{keep.pk}").uncheck()
    assert page.locator("[data-selected-count]").inner_text() == "3 selected"
    page.get_by_role("button", name="Approve selected").click()
    # It asks first, naming each selected proposal.
    confirm = page.locator("#shortcut-confirm")
    expect(confirm).to_be_visible()
    assert "Approve 3 selected proposals?" in confirm.inner_text()
    for p in (a, b, c):
        assert f"proposal #{p.pk} — consolidation — loses no detail" in confirm.inner_text()
    assert fresh(a).status == ProposalStatus.PENDING
    confirm.get_by_role("button", name="Yes, approve").click()

    page.locator("[data-bulk-summary]").wait_for()
    assert "2 of 3 decided." in page.locator("[data-bulk-summary]").inner_text()
    for p in (a, b):
        page.locator(f"#proposal-{p.pk} .notice.success").wait_for()
        assert "Approved." in page.locator(f"#proposal-{p.pk} .notice").inner_text()
    stale_row = page.locator(f"#proposal-{c.pk}")
    assert "Stale" in stale_row.locator(".notice").inner_text()
    assert stale_row.locator(".badge.stale").count() == 1
    assert "All 1" in " ".join(page.locator("#kind-tabs").inner_text().split())
    assert page.locator("[data-selected-count]").inner_text() == "None selected"
    assert page.evaluate(NO_OVERFLOW), "overflow after the bulk decision"
    assert fresh(a).status == fresh(b).status == ProposalStatus.APPROVED
    assert fresh(c).status == ProposalStatus.STALE
    assert fresh(keep).status == ProposalStatus.PENDING

    page.set_viewport_size({"width": 1280, "height": 900})
    assert page.evaluate(NO_OVERFLOW)


def test_assigning_a_withdrawn_proposal_says_it_is_closed(rita, ravi, memory, agent):
    p = consolidate(memory, agent.actor)
    withdraw_proposal(p, actor=agent.actor)
    r = rita.post(f"/review/proposals/{p.pk}/assign/", {"reviewer": "ravi"}, **HTMX)
    assert r.status_code == 409
    assert "can no longer be changed" in r.content.decode()
    r = rita.post(f"/review/proposals/{p.pk}/assign/", {"reviewer": "ravi", "next": "/review/"})
    assert r.status_code == 302
    assert fresh(p).assigned_to is None
