"""The demo proposals: every kind pending, one losing details, one stale; idempotent."""

from __future__ import annotations

import pytest

from memory.models import Revision
from proposals.demo import load_demo_proposals
from proposals.models import Proposal

pytestmark = pytest.mark.django_db


def test_demo_files_every_kind_with_lost_details_and_a_stale_one(memory, agent):
    filed = load_demo_proposals(memory, agent_actor=agent.actor)
    assert [(p.kind, p.status) for p in filed] == [
        ("consolidation", "pending"),
        ("consolidation", "pending"),
        ("supersession", "pending"),
        ("promotion", "pending"),
        ("cleanup", "pending"),
        ("supersession", "stale"),
    ]
    assert filed[0].verification["lost_details"] == []
    assert [d["text"] for d in filed[1].verification["lost_details"]] == [
        "02:00",
        "UTC",
        "scripts/deploy.sh",
    ]
    assert filed[3].verification["lost_details"] == []
    assert filed[5].stale_revision is not None
    assert all(p.submitted_by == agent.actor.id for p in filed)


def test_demo_is_idempotent(memory, agent):
    first = load_demo_proposals(memory, agent_actor=agent.actor)
    revisions = Revision.objects.count()
    again = load_demo_proposals(memory, agent_actor=agent.actor)
    assert [p.pk for p in again] == [p.pk for p in first]
    assert Revision.objects.count() == revisions
    assert Proposal.objects.count() == 6


def test_demo_loader_command_files_the_proposals(db, capsys):
    from django.core.management import call_command

    call_command("load_demo")
    out = capsys.readouterr().out
    assert "9 proposals filed" in out
    assert Proposal.objects.filter(status="pending").count() == 7
    assert Proposal.objects.filter(status="stale").count() == 1
    assert Proposal.objects.filter(status="changes_requested").count() == 1
    # Admission review is on in the demo: a chat-sourced candidate and an injected instruction
    # wait for a reviewer.
    pending = set(Proposal.objects.filter(status="pending").values_list("kind", flat=True))
    assert {"admission", "quarantine"} <= pending
    call_command("load_demo")
    assert Proposal.objects.count() == 9
