"""Concurrent writers on PostgreSQL with real threads: the Memory lock serializes them."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from memory import actions
from memory.exceptions import VersionConflict
from memory.models import Revision
from tests.factories import remember

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs real row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_two_threads_revising_with_the_same_expected_version_one_wins(memory, agent):
    eid = remember(memory, agent.actor, "The cache TTL is 60s").entry.uid
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def revise(body: str) -> None:
        try:
            barrier.wait()
            actions.revise_entry(
                memory, actor=agent.actor, entry_uid=eid, body=body, expected_version=1
            )
            outcomes.append("ok")
        except VersionConflict:
            outcomes.append("conflict")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=revise, args=(f"The cache TTL is {s}s",)) for s in (90, 120)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "ok"]
    numbers = list(Revision.objects.filter(memory=memory).values_list("number", flat=True))
    assert numbers == [1, 2]


def test_many_concurrent_adds_get_gap_free_revision_numbers(memory, agent):
    barrier = threading.Barrier(6)

    def add(i: int) -> None:
        try:
            barrier.wait()
            remember(memory, agent.actor, f"Service {i} listens on port {8000 + i}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    numbers = list(
        Revision.objects.filter(memory=memory).order_by("number").values_list("number", flat=True)
    )
    assert numbers == [1, 2, 3, 4, 5, 6]
