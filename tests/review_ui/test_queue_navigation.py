"""Moving through the queue from a proposal page: previous / next links in the inbox order the
page was opened from (its filters kept as query parameters), and "Approve & next", which lands
on the next open proposal of that order, or on that inbox when none is left."""

from __future__ import annotations

import pytest

from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(memory, agent):
    return [consolidate(memory, agent.actor) for _ in range(3)]


def page_of(client, pk: int, query: str = "") -> str:
    r = client.get(f"/review/proposals/{pk}/{query}")
    assert r.status_code == 200, r.content
    return r.content.decode()


def test_middle_proposal_links_to_its_neighbours_oldest_first(rita, three):
    first, middle, last = three
    html = page_of(rita, middle.pk)
    assert f'href="/review/proposals/{first.pk}/" rel="prev"' in html
    assert f'href="/review/proposals/{last.pk}/" rel="next"' in html


def test_newest_first_order_swaps_the_neighbours_and_keeps_the_filters(rita, three):
    first, middle, last = three
    html = page_of(rita, middle.pk, "?sort=newest&amp;q=Deploys".replace("&amp;", "&"))
    assert f'href="/review/proposals/{last.pk}/?sort=newest&amp;q=Deploys" rel="prev"' in html
    assert f'href="/review/proposals/{first.pk}/?sort=newest&amp;q=Deploys" rel="next"' in html
    assert 'href="/review/?sort=newest&amp;q=Deploys" data-queue-inbox>← Inbox' in html


def test_neighbours_follow_the_search(rita, memory, agent, three):
    _first, _middle, _last = three
    other = consolidate(memory, agent.actor, rationale="Unrelated wording about caches")
    html = page_of(rita, other.pk, "?q=caches")
    # Nothing else matches "caches": no neighbours at all.
    assert 'rel="prev"' not in html and 'rel="next"' not in html


def test_the_first_and_last_proposal_have_one_neighbour(rita, three):
    first, _, last = three
    assert 'rel="prev"' not in page_of(rita, first.pk)
    assert 'rel="next"' not in page_of(rita, last.pk)


def test_inbox_rows_link_to_the_proposal_with_the_inbox_filters(rita, three):
    r = rita.get("/review/?sort=newest&limit=2")
    assert r.status_code == 200, r.content
    assert f'href="/review/proposals/{three[2].pk}/?sort=newest&amp;limit=2"' in r.content.decode()


def test_approve_and_next_opens_the_next_pending_proposal(rita, three):
    first, middle, _last = three
    r = rita.post(
        f"/review/proposals/{first.pk}/approve/", {"then": "next", "sort": "oldest", "q": ""}
    )
    assert r.status_code == 302, r.content
    assert r["Location"] == f"/review/proposals/{middle.pk}/"
    first.refresh_from_db()
    assert first.status == "approved"


def test_approve_and_next_skips_decided_proposals_and_keeps_the_filters(rita, reviewer, three):
    from review import actions

    first, middle, last = three
    actions.reject_proposal(middle.pk, actor=reviewer.actor, reason="wrong", comment="no")
    r = rita.post(f"/review/proposals/{first.pk}/approve/", {"then": "next", "q": "Deploys"})
    assert r.status_code == 302, r.content
    assert r["Location"] == f"/review/proposals/{last.pk}/?q=Deploys"


def test_approve_and_next_on_the_last_proposal_returns_to_that_inbox(rita, three):
    last = three[2]
    r = rita.post(f"/review/proposals/{last.pk}/approve/", {"then": "next", "sort": "oldest"})
    assert r.status_code == 302, r.content
    assert r["Location"] == "/review/"
    # The two before it still wait: the message does not claim the view is done.
    html = rita.get(r["Location"]).content.decode()
    assert f"None after #{last.pk} in this view; proposals listed before it are still pending." in (
        html
    )
    assert "Nothing left to review" not in html


def test_approve_and_next_on_the_only_pending_proposal_says_nothing_is_left(rita, reviewer, three):
    from review import actions

    first, middle, last = three
    actions.approve_proposal(first.pk, actor=reviewer.actor)
    actions.reject_proposal(last.pk, actor=reviewer.actor, reason="wrong", comment="no")
    r = rita.post(f"/review/proposals/{middle.pk}/approve/", {"then": "next"})
    assert r.status_code == 302, r.content
    assert r["Location"] == "/review/"
    assert "Nothing left to review in this view." in rita.get(r["Location"]).content.decode()


def test_approve_and_next_with_htmx_is_a_client_redirect(rita, three):
    first, _middle, _ = three
    r = rita.post(
        f"/review/proposals/{first.pk}/approve/",
        {"then": "next", "sort": "newest"},
        headers={"HX-Request": "true", "HX-Target": "decision"},
    )
    assert r.status_code == 200, r.content
    # Newest first: after #first there is nothing older.
    assert r["HX-Redirect"] == "/review/?sort=newest"


def test_a_refused_approve_and_next_stays_on_the_page(rita, lossy):
    r = rita.post(f"/review/proposals/{lossy.pk}/approve/", {"then": "next", "q": "Shorter"})
    assert r.status_code == 422, r.content
    html = r.content.decode()
    # The filters survive the refusal, so the next try still follows the same queue.
    assert '<input type="hidden" name="q" value="Shorter">' in html


def test_the_approve_form_carries_the_inbox_filters(rita, three):
    html = page_of(rita, three[0].pk, "?kind=consolidation&lost=no")
    assert '<input type="hidden" name="kind" value="consolidation">' in html
    assert '<input type="hidden" name="lost" value="no">' in html
    assert 'name="then" value="next"' in html


def test_auditors_see_the_queue_links_but_no_approve_and_next(ada, three):
    html = page_of(ada, three[1].pk)
    assert 'rel="prev"' in html and 'rel="next"' in html
    assert 'name="then"' not in html


def test_neighbours_cost_a_fixed_number_of_queries(
    rita, memory, agent, three, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        page_of(rita, three[1].pk, "?q=Deploys&sort=newest")
    for _ in range(10):
        consolidate(memory, agent.actor)
    with django_assert_num_queries(len(few.captured_queries)):
        page_of(rita, three[1].pk, "?q=Deploys&sort=newest")


def test_reject_and_next_opens_the_next_pending_proposal(rita, three):
    first, middle, _last = three
    r = rita.post(
        f"/review/proposals/{first.pk}/reject/",
        {"then": "next", "sort": "oldest", "reason": "wrong", "comment": "Not the same."},
    )
    assert r.status_code == 302, r.content
    assert r["Location"] == f"/review/proposals/{middle.pk}/"
    first.refresh_from_db()
    assert first.status == "rejected"
    html = rita.get(f"/review/proposals/{middle.pk}/").content.decode()
    assert "data-reject-next>Reject &amp; next</button>" in html
