"""The proposal page's discussion: the thread (comments, verdicts, amendments), the comment
form, Request changes, a reviewer's "Edit proposed text" and what it means for who approves —
with and without htmx — and, in Chromium, the keyboard confirmation and the whole loop on a
phone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from memory.actors import Actor
from memory.models import Revision
from proposals.actions.discussion import add_comment
from proposals.models import Proposal, ProposalAmendment, ProposalComment, ProposalStatus
from proposals.requests import submit_request
from review.models import Decision
from tests.review_ui.conftest import add, consolidate, login

pytestmark = pytest.mark.django_db

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def url(pk: int, action: str = "") -> str:
    return f"/review/proposals/{pk}/{action + '/' if action else ''}"


def user_actor(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def html_of(client: Any, pk: int) -> str:
    r = client.get(url(pk))
    assert r.status_code == 200, r.content
    return r.content.decode()


def fresh(p: Proposal) -> Proposal:
    return Proposal.objects.get(pk=p.pk)


def supersession(memory: Any, actor: Any) -> Proposal:
    old = add(memory, actor, "Logs are kept for 14 days in Loki")
    return submit_request(
        actor=actor,
        data={
            "memory": memory.slug,
            "kind": "supersession",
            "rationale": "Logs moved to OpenSearch",
            "old": {"entry_id": old, "version": 1},
            "successor": {
                "body": "Logs are kept for 30 days in OpenSearch",
                "kind": "fact",
                "evidence": [{"source": "repo", "ref": "infra/logging.tf"}],
            },
        },
    ).proposal


# --- The thread --------------------------------------------------------------------------------


def test_thread_shows_comments_and_verdicts_oldest_first_to_reviewer_and_auditor(
    rita, ada, memory, agent, proposal
):
    add_comment(proposal, actor=agent.actor, body="Merged the two deploy notes.")
    add_comment(fresh(proposal), actor=user_actor("rita"), body="Is deploy.sh still current?")
    for client in (rita, ada):
        html = html_of(client, proposal.pk)
        thread = html[html.index('<section id="thread"') :]
        thread = thread[: thread.index("</section>")]
        assert "Discussion" in thread
        first, second = (
            thread.index("Merged the two deploy notes."),
            thread.index("deploy.sh still"),
        )
        assert first < second, "oldest first"
        assert "<strong>agent-1</strong> commented" in thread
        assert "<strong>rita</strong> commented" in thread
        assert thread.count("on revision 1") == 2
        assert re.search(r'<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>', thread)


def test_auditor_sees_no_form_and_no_shortcuts(ada, memory, agent, proposal):
    html = html_of(ada, proposal.pk)
    main = html.split('<main id="main">', 1)[1].split("</main>", 1)[0]
    assert 'method="post"' not in main
    for absent in (
        'name="body"',
        "Request changes",
        "Edit proposed text",
        ">Approve</button>",
        "Keyboard shortcuts",
        'id="shortcut-confirm"',
    ):
        assert absent not in html, absent
    assert "Read-only: auditors cannot decide." in html


def test_reviewer_gets_the_shortcut_help_only_once_javascript_runs(rita, proposal):
    html = html_of(rita, proposal.pk)
    assert '<span class="shortcut-tools" data-shortcut-tools hidden>' in html
    assert 'id="shortcut-confirm"' in html


def test_auditor_posts_are_refused(ada, memory, agent, proposal):
    before = (ProposalComment.objects.count(), Decision.objects.count())
    for action, data in (
        ("comment", {"body": "hello"}),
        ("request-changes", {"comment": "change it"}),
        ("amend", {"text": "Something else entirely", "note": ""}),
    ):
        r = ada.post(url(proposal.pk, action), data)
        assert r.status_code == 403, (action, r.status_code)
        r = ada.post(url(proposal.pk, action), data, **HTMX)
        assert r.status_code == 403, (action, r.status_code)
    assert (ProposalComment.objects.count(), Decision.objects.count()) == before
    assert fresh(proposal).revision == 1 and fresh(proposal).status == ProposalStatus.PENDING


# --- Comments ----------------------------------------------------------------------------------


def test_comment_without_javascript_redirects_back_to_the_thread(rita, proposal):
    r = rita.post(url(proposal.pk, "comment"), {"body": "Looks right to me."})
    assert r.status_code == 302
    assert r["Location"] == f"{url(proposal.pk)}#thread"
    html = rita.get(r["Location"]).content.decode()
    assert f"Comment added to proposal #{proposal.pk}." in html
    assert "Looks right to me." in html
    comment = ProposalComment.objects.get()
    assert comment.author_label == "rita" and comment.proposal_revision == 1


def test_comment_with_htmx_swaps_only_the_thread(rita, proposal):
    r = rita.post(
        url(proposal.pk, "comment"),
        {"body": "<script>alert(1)</script> fine"},
        **HTMX,
        HTTP_HX_TARGET="thread",
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="thread"')
    assert "<!doctype" not in html and 'id="decision"' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; fine" in html
    assert 'name="body"' in html and "fine</textarea>" not in html, "the form is empty again"


def test_an_empty_comment_is_422_with_the_form_error(rita, proposal):
    r = rita.post(url(proposal.pk, "comment"), {"body": ""}, **HTMX, HTTP_HX_TARGET="thread")
    assert r.status_code == 422
    html = r.content.decode()
    assert 'class="notice error"' in html and "This field is required." in html
    r = rita.post(url(proposal.pk, "comment"), {"body": ""})
    assert r.status_code == 422 and b"<!doctype html>" in r.content
    assert b"This field is required." in r.content
    assert ProposalComment.objects.count() == 0


# --- Request changes ---------------------------------------------------------------------------


def test_request_changes_needs_a_comment(rita, proposal):
    r = rita.post(url(proposal.pk, "request-changes"), {"comment": ""})
    assert r.status_code == 422
    assert b"This field is required." in r.content
    assert b'<details class="changes" open>' in r.content
    assert fresh(proposal).status == ProposalStatus.PENDING


def test_request_changes_then_the_page_offers_the_next_step(rita, ravi, proposal):
    r = rita.post(url(proposal.pk, "request-changes"), {"comment": "Name the runbook too."})
    assert r.status_code == 302
    assert fresh(proposal).status == ProposalStatus.CHANGES_REQUESTED
    for client in (rita, ravi):
        html = html_of(client, proposal.pk)
        assert (
            'id="proposal-status" class="badge status status-changes_requested">changes requested<'
            in html
        )
        assert "Name the runbook too." in html
        assert "Next step" in html and f"POST /api/v1/proposals/{proposal.pk}/amend" in html
        assert "Edit proposed text" in html and '<details class="amend" open>' in html
        assert ">Approve</button>" not in html
        assert ">Reject</button>" in html  # it can still be rejected while waiting
    thread = html[html.index('<section id="thread"') :]
    assert "changes requested</span> by <strong>rita</strong>" in thread


def test_request_changes_with_htmx_swaps_the_panel_and_the_status(rita, proposal):
    r = rita.post(
        url(proposal.pk, "request-changes"),
        {"comment": "Say which script."},
        **HTMX,
        HTTP_HX_TARGET="decision",
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="decision"')
    assert "Requested changes on proposal" in html
    assert 'id="proposal-status" hx-swap-oob="true"' in html and ">changes requested<" in html
    assert (
        '<section id="thread" class="card thread" aria-labelledby="thread-title" hx-swap-oob="true">'
        in html
    )
    assert "Say which script." in html


def test_self_cannot_request_changes(memory):
    from django.contrib.auth.models import Group

    from tests.conftest import make_key
    from tests.review_ui.conftest import browser_client

    user = User.objects.create_user("sam", password="pw-sam-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    own = consolidate(memory, make_key("sam-agent", "agent", owner="sam").actor)
    sam = browser_client("sam")
    assert "Request changes" not in html_of(sam, own.pk)
    r = sam.post(url(own.pk, "request-changes"), {"comment": "hmm"})
    assert r.status_code == 403
    assert b'role="alert"' in r.content
    assert fresh(own).status == ProposalStatus.PENDING


# --- Edit proposed text ------------------------------------------------------------------------


def test_the_edit_form_is_prefilled_with_the_proposed_text(rita, proposal):
    html = html_of(rita, proposal.pk)
    body = proposal.payload["body"]
    assert f'<textarea id="amend-text" name="text" rows="6" required>{body}</textarea>' in html
    assert '<label for="amend-text">Proposed merged text</label>' in html
    assert '<label for="amend-note">Note on this edit</label>' in html


def test_every_field_on_the_page_has_its_own_label(rita, lossy):
    html = html_of(rita, lossy.pk)
    labels = re.findall(r'<label for="[^"]+">([^<]+)</label>', html)
    assert labels and len(labels) == len(set(labels)), labels
    assert "Comment" not in labels


def test_reviewer_amends_then_counts_as_self_and_another_reviewer_approves(
    rita, ravi, memory, agent, proposal
):
    old = proposal.payload["body"]
    new = old + " and documented in the runbook"
    rita.post(url(proposal.pk, "request-changes"), {"comment": "Mention the runbook."})
    r = rita.post(url(proposal.pk, "amend"), {"text": new, "note": "Added the runbook."})
    assert r.status_code == 302 and r["Location"] == url(proposal.pk)
    p = fresh(proposal)
    assert p.revision == 2 and p.status == ProposalStatus.PENDING
    assert p.payload["body"] == new
    assert ProposalAmendment.objects.get().author_label == "rita"

    html = rita.get(r["Location"]).content.decode()
    assert f"Amended proposal #{p.pk}: revision 2 is pending." in html
    assert "revision 2" in html
    thread = html[html.index('<section id="thread"') :]
    assert "Amended by <strong>rita</strong>" in thread
    assert "Added the runbook." in thread
    assert "<ins> and documented in the runbook</ins>" in thread
    assert "Proposed merged text, revision 1 → 2" in thread
    # rita edited it: no Approve, and the page says why.
    assert ">Approve</button>" not in html
    assert "You edited the proposed text (revision 2), so you count as its author" in html
    assert "Request changes" not in html.split('id="decision"', 1)[1].split("</section>", 1)[0]

    # ravi can approve revision 2; the revision writes the amended text.
    assert ">Approve</button>" in html_of(ravi, p.pk)
    r = ravi.post(url(p.pk, "approve"), {})
    assert r.status_code == 302
    p = fresh(p)
    assert p.status == ProposalStatus.APPROVED
    revision = Revision.objects.get(proposal_id=p.pk)
    assert revision.changes.filter(to_version__body=new).exists()
    assert Decision.objects.get(verdict="approve").proposal_revision == 2


def test_editing_gives_up_the_editors_claim_so_another_reviewer_can_claim_it(rita, ravi, proposal):
    r = rita.post("/review/claim/", {})
    assert r["Location"] == url(proposal.pk)
    assert "You hold this proposal" in html_of(rita, proposal.pk)
    new = proposal.payload["body"] + " (edited)"
    r = rita.post(url(proposal.pk, "amend"), {"text": new, "note": ""})
    assert r.status_code == 302
    # rita can no longer decide it: she holds no lease on it, and "Claim next" hands it to ravi.
    assert "You hold this proposal" not in html_of(rita, proposal.pk)
    assert ravi.post("/review/claim/", {})["Location"] == url(proposal.pk)


def test_an_unchanged_edit_is_422_in_the_form(rita, proposal):
    r = rita.post(url(proposal.pk, "amend"), {"text": proposal.payload["body"], "note": ""})
    assert r.status_code == 422
    html = r.content.decode()
    amend = html[html.index('<section id="amend"') :]
    amend = amend[: amend.index("</section>")]
    assert 'class="notice error"' in amend and "The amendment changes nothing." in amend
    assert '<details class="amend" open>' in amend
    assert fresh(proposal).revision == 1


def test_an_empty_edit_is_422(rita, proposal):
    r = rita.post(url(proposal.pk, "amend"), {"text": "", "note": ""})
    assert r.status_code == 422 and b"This field is required." in r.content
    assert fresh(proposal).revision == 1


def test_amending_a_decided_proposal_is_409(rita, ravi, proposal):
    ravi.post(url(proposal.pk, "approve"), {})
    r = rita.post(url(proposal.pk, "amend"), {"text": "Anything new", "note": ""})
    assert r.status_code == 409
    assert b'class="notice conflict"' in r.content
    assert "Edit proposed text" not in html_of(rita, proposal.pk)


def test_a_new_successor_is_edited_as_the_successor_text(rita, memory, agent):
    p = supersession(memory, agent.actor)
    html = html_of(rita, p.pk)
    assert '<label for="amend-text">Proposed successor text</label>' in html
    new = "Logs are kept for 30 days in OpenSearch (cluster logs-prod)"
    r = rita.post(url(p.pk, "amend"), {"text": new, "note": "Named the cluster."})
    assert r.status_code == 302, r.content
    p = fresh(p)
    assert p.revision == 2 and p.payload["successor"]["body"] == new
    assert p.payload["successor"]["kind"] == "fact"
    html = html_of(rita, p.pk)
    assert "<ins> (cluster logs-prod)</ins>" in html
    assert "Proposed successor text, revision 1 → 2" in html


def test_kinds_without_proposed_text_have_no_edit_form(rita, memory, agent):
    uid = add(memory, agent.actor, "A stale note nobody reads")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": uid, "version": 1}],
        },
    ).proposal
    html = html_of(rita, p.pk)
    assert '<section id="amend" class="card amend" hidden>' in html
    assert "Edit proposed text" not in html
    r = rita.post(url(p.pk, "amend"), {"text": "x", "note": ""})
    assert r.status_code == 422 and b"no proposed text to edit" in r.content


# --- In Chromium -------------------------------------------------------------------------------

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_keyboard_approval_asks_first_enter_confirms_and_esc_cancels(page, memory, agent, reviewer):
    first = consolidate(memory, agent.actor)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    assert page.get_by_role("checkbox", name="Keyboard shortcuts").is_visible()
    confirm = page.locator("#shortcut-confirm")
    page.keyboard.press("j")
    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    what = confirm.locator("[data-confirm-what]")
    assert what.inner_text() == f"Approve proposal #{first.pk} — consolidation?"
    page.wait_for_timeout(300)
    assert fresh(first).status == ProposalStatus.PENDING, "a alone must not approve"
    page.keyboard.press("Escape")
    confirm.wait_for(state="hidden")
    page.wait_for_timeout(300)
    assert fresh(first).status == ProposalStatus.PENDING, "Esc cancels"

    # Esc also closes the reject form, even while typing in it.
    page.keyboard.press("r")
    row = page.locator(f"#proposal-{first.pk}")
    assert row.locator("details.reject").get_attribute("open") is not None
    row.get_by_label("Comment").type("a j a")
    page.keyboard.press("Escape")
    assert row.locator("details.reject").get_attribute("open") is None
    assert not confirm.is_visible()

    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    page.keyboard.press("Enter")
    row = page.locator(f"#proposal-{first.pk}")
    row.locator(".notice.success").wait_for()
    assert fresh(first).status == ProposalStatus.APPROVED

    # The proposal page asks too.
    second = consolidate(memory, agent.actor)
    page.goto(url(second.pk))
    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    assert what.inner_text() == f"Approve proposal #{second.pk} (Consolidation, revision 1)?"
    page.keyboard.press("Escape")
    confirm.wait_for(state="hidden")
    page.keyboard.press("r")
    assert page.locator("#decision details.reject").get_attribute("open") is not None
    page.keyboard.press("Escape")
    assert page.locator("#decision details.reject").get_attribute("open") is None
    page.keyboard.press("a")
    confirm.wait_for(state="visible")
    page.keyboard.press("Enter")
    page.locator("#decision .notice.success").wait_for()
    assert page.locator("#proposal-status").inner_text().strip() == "approved"
    assert fresh(second).status == ProposalStatus.APPROVED


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_request_changes_amend_and_approve_on_a_phone(
    browser, page, live_server, memory, agent, reviewer, other_reviewer
):
    p = consolidate(memory, agent.actor)
    page.set_viewport_size({"width": 390, "height": 844})
    login(page, "rita", "pw-rita-123", next_path=url(p.pk))
    assert page.evaluate(NO_OVERFLOW), "overflow on the pending page"

    decision = page.locator("#decision")
    decision.get_by_text("Request changes…").click()
    decision.get_by_label("What should change").fill("Say where the script lives.")
    decision.get_by_role("button", name="Request changes").click()
    page.locator("#decision .notice.success").wait_for()
    assert page.locator("#proposal-status").inner_text().strip() == "changes requested"
    assert "Say where the script lives." in page.locator("#thread").inner_text()
    assert page.evaluate(NO_OVERFLOW), "overflow with changes requested"

    page.locator("#decision").get_by_role("link", name="Edit proposed text").click()
    text = page.get_by_label("Proposed merged text")
    assert text.input_value() == p.payload["body"]
    text.fill(p.payload["body"] + " (scripts/deploy.sh in the infra repository)")
    page.get_by_label("Note on this edit").fill("Where the script lives.")
    page.get_by_role("button", name="Save as revision 2").click()
    page.wait_for_url(f"**{url(p.pk)}")
    assert "Amended proposal" in page.inner_text(".messages")
    thread = page.locator("#thread")
    assert "Amended by rita" in thread.inner_text()
    assert "in the infra repository" in thread.locator("ins").first.inner_text()
    assert "you count as its author" in page.locator("#decision").inner_text()
    assert page.locator("#decision").get_by_role("button", name="Approve").count() == 0
    assert page.evaluate(NO_OVERFLOW), "overflow after the amendment"

    phone = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    other = phone.new_page()
    login(other, "ravi", "pw-ravi-123", next_path=url(p.pk))
    assert other.evaluate(NO_OVERFLOW)
    other.locator("#decision").get_by_role("button", name="Approve", exact=True).click()
    other.locator("#decision .notice.success").wait_for()
    assert other.locator("#proposal-status").inner_text().strip() == "approved"
    assert other.evaluate(NO_OVERFLOW)
    phone.close()
    assert fresh(p).status == ProposalStatus.APPROVED and fresh(p).revision == 2
