"""Recall events (off by default): reads enqueue, never write; the fold counts per entry, is
throttled per entry × actor, and feeds only the retention score."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache

from memory import actions, recall_events
from memory.actors import Actor
from memory.models import LifecycleProjection
from tests.factories import remember


@pytest.fixture(autouse=True)
def _clean():
    cache.clear()
    recall_events.flush()
    yield
    recall_events.flush()


def enable(memory):
    founder = Actor.for_user(User.objects.get(username="founder"))
    return actions.update_memory_policy(memory, actor=founder, policy={"recall_events": True})


def counts(entry):
    p = LifecycleProjection.objects.get(entry=entry)
    return p.recall_count, p.last_recalled_at


def test_reads_enqueue_nothing_while_off(memory, agent):
    e = remember(memory, agent.actor, "The deploy target is eu-2").entry
    assert recall_events.record(memory, [e.pk], actor_id="a") == 0
    assert recall_events.pending() == 0 and counts(e) == (0, None)


def test_a_read_never_writes_and_the_fold_counts_throttled(memory, agent, other_agent):
    e = remember(memory, agent.actor, "The deploy target is eu-2").entry
    memory = enable(memory)
    assert recall_events.record(memory, [e.pk, e.pk], actor_id=agent.actor.id) == 1
    recall_events.record(memory, [e.uid], actor_id=agent.actor.id)  # by entry_id, same actor
    recall_events.record(memory, [e.pk], actor_id=other_agent.actor.id)
    assert counts(e) == (0, None)  # nothing written on the read path
    assert recall_events.flush() == 2  # one per actor within the throttle window
    n, last = counts(e)
    assert n == 2 and last is not None
    recall_events.record(memory, [e.pk], actor_id=agent.actor.id)
    assert recall_events.flush() == 0  # throttled


def test_search_over_http_moves_the_counts_shortly_after_the_response(api, agent, memory):
    e = remember(memory, agent.actor, "The deploy target is eu-2").entry
    enable(memory)
    r = api.as_(agent).post("/api/v1/memories/acme/search", {"query": "deploy target"})
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and counts(e)[0] == 0:
        time.sleep(0.1)
    assert counts(e)[0] == 1
    r = api.as_(agent).post("/api/v1/memories/acme/context-pack", {"query": "deploy target"})
    assert r.status_code == 200, r.text
    time.sleep(recall_events.FOLD_DELAY * 3)
    assert counts(e)[0] == 1  # same actor, within the throttle window


def test_one_read_queues_one_event_per_entry_served(api, agent, memory, monkeypatch):
    """The recall path announces what it served once (``memory.effects.served``); the recall
    events hear it there, beside the exposure ledger, and queue each entry once."""
    monkeypatch.setattr(recall_events.queue, "delay", 60.0)  # the timer must not race the count
    remember(memory, agent.actor, "The deploy target is eu-2")
    remember(memory, agent.actor, "The deploy window is Tuesday")
    enable(memory)
    r = api.as_(agent).post("/api/v1/memories/acme/search", {"query": "deploy"})
    assert r.status_code == 200 and len(r.json()["hits"]) == 2
    assert recall_events.pending() == 2
    r = api.as_(agent).post("/api/v1/memories/acme/context-pack", {"query": "deploy"})
    assert r.status_code == 200 and len(r.json()["items"]) == 2
    assert recall_events.pending() == 4
