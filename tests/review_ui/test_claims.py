""" "Claim next": an expiring, advisory lease on the oldest pending proposal nobody else holds."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.utils import timezone

from memory.actors import Actor
from review import actions, claims
from review.exceptions import Forbidden
from review.models import ReviewClaim
from review.notifications import needs
from tests.conftest import make_key
from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db


def claimed(actor) -> int:
    claim = claims.claim_next_proposal(actor=actor)
    assert claim is not None
    return claim.proposal_id


def test_claim_next_takes_the_oldest_and_the_next_reviewer_gets_the_next(
    memory, agent, reviewer, other_reviewer
):
    first, second = consolidate(memory, agent.actor), consolidate(memory, agent.actor)
    assert claimed(reviewer.actor) == first.pk
    assert claimed(other_reviewer.actor) == second.pk
    assert claims.claim_next_proposal(actor=make_key("third", "reviewer").actor) is None


def test_claiming_again_moves_the_lease_and_release_gives_it_up(
    memory, agent, reviewer, other_reviewer
):
    first, second = consolidate(memory, agent.actor), consolidate(memory, agent.actor)
    claims.claim_next_proposal(actor=reviewer.actor)
    mine = claims.claim_next_proposal(actor=reviewer.actor)
    assert mine is not None
    # A reviewer holds one lease at a time; claiming again re-takes the oldest free one.
    assert ReviewClaim.objects.filter(actor_id=reviewer.actor.id).count() == 1
    assert mine.proposal_id == first.pk
    assert claims.release_claim(actor=reviewer.actor) == 1
    assert claimed(other_reviewer.actor) == first.pk
    assert second.pk


def test_an_expired_lease_is_taken_over(memory, agent, reviewer, other_reviewer):
    p = consolidate(memory, agent.actor)
    claims.claim_next_proposal(actor=reviewer.actor, now=timezone.now() - timedelta(hours=1))
    taken = claims.claim_next_proposal(actor=other_reviewer.actor)
    assert taken is not None
    assert taken.proposal_id == p.pk and taken.actor_id == other_reviewer.actor.id
    assert ReviewClaim.objects.count() == 1


def test_claims_skip_decided_and_own_proposals_and_filter_by_kind(
    memory, agent, reviewer, other_reviewer
):
    own = consolidate(memory, make_key("rita-agent", "agent", owner="rita").actor)
    decided = consolidate(memory, agent.actor)
    actions.approve_proposal(decided.pk, actor=other_reviewer.actor)
    open_ = consolidate(memory, agent.actor)
    from django.contrib.auth.models import User

    from memory.actors import Actor

    rita = Actor.for_user(User.objects.get(username="rita"))
    assert claimed(rita) == open_.pk
    assert own.pk
    assert (
        claims.claim_next_proposal(actor=reviewer.actor, f=claims.ClaimFilter(kind="cleanup"))
        is None
    )


def test_claims_skip_proposals_the_reviewer_amended(memory, agent, reviewer, other_reviewer):
    """A reviewer who edited the proposed text counts as "self" and cannot decide it, so
    "Claim next" passes it by — whether they edited it in the browser or through their key."""
    from django.contrib.auth.models import User

    from memory.actors import Actor
    from proposals.actions.discussion import amend_proposal

    edited_in_browser, edited_by_key, untouched = (
        consolidate(memory, agent.actor) for _ in range(3)
    )
    rita = Actor.for_user(User.objects.get(username="rita"))
    amend_proposal(
        edited_in_browser, actor=rita, changes={"body": f"{edited_in_browser.payload['body']} (a)"}
    )
    amend_proposal(
        edited_by_key,
        actor=reviewer.actor,
        changes={"body": f"{edited_by_key.payload['body']} (b)"},
    )
    assert claimed(rita) == untouched.pk
    claims.release_claim(actor=rita)
    assert claimed(reviewer.actor) == untouched.pk
    # Another reviewer may still take them.
    assert claimed(other_reviewer.actor) == edited_in_browser.pk


def test_a_claim_is_advisory_another_reviewer_may_still_decide(
    memory, agent, reviewer, other_reviewer
):
    p = consolidate(memory, agent.actor)
    claims.claim_next_proposal(actor=reviewer.actor)
    assert actions.approve_proposal(p.pk, actor=other_reviewer.actor).revision is not None


def test_auditors_cannot_claim(auditor):
    with pytest.raises(Forbidden):
        claims.claim_next_proposal(actor=auditor.actor)


def test_claim_next_button_opens_the_claimed_proposal(rita, memory, agent):
    p = consolidate(memory, agent.actor)
    r = rita.post("/review/claim/", {"kind": "consolidation"})
    assert r.status_code == 302 and r["Location"] == f"/review/proposals/{p.pk}/"
    page = rita.get(r["Location"]).content.decode()
    assert "You hold this proposal" in page
    inbox = rita.get("/review/").content.decode()
    assert "claimed by you" in inbox and f'You hold <a href="/review/proposals/{p.pk}/">' in inbox
    r = rita.post("/review/claim/", {}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and r["HX-Redirect"] == f"/review/proposals/{p.pk}/"
    r = rita.post("/review/claim/release/", {"next": "/review/"})
    assert r.status_code == 302 and not ReviewClaim.objects.exists()


def test_claim_next_with_nothing_left_says_so(rita, memory):
    r = rita.post("/review/claim/", {"next": "/review/"}, follow=True)
    assert b"Nothing left to claim" in r.content


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs real row locks")
@pytest.mark.django_db(transaction=True)
def test_two_reviewers_claiming_at_once_get_different_proposals(
    memory, agent, reviewer, other_reviewer
):
    made = {consolidate(memory, agent.actor).pk for _ in range(2)}
    barrier = threading.Barrier(2)
    got: list[int | None] = []

    def press(actor) -> None:
        try:
            barrier.wait()
            claim = claims.claim_next_proposal(actor=actor)
            got.append(claim.proposal_id if claim else None)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press, args=(k.actor,)) for k in (reviewer, other_reviewer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(got) == made


@pytest.fixture(autouse=True)
def _cast(reviewer) -> None:
    """rita exists in every test here."""


@pytest.mark.parametrize("decide", ["approve", "reject", "request_changes"])
def test_a_claim_ends_with_the_holders_decision(rita, memory, agent, decide):
    rita_actor = Actor.for_user(User.objects.get(username="rita"))
    p = consolidate(memory, agent.actor)
    assert rita.post("/review/claim/", {}).status_code == 302
    assert ReviewClaim.objects.filter(proposal=p).exists()
    if decide == "approve":
        actions.approve_proposal(p.pk, actor=rita_actor)
    elif decide == "reject":
        actions.reject_proposal(p.pk, actor=rita_actor, reason="wrong", comment="No.")
    else:
        actions.request_changes(p.pk, actor=rita_actor, comment="Keep the time.")
    assert not ReviewClaim.objects.exists()
    assert "claim-banner" not in rita.get("/review/").content.decode()
    assert [i.kind for i in needs(rita_actor).items] == []


def test_the_inbox_never_shows_a_leftover_claim_on_a_decided_proposal(
    rita, memory, agent, other_reviewer
):
    p = consolidate(memory, agent.actor)
    actions.reject_proposal(p.pk, actor=other_reviewer.actor, reason="wrong", comment="No.")
    ReviewClaim.objects.create(
        proposal=p,
        actor_id=Actor.for_user(User.objects.get(username="rita")).id,
        actor_label="rita",
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    assert "claim-banner" not in rita.get("/review/").content.decode()


def test_no_stale_claim_notice_about_ones_own_decision(rita, memory, agent):
    rita_actor = Actor.for_user(User.objects.get(username="rita"))
    p = consolidate(memory, agent.actor)
    actions.reject_proposal(p.pk, actor=rita_actor, reason="wrong", comment="No.")
    # A lease left over from before claims ended with the decision.
    ReviewClaim.objects.create(
        proposal=p, actor_id=rita_actor.id, actor_label="rita", expires_at=timezone.now()
    )
    assert [i.kind for i in needs(rita_actor).items] == []
