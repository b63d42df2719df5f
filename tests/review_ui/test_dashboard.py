"""The dashboard at ``/``: what needs the reviewer or auditor (assigned, claimed, waiting for
changes, stale, Memory alerts, recent decisions), each linking to its page; login required; a
short 403 for a user without a role; a fixed number of queries however many items."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions as memory_actions
from memory.actors import Actor
from proposals.actions.discussion import assign_proposal
from proposals.models import Proposal
from review import actions, claims, dashboard
from tests.review_ui.conftest import consolidate, login

pytestmark = pytest.mark.django_db

NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def user_actor(username: str) -> Actor:
    return Actor.for_user(User.objects.get(username=username))


def make_stale(memory: Any, agent: Any, p: Proposal) -> None:
    target = p.targets.order_by("position")[0].entry.uid
    memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body=f"Moved to 03:00 UTC ({p.pk})."
    )


def world(memory: Any, agent: Any, n: int = 1) -> dict[str, list[Proposal]]:
    """``n`` of every kind of item: assigned to rita, waiting for changes, stale and decided (by
    ravi), plus rita's claim on the oldest pending proposal."""
    ravi = user_actor("ravi")
    made: dict[str, list[Proposal]] = {"assigned": [], "changes": [], "stale": [], "decided": []}
    consolidate(memory, agent.actor, rationale="Oldest pending, claimed by rita")
    for i in range(n):
        p = consolidate(memory, agent.actor, rationale=f"Assigned to rita {i}")
        assign_proposal(p, actor=ravi, reviewer="rita")
        made["assigned"].append(p)
        c = consolidate(memory, agent.actor, rationale=f"Needs changes {i}")
        actions.request_changes(c.pk, actor=ravi, comment=f"Say where it lives {i}.")
        made["changes"].append(c)
        s = consolidate(memory, agent.actor, rationale=f"Goes stale {i}")
        make_stale(memory, agent, s)
        made["stale"].append(s)
        d = consolidate(memory, agent.actor, rationale=f"Approved {i}")
        actions.approve_proposal(d.pk, actor=ravi)
        made["decided"].append(d)
    claim = claims.claim_next_proposal(actor=user_actor("rita"))
    assert claim is not None
    made["claimed"] = [claim.proposal]
    return made


@pytest.fixture(autouse=True)
def _cast(reviewer, other_reviewer) -> None:
    """rita and ravi exist in every test here."""


def test_anonymous_visitors_go_to_the_login_page(client):
    r = client.get("/")
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=/")


def test_a_user_without_a_role_gets_a_short_explanation(nobody):
    r = nobody.get("/")
    assert r.status_code == 403
    html = r.content.decode()
    assert "Not allowed" in html
    assert "reviewer or auditor group" in html


def test_the_dashboard_is_get_only(rita):
    assert rita.post("/").status_code == 405


def test_a_reviewer_sees_what_needs_them_with_links(rita, memory, agent):
    made = world(memory, agent)
    r = rita.get("/")
    assert r.status_code == 200
    html = r.content.decode()
    for section in ("Assigned to you", "Claimed by you", "Waiting for changes", "Stale proposals"):
        assert section in html
    for key in ("assigned", "changes", "stale", "decided", "claimed"):
        for p in made[key]:
            assert f'href="/review/proposals/{p.pk}/"' in html, key
    assert "Assigned to rita 0" in html
    assert "Needs changes 0" in html
    assert "Goes stale 0" in html
    assert "Approve" in html and "by ravi" in html
    assert 'aria-current="page">Dashboard</a>' in html


def test_sections_hold_the_right_proposals(memory, agent):
    made = world(memory, agent)
    s = dashboard.sections(user_actor("rita"))
    assert [p.pk for p in s["assigned"]] == [p.pk for p in made["assigned"]]
    assert s["claimed"].pk == made["claimed"][0].pk
    assert [p.pk for p in s["changes"]] == [p.pk for p in made["changes"]]
    assert [p.pk for p in s["stale"]] == [p.pk for p in made["stale"]]
    decided = {d.proposal_id for d in s["decisions"]}
    assert {p.pk for p in made["decided"]} <= decided
    assert {p.pk for p in made["changes"]} <= decided  # request changes is a decision too
    # ravi assigned nothing to himself and holds no claim.
    other = dashboard.sections(user_actor("ravi"))
    assert other["assigned"] == [] and other["claimed"] is None


