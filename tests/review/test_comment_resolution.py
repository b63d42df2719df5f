"""Comments are resolved as in a code review: ``POST …/comments/{comment_id}/resolve`` (the
comment's author or a reviewer) or a reply with ``resolves``. A resolution is a record of its
own, written once; the comment row never changes."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from memory.models import AuditEvent
from proposals.models import CommentResolution, ProposalComment

pytestmark = pytest.mark.django_db(transaction=True)

P = "/api/v1/proposals"


def comment(client, pid, **body):
    r = client.post(f"{P}/{pid}/comments", body)
    assert r.status_code == 201, r.text
    return r.json()


def resolve(client, pid, cid):
    return client.post(f"{P}/{pid}/comments/{cid}/resolve", {})


def test_a_reviewer_resolves_a_comment_and_the_thread_says_who_and_when(
    api, rv, ag, auditor, consolidation
):
    pid = consolidation["proposal"]["id"]
    asked = comment(ag, pid, body="Is 02:00 still right?")
    assert asked["resolved_by"] is None and asked["resolved_at"] is None
    row = ProposalComment.objects.values().get(pk=asked["id"])

    r = resolve(rv, pid, asked["id"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == asked["id"] and body["body"] == "Is 02:00 still right?"
    assert body["resolved_by"] == "rita-key" and body["resolved_at"]
    # The comment row is untouched; the resolution is its own record.
    assert ProposalComment.objects.values().get(pk=asked["id"]) == row
    resolution = CommentResolution.objects.get(comment_id=asked["id"])
    assert (resolution.author_label, resolution.proposal_revision) == ("rita-key", 1)
    [event] = AuditEvent.objects.filter(action="proposal.comment_resolved", proposal_id=pid)
    assert event.payload == {"comment": asked["id"], "revision": 1}

    # Every reader sees it in the proposal's thread.
    thread = api.as_(auditor).get(f"{P}/{pid}").json()["comments"]
    [seen] = [c for c in thread if c["id"] == asked["id"]]
    assert seen["resolved_by"] == "rita-key" and seen["resolved_at"] == body["resolved_at"]


def test_resolving_twice_is_409_already_resolved_naming_who(rv, rv2, consolidation):
    pid = consolidation["proposal"]["id"]
    cid = comment(rv, pid, body="Cite the runbook")["id"]
    assert resolve(rv, pid, cid).status_code == 200
    again = resolve(rv2, pid, cid)
    assert again.status_code == 409, again.text
    error = again.json()["error"]
    assert error["code"] == "already_resolved"
    assert error["details"]["resolved_by"] == "rita-key"
    assert CommentResolution.objects.filter(comment_id=cid).count() == 1
    assert AuditEvent.objects.filter(action="proposal.comment_resolved").count() == 1


def test_an_unknown_comment_or_one_of_another_proposal_is_404(rv, ag, consolidation, lossy):
    pid = consolidation["proposal"]["id"]
    elsewhere = comment(rv, lossy["proposal"]["id"], body="On the other one")["id"]
    for cid in (elsewhere, 999_999):
        r = resolve(rv, pid, cid)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "not_found"
    assert resolve(rv, 999_999, elsewhere).status_code == 404
    assert not CommentResolution.objects.exists()


def test_the_author_resolves_its_own_comment_but_not_a_reviewers(
    api, ag, rv, auditor, consolidation
):
    pid = consolidation["proposal"]["id"]
    own = comment(ag, pid, body="I will cite the runbook")["id"]
    theirs = comment(rv, pid, body="Cite the runbook")["id"]
    refused = resolve(ag, pid, theirs)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert resolve(api.as_(auditor), pid, own).status_code == 403
    r = resolve(ag, pid, own)
    assert r.status_code == 200 and r.json()["resolved_by"] == "agent-1"
    assert list(CommentResolution.objects.values_list("comment_id", flat=True)) == [own]


def test_a_reply_resolves_a_comment_in_the_same_transaction(rv, ag, consolidation):
    pid = consolidation["proposal"]["id"]
    asked = comment(rv, pid, body="Keep deploy.sh in the text")["id"]
    mine = comment(ag, pid, body="A note of mine")["id"]
    # The submitter may not close the reviewer's point: nothing is written, not even the reply.
    r = ag.post(f"{P}/{pid}/comments", {"body": "Done in revision 2", "resolves": asked})
    assert r.status_code == 403, r.text
    assert not ProposalComment.objects.filter(body="Done in revision 2").exists()
    # Its own comment it may.
    reply = comment(ag, pid, body="Answered above", resolves=mine)
    assert reply["resolved_by"] is None  # the reply itself is open
    # A reviewer's reply settles the reviewer's point.
    comment(rv, pid, body="Thanks, settled", resolves=asked)
    thread = {c["id"]: c for c in rv.get(f"{P}/{pid}").json()["comments"]}
    assert thread[asked]["resolved_by"] == "rita-key"
    assert thread[mine]["resolved_by"] == "agent-1"
    # Resolving again through a reply: 409 and no reply written.
    again = rv.post(f"{P}/{pid}/comments", {"body": "Again", "resolves": asked})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_resolved"
    assert not ProposalComment.objects.filter(body="Again").exists()
    bad = rv.post(f"{P}/{pid}/comments", {"body": "x", "resolves": 0})
    assert bad.status_code == 400 and "resolves" in bad.json()["error"]["details"]


def test_a_decided_proposal_can_still_have_its_comments_resolved(rv, rv2, ag, consolidation):
    pid = consolidation["proposal"]["id"]
    cid = comment(rv2, pid, body="Minor: wording")["id"]
    assert rv.post(f"{P}/{pid}/approve", {}).status_code == 200
    assert resolve(rv2, pid, cid).status_code == 200


def test_the_detail_still_costs_a_fixed_number_of_queries(
    rv, reviewer, consolidation, django_assert_max_num_queries
):
    pid = consolidation["proposal"]["id"]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {reviewer.secret}")

    def read() -> list[str | None]:
        # key + its memories, the proposal, targets, comments with resolutions, decisions,
        # amendments
        with django_assert_max_num_queries(7):
            r = client.get(f"{P}/{pid}")
        assert r.status_code == 200, r.content
        return [c["resolved_by"] for c in r.json()["comments"]]

    comment(rv, pid, body="Point 0")
    assert read() == [None]
    for i in range(1, 5):
        cid = comment(rv, pid, body=f"Point {i}")["id"]
        if i % 2:
            assert resolve(rv, pid, cid).status_code == 200
    assert read() == [None, "rita-key", None, "rita-key", None]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
def test_two_reviewers_resolving_at_once_one_wins(rv, rv2, consolidation):
    pid = consolidation["proposal"]["id"]
    cid = comment(rv, pid, body="Race me")["id"]
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def go(client):
        barrier.wait()
        statuses.append(resolve(client, pid, cid).status_code)

    threads = [threading.Thread(target=go, args=(c,)) for c in (rv, rv2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 409]
    assert CommentResolution.objects.filter(comment_id=cid).count() == 1
