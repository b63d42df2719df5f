"""The vector channel honours admission review and quarantine: a paraphrased question finds a
candidate only once it is admitted, and never finds a quarantined entry, in any view."""

from __future__ import annotations

import pytest

from memory import actions
from memory.search import search
from review.actions import approve_proposal
from tests.factories import remember

pytestmark = [pytest.mark.semantic, pytest.mark.django_db(transaction=True)]

MISO = "I adopted a cat named Miso last spring."
PET = "what is my pet called?"


def _hits(memory, actor, view="current"):
    result = search(memory, actor=actor, query=PET, view=view)
    return [(h.entry_id, "vector" in h.channels) for h in result.hits]


def test_a_candidate_reaches_the_vector_channel_only_after_approval(memory, agent, reviewer):
    memory = actions.update_memory_policy(
        memory,
        actor=reviewer.actor,
        policy={"admission_review": {"below_authority": "repository_attested"}},
    )
    written = remember(memory, agent.actor, MISO)
    assert _hits(memory, agent.actor) == []
    assert _hits(memory, agent.actor, "history") == []
    # Its vector is there (the candidates view finds it by meaning), withheld from the others.
    assert _hits(memory, reviewer.actor, "candidates") == [(written.entry.uid, True)]
    approve_proposal(written.proposal_id, actor=reviewer.actor)
    assert _hits(memory, agent.actor) == [(written.entry.uid, True)]


def test_a_quarantined_entry_is_out_of_the_vector_channel_in_every_view(memory, agent, reviewer):
    written = remember(memory, agent.actor, MISO)
    assert _hits(memory, agent.actor) == [(written.entry.uid, True)]
    actions.quarantine_entry(
        memory, actor=reviewer.actor, entry_uid=written.entry.uid, reason="poisoned"
    )
    for view in ("current", "history"):
        assert _hits(memory, agent.actor, view) == []
        assert _hits(memory, reviewer.actor, view) == []
