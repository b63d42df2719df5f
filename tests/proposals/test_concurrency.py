"""Concurrent submissions on PostgreSQL with real threads over real HTTP: the one-open rule
holds (exactly one 201), and a submission racing a revise never leaves a pending proposal that
can no longer apply."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from proposals.models import Proposal

from .conftest import E, P, add, consolidation

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs real row locks"),
    pytest.mark.django_db(transaction=True),
]


def _race(calls) -> list:
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_concurrent_submissions_for_the_same_set_exactly_one_is_created(
    api, agent, other_agent
):
    a = api.as_(agent)
    x = add(a, "Redis is only a cache")
    y = add(a, "Redis is only used as a cache")
    body = consolidation(x, [y], "Redis is only used as a cache")
    clients = [api.as_(agent), api.as_(other_agent)]
    for _ in range(3):
        results = _race([lambda c=c: c.post(P, body) for c in clients])
        statuses = sorted(r.status_code for r in results)
        assert statuses == [201, 409], [r.text for r in results]
        winner = next(r for r in results if r.status_code == 201).json()["id"]
        loser = next(r for r in results if r.status_code == 409).json()["error"]
        assert loser["code"] == "duplicate_proposal"
        assert loser["details"]["proposal"] == winner
        assert Proposal.objects.filter(status="pending").count() == 1
        # Free the set for the next round: the winner withdraws.
        owner = clients[[r.status_code for r in results].index(201)]
        assert owner.post(f"{P}/{winner}/withdraw", {}).status_code == 200


def test_a_submission_racing_a_revise_is_never_left_pending_and_stale(api, agent):
    a = api.as_(agent)
    for i in range(3):
        x = add(a, f"Service {i} uses Redis as a cache")
        y = add(a, f"Service {i} uses Redis only as a cache")
        submit_body = consolidation(x, [y], f"Service {i} uses Redis as a cache")
        revise_url = f"{E}/{y['entry_id']}/revise"
        revise_body = {"body": f"Service {i} uses Valkey"}
        results = _race(
            [
                lambda b=submit_body: a.post(P, b),
                lambda u=revise_url, b=revise_body: a.post(u, b),
            ]
        )
        submitted, revised = results
        assert revised.status_code == 201, revised.text
        if submitted.status_code == 201:
            # Submitted first: the revise made it stale in the same transaction.
            status = a.get(f"{P}/{submitted.json()['id']}").json()["status"]
            assert status == "stale"
        else:
            # Revised first: the submission saw the new head and was refused.
            assert submitted.status_code == 409, submitted.text
            assert submitted.json()["error"]["code"] == "stale_proposal"
    assert not Proposal.objects.filter(status="pending").exists()
