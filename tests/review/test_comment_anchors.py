"""Comments anchored to a passage of the proposed text, as in a code review: ``anchor: {quote}``
or ``{start, end}`` on ``POST …/comments``; the passage is checked against the text and stored
with its offsets."""

from __future__ import annotations

import pytest

from proposals.models import ProposalComment

pytestmark = pytest.mark.django_db(transaction=True)

BODY = "Deploys run nightly at 02:00 UTC via deploy.sh"


def comment(client, pid, **body):
    return client.post(f"/api/v1/proposals/{pid}/comments", body)


def test_a_quote_is_found_in_the_proposed_text_and_stored_with_its_offsets(rv, consolidation):
    pid = consolidation["proposal"]["id"]
    r = comment(rv, pid, body="Is it still deploy.sh?", anchor={"quote": "via deploy.sh"})
    assert r.status_code == 201, r.text
    start = BODY.index("via deploy.sh")
    assert r.json()["anchor"] == {"quote": "via deploy.sh", "start": start, "end": len(BODY)}
    thread = rv.get(f"/api/v1/proposals/{pid}").json()["comments"]
    assert thread[-1]["anchor"]["quote"] == "via deploy.sh"


def test_offsets_name_the_passage_and_a_quote_with_them_must_match(rv, ag, consolidation):
    pid = consolidation["proposal"]["id"]
    ok = comment(ag, pid, body="The time", anchor={"start": 23, "end": 28})
    assert ok.status_code == 201, ok.text
    assert ok.json()["anchor"]["quote"] == "02:00"
    wrong = comment(rv, pid, body="x", anchor={"start": 23, "end": 28, "quote": "03:00"})
    assert wrong.status_code == 400, wrong.text
    assert "anchor.quote" in wrong.json()["error"]["details"]


@pytest.mark.parametrize(
    "anchor",
    [
        {"quote": "hourly"},
        {"start": 5, "end": 500},
        {"start": 9, "end": 3},
        {},
        {"quote": "x", "line": 3},
    ],
)
def test_an_anchor_outside_the_text_is_refused_and_nothing_is_written(rv, consolidation, anchor):
    pid = consolidation["proposal"]["id"]
    r = comment(rv, pid, body="About this", anchor=anchor)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid"
    assert not ProposalComment.objects.filter(proposal_id=pid).exists()


def test_a_comment_without_an_anchor_is_about_the_whole_proposal(rv, consolidation):
    r = comment(rv, consolidation["proposal"]["id"], body="Looks right")
    assert r.status_code == 201, r.text
    assert r.json()["anchor"] is None
