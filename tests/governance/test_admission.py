"""Admission review: writes from sources below the policy's authority wait as candidates.

Every test runs on the suite's backend (SQLite with FTS5, PostgreSQL with tsvector): a candidate
never reaches recall or a Context Pack before approval; approval and rejection each write exactly
one revision.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from lib.errors import DomainError, Forbidden, ValidationFailed
from memory import actions
from memory.actors import Actor
from memory.context_pack import build_context_pack
from memory.inventory import inventory
from memory.models import Entry, Head, HeadState, Revision, RevisionKind
from memory.search import search
from proposals.models import Proposal, ProposalKind, ProposalStatus
from proposals.requests import submit_request
from review.actions import approve_proposal, compensate_operation, reject_proposal
from tests.factories import remember

BODY = "The billing service retries failed webhooks five times with exponential backoff."
QUERY = "billing webhooks retries"


@pytest.fixture
def gated(memory, staff):
    return actions.update_memory_policy(
        memory, actor=staff, policy={"admission_review": {"below_authority": "repository_attested"}}
    )


def _kind(revision: Revision | None) -> str:
    assert revision is not None
    return revision.kind


def _pk(thing: Any) -> int:
    assert thing is not None
    return thing if isinstance(thing, int) else int(thing.pk)


def _revisions(memory) -> int:
    return Revision.objects.filter(memory=memory).count()


def _hits(memory, actor, view="current", query=QUERY):
    return [h.entry_id for h in search(memory, actor=actor, query=query, view=view).hits]


def test_an_untrusted_write_lands_as_a_candidate_with_an_admission_proposal(gated, agent):
    before = _revisions(gated)
    result = remember(gated, agent.actor, BODY, evidence=[{"source": "chat", "ref": "msg/1"}])
    assert result.created and result.state == HeadState.CANDIDATE
    assert _revisions(gated) == before + 1  # the add, nothing else
    head = Head.objects.get(entry=result.entry)
    assert head.state == HeadState.CANDIDATE
    proposal = Proposal.objects.get(pk=result.proposal_id)
    assert proposal.kind == ProposalKind.ADMISSION
    assert proposal.status == ProposalStatus.PENDING
    assert proposal.payload["entry"] == {"entry_id": result.entry.uid, "version": 1}
    checks = {c["code"]: c for c in proposal.verification["checks"]}
    assert checks["source_authority"]["authorities"] == ["untrusted"]


def test_a_write_without_evidence_is_a_candidate_and_an_attested_one_is_not(gated, agent):
    bare = remember(gated, agent.actor, BODY)
    attested = remember(
        gated, agent.actor, "Deploys run on Tuesdays.", evidence=[{"source": "repo", "ref": "a"}]
    )
    assert bare.state == HeadState.CANDIDATE
    assert attested.state == HeadState.ACTIVE and attested.proposal_id is None


def test_direct_writes_stay_the_default(memory, agent):
    assert remember(memory, agent.actor, BODY).state == HeadState.ACTIVE
    assert not Proposal.objects.filter(kind=ProposalKind.ADMISSION).exists()


def test_a_candidate_never_reaches_recall_or_a_context_pack(gated, agent, reviewer):
    cand = remember(gated, agent.actor, BODY).entry
    for view in ("current", "history"):
        assert cand.uid not in _hits(gated, agent.actor, view)
        assert cand.uid not in _hits(gated, reviewer.actor, view)
    pack = build_context_pack(gated, actor=agent.actor, query=QUERY)
    assert cand.uid not in [i.entry_id for i in pack.items] and "webhooks" not in pack.text
    # Reviewers and auditors find it in the candidates view; agents may not ask for it.
    assert _hits(gated, reviewer.actor, "candidates") == [cand.uid]
    with pytest.raises(Forbidden):
        search(gated, actor=agent.actor, query=QUERY, view="candidates")


def test_approval_admits_the_candidate_in_exactly_one_revision(gated, agent, reviewer):
    written = remember(gated, agent.actor, BODY)
    before = _revisions(gated)
    outcome = approve_proposal(written.proposal_id, actor=reviewer.actor)
    assert _revisions(gated) == before + 1
    assert _kind(outcome.revision) == RevisionKind.ADMIT
    assert Head.objects.get(entry=written.entry).state == HeadState.ACTIVE
    assert _hits(gated, agent.actor) == [written.entry.uid]
    assert _hits(gated, reviewer.actor, "candidates") == []
    # Undoing the operation makes it a candidate again, withheld again.
    compensate_operation(_pk(outcome.operation), actor=reviewer.actor, comment="not yet")
    head = Head.objects.get(entry=written.entry)
    assert (head.state, head.state_reason) == (HeadState.CANDIDATE, "admission_review")
    assert _hits(gated, agent.actor) == []
    # ... and it waits for review again.
    again = Proposal.objects.get(kind=ProposalKind.ADMISSION, status=ProposalStatus.PENDING)
    assert again.pk != written.proposal_id and again.targets.get().entry_id == written.entry.pk


def test_rejection_retires_the_candidate_with_the_reason_in_one_revision(gated, agent, reviewer):
    written = remember(gated, agent.actor, BODY)
    before = _revisions(gated)
    outcome = reject_proposal(
        written.proposal_id, actor=reviewer.actor, reason="wrong", comment="Billing retries 3x."
    )
    assert _revisions(gated) == before + 1
    assert _kind(outcome.revision) == RevisionKind.REJECT_ADMISSION
    head = Head.objects.get(entry=written.entry)
    assert (head.state, head.state_reason) == (HeadState.INACTIVE, "admission_rejected:wrong")
    proposal = Proposal.objects.get(pk=written.proposal_id)
    assert (proposal.status, proposal.rejection_reason) == (ProposalStatus.REJECTED, "wrong")
    assert _hits(gated, agent.actor, "history") == [written.entry.uid]  # retired, not withheld
    # The agent cannot admit it by reactivating it.
    with pytest.raises(DomainError) as exc:
        actions.reactivate_entry(gated, actor=agent.actor, entry_uid=written.entry.uid)
    assert exc.value.code == "admission_rejected"


def test_a_rejection_of_another_kind_still_writes_nothing(memory, agent, reviewer):
    a = remember(memory, agent.actor, "Port 8080 serves the admin UI.", dedupe=False)
    b = remember(memory, agent.actor, "The admin UI is on port 8080.", dedupe=False)
    filed = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "Low value.",
            "entries": [{"entry_id": a.entry.uid, "version": 1}],
        },
    )
    before = _revisions(memory)
    out = reject_proposal(filed.proposal.pk, actor=reviewer.actor, reason="wrong", comment="no")
    assert out.revision is None and _revisions(memory) == before
    assert Head.objects.get(entry=b.entry).state == HeadState.ACTIVE


def test_candidates_refuse_direct_changes(gated, agent):
    cand = remember(gated, agent.actor, BODY).entry
    for call in (
        lambda: actions.revise_entry(gated, actor=agent.actor, entry_uid=cand.uid, body="x y z"),
        lambda: actions.forget_entry(gated, actor=agent.actor, entry_uid=cand.uid, reason="r"),
        lambda: actions.reactivate_entry(gated, actor=agent.actor, entry_uid=cand.uid),
    ):
        with pytest.raises(DomainError) as exc:
            call()
        assert exc.value.code == "entry_candidate"


def test_the_same_untrusted_write_twice_is_one_candidate(gated, agent):
    first = remember(gated, agent.actor, BODY)
    again = remember(gated, agent.actor, BODY)
    assert not again.created and again.reason == "exact_duplicate"
    assert again.entry.pk == first.entry.pk and again.state == HeadState.CANDIDATE
    assert Proposal.objects.filter(kind=ProposalKind.ADMISSION).count() == 1


def test_agents_cannot_file_admission_proposals(gated, agent):
    entry = remember(gated, agent.actor, BODY).entry
    Proposal.objects.filter(kind=ProposalKind.ADMISSION).update(status=ProposalStatus.WITHDRAWN)
    with pytest.raises(Forbidden):
        submit_request(
            actor=agent.actor,
            data={
                "memory": "acme",
                "kind": "admission",
                "rationale": "let me in",
                "entry": {"entry_id": entry.uid, "version": 1},
            },
        )


def test_the_writer_cannot_admit_its_own_candidate(gated):
    user = User.objects.create_user("sam", password="x", is_staff=True)
    sam = Actor.for_user(user)
    written = remember(gated, sam, BODY)
    with pytest.raises(DomainError) as exc:
        approve_proposal(written.proposal_id, actor=sam)
    assert exc.value.code == "self_approval"


def test_an_admission_needs_its_configured_approvals(gated, agent, reviewer, other_reviewer, staff):
    actions.update_memory_policy(
        gated, actor=staff, policy={"approvals_required": {"admission": 2}}
    )
    written = remember(gated, agent.actor, BODY)
    first = approve_proposal(written.proposal_id, actor=reviewer.actor)
    assert first.revision is None and first.approvals == 1 and first.required == 2
    assert Head.objects.get(entry=written.entry).state == HeadState.CANDIDATE
    second = approve_proposal(written.proposal_id, actor=other_reviewer.actor)
    assert second.revision is not None
    assert Head.objects.get(entry=written.entry).state == HeadState.ACTIVE


def test_the_inventory_counts_candidates_and_quarantined_entries(gated, agent, reviewer):
    remember(gated, agent.actor, BODY)
    other = remember(
        gated, agent.actor, "Deploys run on Tuesdays.", evidence=[{"source": "repo", "ref": "a"}]
    )
    actions.quarantine_entry(gated, actor=reviewer.actor, entry_uid=other.entry.uid, reason="odd")
    counts = inventory(gated)
    assert (counts["candidate_count"], counts["quarantined_count"]) == (1, 1)
    assert counts["active_count"] == 0
    assert counts["pending_proposals"].get("admission") == 1


@pytest.mark.parametrize(
    "section",
    [
        {"below_authority": "trusted"},
        {"below_authority": 3},
        {"injection_scan": "yes"},
        {"unknown": 1},
        "repository_attested",
    ],
)
def test_a_malformed_admission_policy_is_refused(memory, staff, section):
    with pytest.raises(ValidationFailed) as exc:
        actions.update_memory_policy(memory, actor=staff, policy={"admission_review": section})
    assert "policy.admission_review" in exc.value.details
    assert Entry.objects.count() == 0


def test_the_server_files_the_admission_for_the_writer(gated, agent):
    entry = remember(gated, agent.actor, BODY)
    proposal = Proposal.objects.get(pk=entry.proposal_id)
    assert proposal.submitted_by_type == "system"
    assert proposal.submitted_by_key_id == agent.key.pk
    assert proposal.submitted_on_behalf_of == agent.actor.label


def test_a_failed_filing_leaves_the_candidate_withheld_and_the_inventory_says_so(
    gated, agent, monkeypatch
):
    from proposals.actions import system

    def broken(**kwargs):
        raise RuntimeError("database hiccup")

    monkeypatch.setattr(system, "file_server_proposal", lambda *a, **k: broken())
    written = remember(gated, agent.actor, BODY)
    assert written.state == HeadState.CANDIDATE and written.proposal_id is None
    assert _hits(gated, agent.actor) == []
    alerts = {a["code"] for a in inventory(gated)["alerts"]}
    assert "candidates_without_admission" in alerts
