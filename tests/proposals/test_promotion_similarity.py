"""The promotion pass compares notes with the similarity the admission check uses: words
(Jaccard of the analyzer tokens) without an embedding provider, the cosine of the notes' stored
vectors with one. Recurring notes are often written in other words each session.

Runs on both backends (the suite runs on SQLite and on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User

from memory import actions, maintenance, vectors
from memory.actors import Actor
from memory.embeddings import calibration, require_provider
from memory.models import Entry, EntryEmbedding, Memory
from proposals.models import Proposal
from proposals.passes.promotion import COSINE_THRESHOLD, DEFAULT_THRESHOLD
from tests.factories import remember

#: One observation in three sessions, in other words each time (Jaccard 0.18-0.31: below the
#: lexical threshold; cosine 0.71-0.82 with all-MiniLM-L6-v2).
FLAKY_CI = [
    ("s-1", "CI flaked on the integration suite again"),
    ("s-2", "integration tests failed intermittently in CI"),
    ("s-3", "The integration job in CI is unreliable and fails at random"),
]
#: Another session's note on the same topic, about something else (cosine at most 0.50).
DOCKER = ("s-4", "The integration suite needs Docker running")


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


def note(memory: Memory, actor: Actor, session: str, body: str) -> Entry:
    return remember(
        memory, actor, body, kind="working_note", tier="session", session_id=session, dedupe=False
    ).entry


def enable_promotion(memory: Memory) -> None:
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(
        memory, actor=founder, policy={"jobs": {"promotion": {"enabled": True}}}
    )


def themes(run: Any) -> list[set[str]]:
    return [set(i["entries"]) for i in run.items if i["reason"] == "recurring_theme"]


@pytest.mark.semantic
def test_with_the_model_notes_in_other_words_make_one_theme(memory, agent, system):
    a = agent.actor
    notes = [note(memory, a, s, b) for s, b in FLAKY_CI]
    docker = note(memory, a, *DOCKER)
    vectors.backfill()  # what the indexing after each write does
    actions.end_session(memory, actor=a, session_id="s-1")  # its note is inactive now
    enable_promotion(memory)
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=False)
    assert r.parameters["method"] == "cosine"
    threshold = calibration().promotion  # the packaged model's own
    assert r.parameters["threshold"] == threshold
    assert themes(r) == [{n.uid for n in notes}]
    (p,) = Proposal.objects.filter(memory=memory, kind="promotion")
    assert {n["entry_id"] for n in p.payload["notes"]} == {n.uid for n in notes}
    assert docker.uid not in {n["entry_id"] for n in p.payload["notes"]}
    (item,) = r.items
    assert all(score >= threshold for _, _, score in item["inputs"]["pairs"])


def test_without_the_model_the_same_notes_share_too_few_words(memory, agent, system):
    a = agent.actor
    for s, b in FLAKY_CI:
        note(memory, a, s, b)
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert r.parameters["method"] == "lexical" and r.parameters["threshold"] == DEFAULT_THRESHOLD
    assert themes(r) == []


def test_with_a_provider_pairs_are_scored_by_the_stored_vectors(memory, agent, system, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    a = agent.actor
    first = note(memory, a, "s-1", "test_checkout is flaky because of the timezone in CI")
    second = note(memory, a, "s-2", "test_checkout flaky again: the timezone in CI differs")
    vectors.backfill()
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert r.parameters["method"] == "cosine"
    stored = vectors.head_vectors(memory.pk, require_provider(), [first.pk, second.pk])
    ((_, _, score),) = r.items[0]["inputs"]["pairs"]
    assert score == round(float(np.dot(stored[first.pk], stored[second.pk])), 4)
    assert score >= COSINE_THRESHOLD


def test_head_vectors_reads_what_is_stored_and_embeds_only_the_rest(memory, agent, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    a = agent.actor
    indexed = note(memory, a, "s-1", "The docker build fails when the pip cache volume is missing")
    vectors.backfill()
    fresh = note(memory, a, "s-2", "Missing pip cache volume makes the docker build fail")
    provider = require_provider()
    embedded: list[str] = []

    class Counting:
        key, dimensions, scripts = provider.key, provider.dimensions, provider.scripts

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            embedded.extend(texts)
            return provider.embed(texts)

    rows = EntryEmbedding.objects.count()
    got = vectors.head_vectors(memory.pk, Counting(), [indexed.pk, fresh.pk], batch=1)
    assert embedded == [fresh.head.version.body]  # the stored vector is read, not made again
    assert EntryEmbedding.objects.count() == rows  # nothing written
    for entry in (indexed, fresh):
        (want,) = provider.embed([entry.head.version.body])
        assert np.allclose(got[entry.pk], want)
