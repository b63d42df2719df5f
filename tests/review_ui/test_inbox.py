"""The inbox page: filters and sort in the URL, keyset pages, counts per kind, badges, the polled
"new items" endpoint, escaping, and a fixed number of queries whatever the queue size."""

from __future__ import annotations

import itertools
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions as memory_actions
from memory.actors import Actor
from memory.models import Entry
from proposals.models import Proposal
from proposals.requests import submit_request
from proposals.selectors import visible_proposals
from review import actions, claims
from review.inbox import COUNT_CAP
from tests.conftest import make_key
from tests.review_ui.conftest import add, consolidate

pytestmark = pytest.mark.django_db


def ids_on(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'<li id="proposal-(\d+)"', html)]


_notes = itertools.count()


def cleanup(memory, actor, n: int = 2):
    entries = [
        add(memory, actor, f"Scratch note {next(_notes)} about nothing much") for _ in range(n)
    ]
    return submit_request(
        actor=actor,
        data={
            "memory": memory.slug,
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": e, "version": 1} for e in entries],
        },
    ).proposal


def test_pending_oldest_first_by_default_and_newest_on_request(rita, memory, agent):
    made = [consolidate(memory, agent.actor).pk for _ in range(3)]
    r = rita.get("/review/")
    assert r.status_code == 200
    assert ids_on(r.content.decode()) == made
    assert ids_on(rita.get("/review/?sort=newest").content.decode()) == made[::-1]


def test_filters_by_kind_memory_and_status(rita, memory, other_memory, agent, reviewer):
    c = consolidate(memory, agent.actor)
    k = cleanup(memory, agent.actor)
    decided = consolidate(memory, agent.actor)
    actions.approve_proposal(decided.pk, actor=reviewer.actor)
    assert ids_on(rita.get("/review/?kind=cleanup").content.decode()) == [k.pk]
    assert ids_on(rita.get("/review/?kind=consolidation").content.decode()) == [c.pk]
    assert ids_on(rita.get("/review/?status=approved").content.decode()) == [decided.pk]
    assert ids_on(rita.get("/review/?status=all").content.decode()) == [c.pk, k.pk, decided.pk]
    assert ids_on(rita.get("/review/?memory=acme").content.decode()) == [c.pk, k.pk]
    assert ids_on(rita.get("/review/?memory=other").content.decode()) == []


def test_unknown_filter_values_are_reported_not_ignored(rita, proposal):
    r = rita.get("/review/?kind=merge&sort=sideways&memory=nope")
    assert r.status_code == 400
    html = r.content.decode()
    assert "kind: One of consolidation" in html and "sort: oldest or newest." in html
    assert "No memory &#x27;nope&#x27; you can see." in html
    assert rita.get("/review/?cursor=%%%").status_code == 400


def test_keyset_pages_keep_the_filters_and_never_repeat(rita, memory, agent):
    made = [consolidate(memory, agent.actor).pk for _ in range(5)]
    r = rita.get("/review/?kind=consolidation&limit=2")
    html = r.content.decode()
    assert ids_on(html) == made[:2]
    seen = list(ids_on(html))
    while m := re.search(r'href="(/review/\?[^"]*cursor=[^"]*)" rel="next"', html):
        url = m.group(1).replace("&amp;", "&")
        assert "kind=consolidation" in url
        html = rita.get(url + "&limit=2").content.decode()
        seen += ids_on(html)
    assert seen == made
    # A proposal filed meanwhile does not shift the pages.
    first = rita.get("/review/?sort=newest&limit=2").content.decode()
    m = re.search(r"cursor=([^&\"]+)", first)
    assert m is not None
    cursor = m.group(1)
    consolidate(memory, agent.actor)
    second = rita.get(f"/review/?sort=newest&limit=2&cursor={cursor}").content.decode()
    assert ids_on(second) == made[::-1][2:4]


