""" "Claim next" and assignment: a reviewer is never handed a proposal assigned to another
reviewer; proposals assigned to them or to nobody are claimed oldest first."""

from __future__ import annotations

import pytest

from proposals.actions import assign_proposal
from review import claims
from tests.conftest import make_key
from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db


def claimed(actor) -> int | None:
    claim = claims.claim_next_proposal(actor=actor)
    return claim.proposal_id if claim is not None else None


def test_claim_next_skips_a_proposal_assigned_to_another_reviewer(
    memory, agent, reviewer, other_reviewer
):
    for_ravi = consolidate(memory, agent.actor)
    unassigned = consolidate(memory, agent.actor)
    assign_proposal(for_ravi, actor=reviewer.actor, reviewer="ravi")
    assert claimed(reviewer.actor) == unassigned.pk
    assert claimed(other_reviewer.actor) == for_ravi.pk


def test_claim_next_takes_a_proposal_assigned_to_the_reviewer_oldest_first(
    memory, agent, reviewer, other_reviewer
):
    for_rita = consolidate(memory, agent.actor)
    consolidate(memory, agent.actor)
    assign_proposal(for_rita, actor=other_reviewer.actor, reviewer="rita")
    assert claimed(reviewer.actor) == for_rita.pk


def test_with_only_other_reviewers_assignments_left_there_is_nothing_to_claim(
    memory, agent, reviewer, other_reviewer
):
    for_ravi = consolidate(memory, agent.actor)
    assign_proposal(for_ravi, actor=reviewer.actor, reviewer="ravi")
    assert claimed(reviewer.actor) is None
    # A key without an owner is nobody's assignee: it gets unassigned proposals only.
    assert claimed(make_key("ownerless", "reviewer").actor) is None


def test_claim_next_button_opens_an_unassigned_proposal_and_says_when_none_is_left(
    rita, memory, agent, reviewer, other_reviewer
):
    for_ravi = consolidate(memory, agent.actor)
    assign_proposal(for_ravi, actor=reviewer.actor, reviewer="ravi")
    r = rita.post("/review/claim/", {"next": "/review/"}, follow=True)
    page = r.content.decode()
    assert f"/review/proposals/{for_ravi.pk}/" not in [u for u, _ in r.redirect_chain]
    assert "Nothing left to claim" in page and "assigned to someone else" in page
    unassigned = consolidate(memory, agent.actor)
    r = rita.post("/review/claim/", {})
    assert r.status_code == 302 and r["Location"] == f"/review/proposals/{unassigned.pk}/"
