"""Approve, reject and compensate through the browser forms: without JavaScript (redirect back
with a message; 409 and 422 pages) and with htmx (the row or panel swapped in place)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memory import actions as memory_actions
from memory.models import AuditEvent, Head, Revision
from proposals.models import Proposal
from review import actions
from review.models import Compensation, Decision, MaintenanceOperation
from tests.review_ui.conftest import browser_client

pytestmark = pytest.mark.django_db

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def panel(pk: int) -> dict[str, Any]:
    return {**HTMX, "HTTP_HX_TARGET": "decision"}


def row(pk: int) -> dict[str, Any]:
    return {**HTMX, "HTTP_HX_TARGET": f"proposal-{pk}"}


def approve_url(pk: int) -> str:
    return f"/review/proposals/{pk}/approve/"


def reject_url(pk: int) -> str:
    return f"/review/proposals/{pk}/reject/"


def state() -> tuple[int, int, int, list[tuple[int, str]]]:
    """What a refused request must leave untouched."""
    heads = sorted(Head.objects.values_list("version_id", "state"))
    return Revision.objects.count(), Decision.objects.count(), AuditEvent.objects.count(), heads


# --- Approve -----------------------------------------------------------------------------------


def test_approve_without_javascript_redirects_back_with_a_message(rita, proposal):
    before = Revision.objects.count()
    r = rita.post(
        approve_url(proposal.pk), {"comment": "Same fact", "next": "/review/?kind=consolidation"}
    )
    assert r.status_code == 302, r.content
    assert r["Location"] == "/review/?kind=consolidation"
    assert Revision.objects.count() == before + 1
    proposal.refresh_from_db()
    assert proposal.status == "approved" and proposal.decided_by_label == "rita"
    assert Decision.objects.get().comment == "Same fact"
    page = rita.get(r["Location"])
    assert b"Approved proposal #" in page.content


def test_approve_redirect_never_leaves_the_site(rita, proposal):
    r = rita.post(approve_url(proposal.pk), {"next": "https://evil.example/"})
    assert r.status_code == 302
    assert r["Location"] == f"/review/proposals/{proposal.pk}/"


def test_approve_with_htmx_swaps_the_decision_panel_not_a_redirect(rita, proposal):
    r = rita.post(approve_url(proposal.pk), {"comment": ""}, **panel(proposal.pk))
    assert r.status_code == 200, r.content
    assert "Location" not in r and "HX-Redirect" not in r
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="decision"')
    assert "Approved proposal" in html and "revision" in html
    assert 'id="proposal-status" hx-swap-oob="true"' in html
    assert Revision.objects.filter(proposal_id=proposal.pk).count() == 1


def test_approve_from_the_inbox_row_swaps_only_the_row(rita, proposal):
    r = rita.post(approve_url(proposal.pk), {}, **row(proposal.pk))
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert html.lstrip().startswith(f'<li id="proposal-{proposal.pk}"')
    assert "<html" not in html
    assert "approved" in html and "rita" in html
    assert ">Approve</button>" not in html  # no controls on a decided row


def test_second_reviewer_gets_409_page_naming_who_decided_and_when(rita, ravi, proposal):
    actions.approve_proposal(proposal.pk, actor=_actor("ravi"))
    before = state()
    r = rita.post(approve_url(proposal.pk), {"comment": "me too"})
    assert r.status_code == 409, r.content
    html = r.content.decode()
    assert "Someone decided first" in html
    assert "ravi" in html
    decided_at = Proposal.objects.get(pk=proposal.pk).decided_at
    assert decided_at is not None
    assert decided_at.strftime("%Y-%m-%d %H:%M") in html
    assert state() == before


def test_second_reviewer_with_htmx_sees_the_row_rerendered_with_the_winner(rita, proposal):
    actions.approve_proposal(proposal.pk, actor=_actor("ravi"))
    r = rita.post(approve_url(proposal.pk), {}, **row(proposal.pk))
    assert r.status_code == 409, r.content
    html = r.content.decode()
    assert html.lstrip().startswith(f'<li id="proposal-{proposal.pk}"')
    assert "already approved by ravi" in html
    assert "approved" in html and ">Approve</button>" not in html
    r = rita.post(approve_url(proposal.pk), {}, **panel(proposal.pk))
    assert r.status_code == 409
    assert "by <strong>ravi</strong>" in r.content.decode()


def test_stale_proposal_answers_409_and_says_what_changed(rita, memory, agent, proposal):
    target = proposal.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys moved to 03:00 UTC."
    )
    r = rita.post(approve_url(proposal.pk), {})
    assert r.status_code == 409, r.content
    assert "This proposal went stale" in r.content.decode()
    r = rita.post(approve_url(proposal.pk), {}, **panel(proposal.pk))
    assert r.status_code == 409
    assert "stale" in r.content.decode()


def test_unacknowledged_lost_details_answer_422_with_the_form_again(rita, lossy):
    before = state()
    r = rita.post(approve_url(lossy.pk), {"comment": "fine", "acknowledge": ["02:00"]})
    assert r.status_code == 422, r.content
    html = r.content.decode()
    assert "Acknowledge each lost detail: UTC, deploy.sh." in html
    # The page comes back whole, with what the reviewer typed and ticked kept.
    assert "<html" in html and 'value="02:00" checked' in html and ">fine</textarea>" in html
    assert state() == before
    assert Proposal.objects.get(pk=lossy.pk).status == "pending"


def test_unacknowledged_lost_details_with_htmx_rerender_the_panel_with_errors(rita, lossy):
    r = rita.post(approve_url(lossy.pk), {}, **panel(lossy.pk))
    assert r.status_code == 422, r.content
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="decision"')
    assert "Acknowledge each lost detail: 02:00, UTC, deploy.sh." in html
    assert html.count('name="acknowledge"') == 3


def test_acknowledging_every_lost_detail_approves(rita, lossy):
    r = rita.post(approve_url(lossy.pk), {"acknowledge": ["02:00", "UTC", "deploy.sh"]})
    assert r.status_code == 302, r.content
    assert Decision.objects.get().acknowledged_lost_details == ["02:00", "UTC", "deploy.sh"]


def test_an_unknown_acknowledgement_is_refused(rita, lossy):
    r = rita.post(approve_url(lossy.pk), {"acknowledge": ["02:00", "UTC", "deploy.sh", "bogus"]})
    assert r.status_code == 422
    assert not Decision.objects.exists()


def test_overlong_comment_is_422_not_500(rita, proposal):
    r = rita.post(approve_url(proposal.pk), {"comment": "x" * 2001}, **panel(proposal.pk))
    assert r.status_code == 422
    assert not Decision.objects.exists()


def test_submitter_cannot_approve_through_the_browser(memory):
    from django.contrib.auth.models import Group, User

    from tests.conftest import make_key
    from tests.review_ui.conftest import consolidate

    user = User.objects.create_user("sam", password="pw-sam-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    own = consolidate(memory, make_key("sam-agent", "agent", owner="sam").actor)
    sam = browser_client("sam")
    page = sam.get(f"/review/proposals/{own.pk}/")
    assert page.status_code == 200
    assert b"You submitted this proposal" in page.content
    assert b">Approve</button>" not in page.content
    before = state()
    r = sam.post(approve_url(own.pk), {})
    assert r.status_code == 403
    assert state() == before


def test_two_required_approvals_through_the_browser(rita, ravi, memory, proposal):
    from memory.actions import update_memory_policy

    update_memory_policy(
        memory, actor=_actor("rita"), policy={"approvals_required": {"consolidation": 2}}
    )
    r = rita.post(approve_url(proposal.pk), {}, **panel(proposal.pk))
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert "is recorded (1 of 2)" in html and "1 of 2 required approvals recorded" in html
    assert "You approved this proposal; it waits for another reviewer." in html
    assert ">Approve</button>" not in html
    assert Revision.objects.filter(proposal_id=proposal.pk).count() == 0
    again = rita.post(approve_url(proposal.pk), {})
    assert again.status_code == 409 and b"Already decided" in again.content
    r = ravi.post(approve_url(proposal.pk), {})
    assert r.status_code == 302
    assert Revision.objects.filter(proposal_id=proposal.pk).count() == 1


def test_reviewer_who_approved_with_a_key_sees_no_approve_form_in_the_browser(
    rita, reviewer, memory, proposal
):
    """A key and its owner are one person: after rita's key approved, rita's browser session
    is told she approved, without an Approve form (and a second approval is refused)."""
    from memory.actions import update_memory_policy
    from review import actions as review_actions

    update_memory_policy(
        memory, actor=_actor("rita"), policy={"approvals_required": {"consolidation": 2}}
    )
    result = review_actions.approve_proposal(proposal.pk, actor=reviewer.actor)
    assert result.approvals == 1 and result.revision is None
    html = rita.get(f"/review/proposals/{proposal.pk}/").content.decode()
    assert "You approved this proposal; it waits for another reviewer." in html
    assert ">Approve</button>" not in html
    again = rita.post(approve_url(proposal.pk), {})
    assert again.status_code == 409 and b"Already decided" in again.content


# --- Reject ------------------------------------------------------------------------------------


def test_reject_without_javascript(rita, proposal):
    r = rita.post(reject_url(proposal.pk), {"reason": "wrong", "comment": "Different schedules"})
    assert r.status_code == 302, r.content
    proposal.refresh_from_db()
    assert proposal.status == "rejected" and proposal.rejection_reason == "wrong"
    assert proposal.decision_comment == "Different schedules"
    assert b"Rejected proposal #" in rita.get(r["Location"]).content


def test_reject_needs_a_reason_and_a_comment(rita, proposal):
    before = state()
    r = rita.post(reject_url(proposal.pk), {"reason": "", "comment": ""})
    assert r.status_code == 422, r.content
    assert r.content.count(b"This field is required.") == 2
    r = rita.post(reject_url(proposal.pk), {"reason": "wrong", "comment": ""}, **row(proposal.pk))
    assert r.status_code == 422
    html = r.content.decode()
    assert html.lstrip().startswith(f'<li id="proposal-{proposal.pk}"')
    assert '<details class="reject" open>' in html and 'value="wrong" selected' in html
    assert state() == before


def test_reject_with_htmx_updates_the_row(rita, proposal):
    r = rita.post(
        reject_url(proposal.pk),
        {"reason": "insufficient_evidence", "comment": "Cite it"},
        **row(proposal.pk),
    )
    assert r.status_code == 200, r.content
    assert "rejected" in r.content.decode() and "Rejected proposal" in r.content.decode()


def test_reject_after_someone_approved_is_409(rita, proposal):
    actions.approve_proposal(proposal.pk, actor=_actor("ravi"))
    r = rita.post(reject_url(proposal.pk), {"reason": "wrong", "comment": "no"})
    assert r.status_code == 409
    assert b"ravi" in r.content


# --- Compensate --------------------------------------------------------------------------------


def _approved(pk: int) -> MaintenanceOperation:
    return actions.approve_proposal(pk, actor=_actor("ravi")).operation  # type: ignore[return-value]


def test_compensate_without_javascript(rita, proposal):
    op = _approved(proposal.pk)
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "Merged too eagerly"})
    assert r.status_code == 302, r.content
    assert r["Location"] == f"/operations/{op.pk}/"
    assert Compensation.objects.get().comment == "Merged too eagerly"
    page = rita.get(r["Location"]).content.decode()
    assert "compensated" in page and "Operation #" in page
    # The inbox row names the approval (its time is the approval's) and what became of it.
    row = rita.get("/review/?status=compensated").content.decode()
    assert "Approved by <strong>" in row and "UTC</time>, then compensated" in row


def test_compensate_needs_a_reason(rita, proposal):
    op = _approved(proposal.pk)
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": ""})
    assert r.status_code == 422
    assert not Compensation.objects.exists()


def test_compensate_with_htmx_swaps_the_panel(rita, proposal):
    op = _approved(proposal.pk)
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "undo"}, **HTMX)
    assert r.status_code == 200, r.content
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="compensation"') and "restored" in html


def test_compensating_twice_is_409_naming_who_did(rita, ravi, proposal):
    op = _approved(proposal.pk)
    actions.compensate_operation(op.pk, actor=_actor("ravi"), comment="undo")
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "undo"})
    assert r.status_code == 409
    assert b"ravi" in r.content
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "undo"}, **HTMX)
    assert r.status_code == 409
    assert b"by <strong>ravi</strong>" in r.content


def test_compensation_conflict_lists_what_moved(rita, memory, agent, proposal):
    op = _approved(proposal.pk)
    target = op.pre_state[0]["entry_id"]
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys now run at 04:00 UTC."
    )
    page = rita.get(f"/operations/{op.pk}/").content.decode()
    assert "changed again after this operation" in page
    before = state()
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "undo"}, **HTMX)
    assert r.status_code == 409, r.content
    html = r.content.decode()
    assert target in html and "the operation left it at v2 active, it is now v3 active" in html
    r = rita.post(f"/operations/{op.pk}/compensate/", {"comment": "undo"})
    assert r.status_code == 409 and target.encode() in r.content
    assert state() == before


def test_operation_page_shows_pre_state_produced_impact_plan_and_links(rita, proposal):
    op = _approved(proposal.pk)
    html = rita.get(f"/operations/{op.pk}/").content.decode()
    a, b = (t["entry_id"] for t in op.pre_state)
    assert f'href="/memories/acme/entries/{a}/"' in html
    assert f'href="/memories/acme/entries/{b}/"' in html
    assert f'href="/memories/acme/revisions/{op.revision_number}/"' in html
    assert "consolidated_into" in html and "Leaves current recall" in html
    assert "Compensation plan" in html and "Cannot be undone" in html
    # The consolidation's own lasting effect, naming its entries, and the recall note.
    assert "current recall and Context Packs return" in html
    assert f"in place of {b}" in html or f"in place of {a}" in html
    assert "policy.recall_events is off" in html
    assert re.search(r"<button[^>]*>Compensate</button>", html)
    assert 'for="compensate-comment">Reason for undoing it (required)<' in html


# --- Who may --------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["ada", "nobody"])
def test_auditors_and_users_without_a_role_cannot_decide(request, who, proposal, lossy):
    client = request.getfixturevalue(who)
    op = _approved(proposal.pk)
    before = state()
    for url, data in [
        (approve_url(lossy.pk), {"acknowledge": ["02:00", "UTC", "deploy.sh"]}),
        (reject_url(lossy.pk), {"reason": "wrong", "comment": "no"}),
        (f"/operations/{op.pk}/compensate/", {"comment": "undo"}),
        ("/review/claim/", {}),
    ]:
        assert client.post(url, data).status_code == 403, url
        assert client.post(url, data, **HTMX).status_code == 403, url
    assert state() == before


def test_auditor_reads_pages_without_decision_controls(ada, proposal):
    op_proposal = proposal
    for url in ("/review/", f"/review/proposals/{op_proposal.pk}/"):
        r = ada.get(url)
        assert r.status_code == 200
        assert b">Approve</button>" not in r.content and b">Reject</button>" not in r.content
        assert b"Read-only" in r.content
    op = _approved(proposal.pk)
    r = ada.get(f"/operations/{op.pk}/")
    assert r.status_code == 200 and b">Compensate</button>" not in r.content


def test_users_without_a_role_are_refused_every_page(nobody, proposal):
    op = _approved(proposal.pk)
    for url in (
        "/review/",
        "/review/new/",
        f"/review/proposals/{proposal.pk}/",
        f"/operations/{op.pk}/",
    ):
        assert nobody.get(url).status_code == 403, url
        assert nobody.get(url, **HTMX).status_code == 403, url


def test_anonymous_visitors_are_sent_to_log_in(client, proposal):
    for url in ("/review/", "/review/new/", f"/review/proposals/{proposal.pk}/"):
        r = client.get(url)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/?next="), url
    r = client.post(
        approve_url(proposal.pk),
        {},
        **HTMX,
        HTTP_HX_CURRENT_URL=f"http://testserver/review/proposals/{proposal.pk}/",
    )
    # An htmx post gets a 401 naming the login page: the page says so in place and keeps
    # what was typed (static/js/htmx-errors.js), instead of leaving for the login page.
    assert r.status_code == 401 and r["X-Steward-Login"].startswith(
        "/accounts/login/?next=/review/proposals/"
    )
    assert Proposal.objects.get(pk=proposal.pk).status == "pending"


def test_unknown_proposal_or_operation_is_404(rita):
    assert rita.get("/review/proposals/999999/").status_code == 404
    assert rita.post(approve_url(999999), {}).status_code == 404
    assert rita.get("/operations/999999/").status_code == 404
    assert rita.post("/operations/999999/compensate/", {"comment": "undo"}).status_code == 404


# --- CSRF ------------------------------------------------------------------------------------


def test_csrf_is_enforced_on_every_form(reviewer, proposal):
    client = browser_client("rita", enforce_csrf_checks=True)
    before = state()
    for url, data in [
        (approve_url(proposal.pk), {}),
        (reject_url(proposal.pk), {"reason": "wrong", "comment": "no"}),
        ("/review/claim/", {}),
        ("/review/claim/release/", {}),
    ]:
        assert client.post(url, data).status_code == 403, url
        assert client.post(url, data, **HTMX).status_code == 403, url
    assert state() == before
    # With the token the page hands out (form field or the hx-headers header), it works.
    page = client.get(f"/review/proposals/{proposal.pk}/").content.decode()
    token = found(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    header = found(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page)
    r = client.post(approve_url(proposal.pk), {}, **panel(proposal.pk), HTTP_X_CSRFTOKEN=header)
    assert r.status_code == 200, r.content
    op_pk = MaintenanceOperation.objects.get().pk
    assert client.post(f"/operations/{op_pk}/compensate/", {"comment": "undo"}).status_code == 403
    r = client.post(
        f"/operations/{op_pk}/compensate/", {"csrfmiddlewaretoken": token, "comment": "undo"}
    )
    assert r.status_code == 302


def found(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    assert m is not None, pattern
    return m.group(1)


def _actor(username: str):
    from django.contrib.auth.models import User

    from memory.actors import Actor

    return Actor.for_user(User.objects.get(username=username))


@pytest.fixture(autouse=True)
def _cast(reviewer, other_reviewer) -> None:
    """rita and ravi exist in every test here."""


def test_the_operation_page_finds_entries_by_memory_and_id(rita, proposal):
    """Every statement that looks an entry up by its id also names its Memory: ``(memory, uid)``
    is the entry's unique key, a uid alone is not indexed (in a Memory of a million entries the
    page read the whole entry table)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    op = _approved(proposal.pk)
    with CaptureQueriesContext(connection) as queries:
        assert rita.get(f"/operations/{op.pk}/").status_code == 200
    by_uid = [q["sql"] for q in queries if '"memory_entry"."uid" IN' in q["sql"]]
    assert by_uid
    assert all('"memory_entry"."memory_id" =' in sql for sql in by_uid), by_uid


def test_a_compensated_revisions_page_says_it_was_undone_and_by_which_revision(
    rita, ravi, proposal, memory
):
    op = _approved(proposal.pk)
    undone = Revision.objects.get(memory=memory, operation_id=op.pk)
    page = rita.get(f"/memories/acme/revisions/{undone.number}/").content.decode()
    assert 'id="undone"' not in page
    result = actions.compensate_operation(op.pk, actor=_actor("ravi"), comment="undo")
    by = result.revision.number
    page = rita.get(f"/memories/acme/revisions/{undone.number}/").content.decode()
    assert 'id="undone"' in page and f'Undone by <a href="/memories/acme/revisions/{by}/">' in page
    # The compensating revision is not "undone" itself.
    page = rita.get(f"/memories/acme/revisions/{by}/").content.decode()
    assert 'id="undone"' not in page and f"This revision undoes operation {op.pk}." in page