def test_an_auditor_reads_the_dashboard(ada, memory, agent):
    made = world(memory, agent)
    r = ada.get("/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "(read-only)" in html
    assert f'href="/review/proposals/{made["decided"][0].pk}/"' in html
    assert "Nothing is assigned to you." in html


def test_nothing_out_of_scope_is_listed(memory, agent):
    world(memory, agent)
    outside = dataclasses.replace(user_actor("rita"), memory_ids=frozenset())
    s = dashboard.sections(outside)
    assert s["assigned"] == [] and s["changes"] == [] and s["stale"] == []
    assert s["decisions"] == [] and s["claimed"] is None and s["alerts"] == []


def test_memory_alerts_link_to_the_memory_home(rita, memory, monkeypatch):
    def with_alert(m: Any) -> list[dict[str, str]]:
        return [{"code": "inactive_share_high", "message": "70% are inactive."}]

    monkeypatch.setattr(dashboard.inventory, "alerts", with_alert)
    html = rita.get("/").content.decode()
    assert "inactive_share_high" in html and "70% are inactive." in html
    assert 'href="/memories/acme/"' in html


def test_no_alerts_says_so(rita, memory):
    html = rita.get("/").content.decode()
    assert "No alerts in" in html
    assert "Nothing is assigned to you." in html
    assert "No decisions yet." in html


def test_decisions_are_the_newest_ten(memory, agent):
    ravi = user_actor("ravi")
    decided = []
    for i in range(dashboard.DECISIONS_SHOWN + 2):
        p = consolidate(memory, agent.actor, rationale=f"Approved {i}")
        actions.approve_proposal(p.pk, actor=ravi)
        decided.append(p.pk)
    s = dashboard.sections(user_actor("rita"))
    assert [d.proposal_id for d in s["decisions"]] == decided[::-1][: dashboard.DECISIONS_SHOWN]


def _count(client: Any) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/").status_code == 200
    return len(ctx.captured_queries)


def test_a_fixed_number_of_queries_with_few_and_many_items(
    rita, memory, agent, django_assert_max_num_queries
):
    world(memory, agent, n=1)
    few = _count(rita)
    world(memory, agent, n=dashboard.SECTION_ROWS + 2)
    with django_assert_max_num_queries(few):
        assert rita.get("/").status_code == 200
    many = _count(rita)
    assert many == few


def test_memories_beyond_the_cap_cost_nothing(rita, memory, staff, django_assert_max_num_queries):
    for i in range(dashboard.ALERT_MEMORIES - 1):
        memory_actions.create_memory(actor=staff, slug=f"m{i:02d}", name=f"M {i}")
    at_cap = _count(rita)
    for i in range(5):
        memory_actions.create_memory(actor=staff, slug=f"z{i:02d}", name=f"Z {i}")
    with django_assert_max_num_queries(at_cap):
        html = rita.get("/").content.decode()
    assert "Only the first 10 Memories" in html


def test_memory_alerts_cost_two_queries_each_and_never_read_entry_text(rita, memory, staff):
    """The alerts need the state counts and the pending proposals, nothing else: not the
    manifest's bytes (every active entry's text) nor the revision history, whose cost grows
    with the Memory (seconds at a million entries)."""
    with_one = _count(rita)
    memory_actions.create_memory(actor=staff, slug="second", name="Second")
    with CaptureQueriesContext(connection) as ctx:
        assert rita.get("/").status_code == 200
    assert len(ctx.captured_queries) == with_one + 2
    read = " ".join(q["sql"] for q in ctx.captured_queries)
    assert "memory_entryversion" not in read and "memory_revisionchange" not in read


@pytest.mark.browser
def test_dashboard_in_chromium_at_desktop_and_phone_widths(page, memory, agent, reviewer):
    made = world(memory, agent)
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto("/")
    assert page.get_by_role("heading", name="What needs you").is_visible()
    assert page.evaluate(NO_OVERFLOW), "overflow at 1280 px"
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate(NO_OVERFLOW), "overflow at 390 px"
    page.get_by_role("link", name=f"#{made['assigned'][0].pk} consolidation").first.click()
    page.wait_for_url(f"**/review/proposals/{made['assigned'][0].pk}/")


def test_the_queue_shows_pending_counts_per_kind_and_claim_next(rita, ada, memory, agent):
    html = rita.get("/").content.decode()
    assert "Nothing is pending. The queue is clear." in html
    first = consolidate(memory, agent.actor)
    consolidate(memory, agent.actor)
    html = rita.get("/").content.decode()
    queue = html.split('id="queue"')[1].split("</section>")[0]
    assert "<strong data-queue-total>2</strong> proposals pending." in queue
    assert (
        '<a href="/review/?kind=consolidation">consolidation</a> <span class="badge count">2</span>'
        in queue
    )
    assert ">Claim next</button>" in queue
    r = rita.post("/review/claim/", {"next": "/"})
    assert r.status_code == 302 and r["Location"] == f"/review/proposals/{first.pk}/"
    # Auditors see the queue, not the button.
    queue = ada.get("/").content.decode().split('id="queue"')[1].split("</section>")[0]
    assert "2</strong> proposals pending" in queue and "Claim next" not in queue


def test_the_navigation_links_the_memory_home(rita, memory):
    home = rita.get("/memories/acme/").content.decode()
    nav = home.split('<nav aria-label="Main">')[1].split("</nav>")[0]
    assert (
        '<a href="/memories/acme/" aria-current="page">Memory<span class="nav-long"> home</span></a>'
        in nav
    )
    dash = rita.get("/").content.decode()
    nav = dash.split('<nav aria-label="Main">')[1].split("</nav>")[0]
    assert '<a href="/#memories">Memories</a>' in nav
    assert 'id="memories"' in dash and 'href="/memories/acme/"' in dash


def test_the_dashboard_links_the_api_docs(rita):
    assert '<a href="/api/v1/docs/">API docs</a>' in rita.get("/").content.decode()
