"""Small things the review pages say: "just now" rather than "0 minutes ago", why a proposal
was rejected, a stale proposal said once with a next step (and no "pass" for a head check that
no longer holds), a supersession's unchanged head read as such, entry text on the operation
page, distinct labels, and the skip link."""

from __future__ import annotations

import re

import pytest

from proposals.requests import submit_request
from review import actions
from tests.review_ui.conftest import add, consolidate

pytestmark = pytest.mark.django_db


def get(client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.content
    return r.content.decode()


def make_stale(memory, agent, p) -> str:
    from memory import actions as memory_actions

    target = p.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys moved to 03:00 UTC."
    )
    return str(target)


def test_a_fresh_proposal_reads_just_now(rita, proposal):
    for html in (get(rita, "/review/"), get(rita, f"/review/proposals/{proposal.pk}/")):
        assert "just now" in html
        assert "0 minutes" not in html


def test_rejected_rows_show_the_reason_in_the_inbox_and_on_the_dashboard(rita, reviewer, proposal):
    actions.reject_proposal(
        proposal.pk, actor=reviewer.actor, reason="wrong", comment="Not the same schedule"
    )
    inbox = get(rita, "/review/?status=rejected")
    assert "Reason: <strong>Wrong</strong>" in inbox and "Not the same schedule" in inbox
    assert "Reason: Wrong" in get(rita, "/")


def test_a_stale_proposal_says_stale_once_fails_the_head_check_and_offers_a_next_step(
    rita, memory, agent, proposal
):
    target = make_stale(memory, agent, proposal)
    html = get(rita, f"/review/proposals/{proposal.pk}/")
    main = html.split('<main id="main">')[1]
    # The "Close as stale" form names the action; the page says what happened once.
    main = re.sub(r'<form[^>]*class="close-stale-form".*?</form>', "", main, flags=re.S)
    assert len(re.findall(r"\bstale\b", re.sub(r"<[^>]+>", " ", main), re.I)) == 1, main
    assert "Every referenced version is its entry&#x27;s head" not in html
    assert f"No longer true: {target} changed since it was proposed" in html
    assert '<span class="badge check fail">fail</span>' in html
    assert "<h3>Next step</h3>" in html and "If the change is still wanted, rebase it" in html
    assert "Close as stale" in html


def test_a_stale_row_in_the_inbox_has_one_stale_badge(rita, memory, agent, proposal):
    make_stale(memory, agent, proposal)
    row = get(rita, "/review/?status=stale").split(f'<li id="proposal-{proposal.pk}"')[1]
    row = row.split("</li>\n")[0]
    assert len(re.findall(r">stale<", row)) == 1, row


def test_a_supersession_operation_reads_unchanged_and_superseded_with_entry_text(
    rita, memory, agent, reviewer
):
    old = add(memory, agent.actor, "Logs are kept 14 days in Loki.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "supersession",
            "rationale": "Moved to OpenSearch",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "Logs are kept 30 days in OpenSearch.", "kind": "fact"},
        },
    ).proposal
    op = actions.approve_proposal(
        p.pk,
        actor=reviewer.actor,
        comment="",
        acknowledge_lost_details=actions.lost_detail_names(p),
    ).operation
    assert op is not None
    html = get(rita, f"/operations/{op.pk}/")
    pre = html.split('id="pre-state"')[1].split("</section>")[0]
    assert "unchanged · superseded by e_" in pre
    assert "Logs are kept 14 days in Loki." in pre
    assert "v1 active</td>\n        <td" not in pre.split('data-label="After the operation"')[1]
    relations = html.split('class="relations"')[1].split("</ul>")[0]
    assert "Logs are kept 30 days in OpenSearch." in relations
    assert "puts each affected entry back to its state before this approval" in html


def test_inbox_comment_fields_have_distinct_labels(rita, proposal):
    html = get(rita, "/review/")
    labels = re.findall(r"<label[^>]*>([^<]+)</label>", html)
    assert "Comment" not in [label.strip() for label in labels]
    assert "Rejection comment" in [label.strip() for label in labels]


def test_every_page_starts_with_a_skip_link(rita, proposal):
    html = get(rita, "/review/")
    body = html.split("<body", 1)[1]
    assert body.index('class="skip-link" href="#main"') < body.index("<header")
    assert '<main id="main">' in html


def test_the_dashboard_reads_just_now_for_a_fresh_decision(rita, reviewer, memory, agent):
    p = consolidate(memory, agent.actor)
    actions.approve_proposal(p.pk, actor=reviewer.actor, comment="")
    html = get(rita, "/")
    assert "0 minutes" not in html


def test_a_supersession_revision_says_the_old_head_is_unchanged(rita, memory, agent, reviewer):
    old = add(memory, agent.actor, "Logs are kept 14 days in Loki.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "supersession",
            "rationale": "Moved to OpenSearch",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "Logs are kept 30 days in OpenSearch.", "kind": "fact"},
        },
    ).proposal
    revision = actions.approve_proposal(
        p.pk,
        actor=reviewer.actor,
        comment="",
        acknowledge_lost_details=actions.lost_detail_names(p),
    ).revision
    assert revision is not None
    html = get(rita, f"/memories/{memory.slug}/revisions/{revision.number}/")
    assert "v1 active → v1 active" not in html
    assert "v1 active, version and state unchanged" in html


def test_a_stale_proposal_is_closed_from_its_page_without_javascript(rita, memory, agent, proposal):
    make_stale(memory, agent, proposal)
    html = get(rita, f"/review/proposals/{proposal.pk}/")
    assert "Close as stale" in html and 'name="reason" value="other"' in html
    r = rita.post(
        f"/review/proposals/{proposal.pk}/reject/",
        {"reason": "other", "comment": "Closed as stale: the target moved on."},
    )
    assert r.status_code == 302, r.content
    proposal.refresh_from_db()
    assert proposal.status == "rejected" and proposal.rejection_reason == "other"
    assert "Close as stale" not in get(rita, f"/review/proposals/{proposal.pk}/")