def test_counts_per_kind_follow_the_other_filters(rita, memory, agent):
    for _ in range(2):
        consolidate(memory, agent.actor)
    cleanup(memory, agent.actor)
    html = rita.get("/review/?kind=cleanup").content.decode()
    counts = dict(re.findall(r'>\s*(\w+) <span class="count">(\S+)</span>', html))
    assert counts == {
        "All": "3",
        "Consolidation": "2",
        "Supersession": "0",
        "Promotion": "0",
        "Cleanup": "1",
        "Admission": "0",
        "Quarantine": "0",
        "Policy": "0",
    }


def test_counts_are_capped(rita, memory, agent, monkeypatch):
    monkeypatch.setattr("review.inbox.COUNT_CAP", 2)
    for _ in range(3):
        consolidate(memory, agent.actor)
    html = rita.get("/review/").content.decode()
    assert 'Consolidation <span class="count">2+</span>' in html
    assert COUNT_CAP == 1000


def test_badges_for_lost_details_stale_claims_and_age(
    rita, memory, agent, reviewer, lossy, proposal
):
    target = proposal.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys run at 05:00 UTC now."
    )
    claims.claim_next_proposal(actor=_actor("ravi"))
    html = rita.get("/review/").content.decode()
    assert "3 lost details" in html
    assert "claimed by ravi" in html
    assert "just now" in html and "0 minutes" not in html
    stale = rita.get("/review/?status=stale").content.decode()
    assert ids_on(stale) == [proposal.pk]
    assert '<span class="badge stale"' in stale


def test_rows_without_lost_details_approve_in_place_others_link_to_acknowledge(
    rita, lossy, proposal
):
    html = rita.get("/review/").content.decode()
    lossy_row = html.split(f'<li id="proposal-{lossy.pk}"')[1].split('<li id="proposal-')[0]
    plain_row = html.split(f'<li id="proposal-{proposal.pk}"')[1]
    assert "Acknowledge &amp; approve" in lossy_row and "data-approve>" not in lossy_row
    assert f'hx-post="/review/proposals/{proposal.pk}/approve/"' in plain_row
    assert f'hx-target="#proposal-{proposal.pk}"' in plain_row
    assert 'hx-disabled-elt="find button"' in plain_row


def test_rows_the_reviewer_submitted_or_edited_offer_no_decision_and_say_why(
    rita, ravi, memory, agent
):
    """Approve on such a row could only be refused (403, which the page does not show), so the
    row offers neither Approve nor Reject nor a bulk checkbox: it says who decides."""
    from django.contrib.auth.models import User

    from proposals.actions.discussion import amend_proposal

    own = consolidate(memory, make_key("rita-agent", "agent", owner="rita").actor)
    edited = consolidate(memory, agent.actor)
    amend_proposal(
        edited,
        actor=Actor.for_user(User.objects.get(username="rita")),
        changes={"body": f"{edited.payload['body']} (edited)"},
    )
    other = consolidate(memory, agent.actor)

    def row(html: str, pk: int) -> str:
        return html.split(f'<li id="proposal-{pk}"')[1].split('<li id="proposal-')[0]

    html = rita.get("/review/").content.decode()
    for pk, note in ((own.pk, "You submitted it"), (edited.pk, "You edited it")):
        mine = row(html, pk)
        assert f"{note}, so another reviewer decides." in mine
        assert "data-approve" not in mine and "Reject…" not in mine
        assert 'name="ids"' not in mine
    assert "data-approve" in row(html, other.pk) and 'name="ids"' in row(html, other.pk)
    assert "another reviewer decides" not in row(html, other.pk)
    # Another reviewer decides them from the inbox as usual.
    theirs = ravi.get("/review/").content.decode()
    assert "data-approve" in row(theirs, own.pk) and "data-approve" in row(theirs, edited.pk)


