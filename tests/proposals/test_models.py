"""The proposal model's rules: the transition table, the database constraints that hold even
for the admin and scripts, append-only pre-state, and the staleness hook's one exception."""

from __future__ import annotations

import itertools

import pytest
from django.db import IntegrityError, transaction

from memory import actions as memory_actions
from memory.actors import Actor
from memory.models import AppendOnlyError, Head, RevisionKind
from proposals.exceptions import IllegalTransition
from proposals.models import TRANSITIONS, Proposal, ProposalStatus, ProposalTarget
from proposals.requests import submit_request
from tests.factories import remember

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(memory, agent) -> Proposal:
    x = remember(memory, agent.actor, "Old cache note", kind="working_note", dedupe=False)
    return submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "leftover",
            "entries": [{"entry_id": x.entry.uid, "version": 1}],
        },
    ).proposal


def test_the_transition_table_is_the_only_way(proposal):
    for a, b in itertools.product(ProposalStatus.values, repeat=2):
        proposal.status = a
        assert proposal.can_transition_to(b) == (b in TRANSITIONS[a])
    proposal.status = ProposalStatus.PENDING
    proposal.status_reason = "amended"
    fields = proposal.transition_to(ProposalStatus.APPROVED)
    # The reason belongs to the status it was given with: a new status clears an old one.
    assert fields == ["status", "status_changed_at", "status_reason"]
    assert proposal.status_reason == ""
    proposal.save(update_fields=fields)
    with pytest.raises(IllegalTransition) as exc:
        proposal.transition_to(ProposalStatus.REJECTED)
    assert exc.value.code == "already_decided" and exc.value.http_status == 409
    proposal.transition_to(ProposalStatus.COMPENSATED)
    with pytest.raises(IllegalTransition):
        proposal.transition_to(ProposalStatus.PENDING)


def _copy(p: Proposal, **changes) -> Proposal:
    fields = {
        f.attname: getattr(p, f.attname)
        for f in Proposal._meta.concrete_fields
        if f.attname != "id"
    }
    return Proposal(**{**fields, **changes})


def test_the_database_allows_one_pending_proposal_per_affected_set(proposal):
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(proposal).save()
    _copy(proposal, status="withdrawn").save()
    _copy(proposal, kind="consolidation").save()


def test_the_database_requires_reason_for_rejection_and_revision_for_staleness(proposal):
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(proposal, status="rejected").save()
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(proposal, status="withdrawn", rejection_reason="wrong").save()
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(proposal, status="stale").save()
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(proposal, status="bogus").save()
    _copy(proposal, status="rejected", rejection_reason="wrong").save()


def test_pre_state_rows_are_append_only(proposal):
    target = ProposalTarget.objects.get(proposal=proposal)
    with pytest.raises(AppendOnlyError):
        target.save()
    with pytest.raises(AppendOnlyError):
        target.delete()


def test_the_revision_applying_a_proposal_does_not_make_that_proposal_stale(
    memory, agent, proposal
):
    """The approval engine passes ``proposal_id`` to the writer; only *other* pending proposals
    touching the same entries go stale."""
    entry = proposal.targets.get().entry
    other = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "with another",
            "entries": [
                {"entry_id": entry.uid, "version": 1},
                {
                    "entry_id": remember(memory, agent.actor, "x note", dedupe=False).entry.uid,
                    "version": 1,
                },
            ],
        },
    ).proposal
    with transaction.atomic():
        locked = memory_actions.lock_memory(memory.pk)
        revision = memory_actions.write_revision(
            locked,
            actor=Actor.system("approval"),
            kind=RevisionKind.CLEANUP,
            changes=[
                memory_actions.Change(entry=entry, to_state="inactive", state_reason="cleanup:v1")
            ],
            proposal_id=proposal.pk,
        )
    proposal.refresh_from_db()
    other.refresh_from_db()
    assert proposal.status == "pending"
    assert other.status == "stale" and other.stale_revision_id == revision.pk
    assert Head.objects.get(entry=entry).state == "inactive"


def test_is_self_covers_the_key_its_owner_and_the_actor(proposal, agent, other_agent):
    assert proposal.is_self(agent.actor)
    assert not proposal.is_self(other_agent.actor)
    assert not proposal.is_self(Actor.system())


def test_the_purge_task_deletes_only_expired_keys(memory, agent):
    from datetime import timedelta

    from django.utils import timezone

    from proposals.models import IdempotencyKey
    from proposals.tasks import purge_idempotency_keys

    for i in range(2):
        x = remember(
            memory, agent.actor, f"Note {i} about caches", kind="working_note", dedupe=False
        )
        submit_request(
            actor=agent.actor,
            idempotency_key=f"k{i}",
            data={
                "memory": "acme",
                "kind": "cleanup",
                "rationale": "leftover",
                "entries": [{"entry_id": x.entry.uid, "version": 1}],
            },
        )
    IdempotencyKey.objects.filter(key="k0").update(expires_at=timezone.now() - timedelta(hours=1))
    assert purge_idempotency_keys.delay().get() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["k1"]
