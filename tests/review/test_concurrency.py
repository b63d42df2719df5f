"""Two reviewers pressing Approve at once (PostgreSQL, real threads): exactly one wins."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from memory.models import Revision
from review import actions
from review.exceptions import AlreadyDecided
from review.models import MaintenanceOperation

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs real row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_two_reviewers_approving_at_once_make_exactly_one_revision(
    consolidation, reviewer, other_reviewer
):
    pid = consolidation["proposal"]["id"]
    before = Revision.objects.count()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def press(actor) -> None:
        try:
            barrier.wait()
            actions.approve_proposal(pid, actor=actor)
            outcomes.append("approved")
        except AlreadyDecided as exc:
            outcomes.append(f"409:{exc.details.get('decided_by')}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press, args=(k.actor,)) for k in (reviewer, other_reviewer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.split(":")[0] for o in outcomes) == ["409", "approved"]
    loser = next(o for o in outcomes if o.startswith("409"))
    assert loser.split(":")[1] in {"rita-key", "ravi-key"}
    assert Revision.objects.count() == before + 1
    assert MaintenanceOperation.objects.count() == 1
