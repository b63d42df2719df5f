"""Two reviewers pressing Approve in their browsers at the same moment (PostgreSQL, real
threads, the real forms): exactly one revision; the other reviewer gets a 409 naming the winner —
for the no-JavaScript form and for the htmx panel alike."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections

from memory.models import Revision
from proposals.models import Proposal
from review.models import Decision, MaintenanceOperation
from tests.review_ui.conftest import browser_client, consolidate

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs real row locks"),
    pytest.mark.django_db(transaction=True),
]


@pytest.mark.parametrize("variant", ["no-js", "htmx"])
def test_two_reviewers_approving_through_the_browser_at_once(
    variant, memory, agent, reviewer, other_reviewer
):
    p = consolidate(memory, agent.actor)
    before = Revision.objects.count()
    clients = {name: browser_client(name) for name in ("rita", "ravi")}
    extra: dict[str, Any] = (
        {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "decision"} if variant == "htmx" else {}
    )
    barrier = threading.Barrier(2)
    results: dict[str, tuple[int, str]] = {}

    def press(name: str) -> None:
        try:
            barrier.wait()
            r = clients[name].post(f"/review/proposals/{p.pk}/approve/", {"comment": name}, **extra)
            results[name] = (r.status_code, r.content.decode())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=press, args=(n,)) for n in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    success = 200 if variant == "htmx" else 302
    assert sorted(s for s, _ in results.values()) == [success, 409], results
    winner = next(n for n, (s, _) in results.items() if s == success)
    loser_page = next(html for s, html in results.values() if s == 409)
    assert f"<strong>{winner}</strong>" in loser_page
    if variant == "htmx":
        assert loser_page.lstrip().startswith('<section id="decision"')
    else:
        assert "Someone decided first" in loser_page
    assert Revision.objects.count() == before + 1
    assert Revision.objects.filter(proposal_id=p.pk).count() == 1
    assert MaintenanceOperation.objects.filter(proposal_id=p.pk).count() == 1
    assert Decision.objects.filter(proposal_id=p.pk).count() == 1
    assert Proposal.objects.get(pk=p.pk).decided_by_label == winner