def test_script_in_entry_text_and_rationale_renders_escaped(rita, memory, agent):
    evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    p = consolidate(
        memory,
        agent.actor,
        a=f"Deploy at 02:00 UTC {evil}",
        b=f"Deploys at 02:00 UTC {evil} nightly",
        body=f"Deploys nightly at 02:00 UTC {evil}",
        rationale=f"Duplicate {evil}",
    )
    for url in ("/review/", f"/review/proposals/{p.pk}/"):
        html = rita.get(url).content.decode()
        assert "<script>alert" not in html, url
        assert "<img src=x" not in html, url
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html, url


def test_new_items_badge_returns_only_a_count(rita, memory, agent, proposal):
    page = rita.get("/review/").content.decode()
    m = re.search(r'hx-get="([^"]+)" hx-trigger="every 20s"', page)
    assert m is not None
    href = m.group(1).replace("&amp;", "&")
    empty = rita.get(href)
    assert empty.status_code == 200 and empty.content.strip() == b""
    consolidate(memory, agent.actor)
    consolidate(memory, agent.actor)
    r = rita.get(href)
    assert r.status_code == 200
    assert (
        r.content.decode().strip() == '<a class="badge new" href="/review/?sort=newest">2 new</a>'
    )


def test_new_items_badge_respects_the_filters(rita, memory, agent, proposal):
    after = proposal.pk
    cleanup(memory, agent.actor)
    assert b"1 new" in rita.get(f"/review/new/?after={after}").content
    assert rita.get(f"/review/new/?after={after}&kind=consolidation").content.strip() == b""


def _make(memory, agent, n: int) -> None:
    for i in range(n):
        if i % 5 == 0:
            consolidate(
                memory,
                agent.actor,
                a=f"Deploy {i} at 02:00 UTC via deploy.sh",
                b=f"Deploys {i} nightly",
                body=f"Deploys {i} nightly",
            )
        elif i % 5 == 1:
            cleanup(memory, agent.actor)
        else:
            consolidate(memory, agent.actor)


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(url)
    assert r.status_code == 200, r.content
    return len(ctx.captured_queries)


def test_inbox_costs_the_same_queries_for_5_and_50_proposals(
    rita, memory, agent, django_assert_max_num_queries
):
    _make(memory, agent, 5)
    claims.claim_next_proposal(actor=_actor("rita"))
    small = _queries(rita, "/review/")
    _make(memory, agent, 45)
    html = rita.get("/review/").content.decode()
    assert len(ids_on(html)) == 50
    large = _queries(rita, "/review/")
    assert small == large <= 11  # + the reviewers "Assign" offers, + the saved views
    with django_assert_max_num_queries(11):
        rita.get("/review/?status=all&sort=newest")
    with django_assert_max_num_queries(4):
        rita.get("/review/new/?after=0")


def _actor(username: str):
    from django.contrib.auth.models import User

    from memory.actors import Actor

    return Actor.for_user(User.objects.get(username=username))


@pytest.fixture(autouse=True)
def _cast(reviewer, other_reviewer) -> None:
    """rita and ravi exist in every test here."""


def test_inbox_visibility_equals_the_proposals_visibility_rule(memory, agent, reviewer):
    """The inbox skips the clearance subquery only where it cannot hide anything."""
    plain = consolidate(memory, agent.actor)
    secret = consolidate(
        memory,
        Actor.system(),
        a="Vault root rotates at 02:00 UTC",
        b="Vault root rotates nightly at 02:00 UTC",
        body="Vault root rotates nightly at 02:00 UTC",
    )
    # One affected entry above an internal clearance (set directly: no action re-labels one).
    Entry.objects.filter(proposal_targets__proposal=secret).update(sensitivity="restricted")
    low = make_key("low", "reviewer").actor
    actors = [_actor("rita"), low, make_key("high", "reviewer", clearance="restricted").actor]
    for actor in actors:
        mine = set(visible_proposals(actor).values_list("pk", flat=True))
        assert mine == set(Proposal.objects.visible_to(actor).values_list("pk", flat=True))
    assert set(visible_proposals(low).values_list("pk", flat=True)) == {plain.pk}
    assert set(visible_proposals(_actor("rita")).values_list("pk", flat=True)) == {
        plain.pk,
        secret.pk,
    }
