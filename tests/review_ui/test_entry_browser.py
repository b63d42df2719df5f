"""The entry browser at ``/memories/<slug>/entries/``: entries the reader may see, newest first,
with state, kind, tier, importance and pin; filters and a text search in the URL; keyset "Load
more"; a link per row to the entry timeline; a fixed number of queries per page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions as memory_actions
from memory.models import Entry
from tests.memory.conftest import supersede
from tests.review_ui.conftest import add, login

pytestmark = pytest.mark.django_db

URL = "/memories/acme/entries/"
HMTX_LOAD_MORE: dict[str, Any] = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "load-more"}
NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"


def ids_on(html: str) -> list[str]:
    return re.findall(r'<tr id="entry-(e_[^"]+)"', html)


def listed(client: Any, query: str = "") -> list[str]:
    r = client.get(URL + query)
    assert r.status_code == 200, r.content
    return ids_on(r.content.decode())


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_anonymous_visitors_go_to_the_login_page(client, memory):
    r = client.get(URL)
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/")


def test_a_user_without_a_role_is_refused(nobody):
    assert nobody.get(URL).status_code == 403


def test_an_unknown_memory_is_not_found(rita):
    assert rita.get("/memories/nope/entries/").status_code == 404


def test_entries_newest_first_with_state_kind_tier_importance_and_a_timeline_link(
    rita, memory, agent
):
    first = add(memory, agent.actor, "The staging cluster lives in eu-west-1")
    second = add(memory, agent.actor, "Prefer tabs over spaces", kind="preference")
    r = rita.get(URL)
    html = r.content.decode()
    assert ids_on(html) == [second, first]
    assert f'href="/memories/acme/entries/{second}/"' in html
    assert "Prefer tabs over spaces" in html
    row = html.split(f'<tr id="entry-{second}"')[1].split("</tr>")[0]
    assert "preference" in row and "long" in row and ">active</span>" in row
    projection = Entry.objects.get(uid=second).projection
    assert f'<td data-label="Importance">{projection.importance}</td>' in row


def test_filters_state_kind_and_pinned_live_in_the_url(rita, memory, agent, reviewer):
    kept = add(memory, agent.actor, "Deploys run nightly at 02:00 UTC")
    gone = add(memory, agent.actor, "The old VPN is vpn-1")
    pref = add(memory, agent.actor, "Prefer small pull requests", kind="preference")
    memory_actions.forget_entry(memory, actor=agent.actor, entry_uid=gone, reason="moved")
    memory_actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=kept,
        pinned=True,
        category="durable_decision",
        reason="team decision",
    )
    assert listed(rita, "?state=inactive") == [gone]
    assert listed(rita, "?state=active") == [pref, kept]
    assert listed(rita, "?kind=preference") == [pref]
    assert listed(rita, "?pinned=yes") == [kept]
    assert listed(rita, "?pinned=no&state=active") == [pref]
    html = rita.get(URL + "?state=inactive").content.decode()
    assert '<option value="inactive" selected>' in html
    assert "All entries" in html


def test_withheld_states_are_filters_too(rita, memory, agent, reviewer):
    add(memory, agent.actor, "A plain fact")
    hidden = add(memory, agent.actor, "A scraped page")
    memory_actions.quarantine_entry(
        memory, actor=reviewer.actor, entry_uid=hidden, reason="scraped"
    )
    assert listed(rita, "?state=quarantined") == [hidden]
    assert listed(rita, "?state=candidate") == []
    assert "scraped" in rita.get(URL + "?state=quarantined").content.decode()


def test_an_unknown_filter_value_is_a_422_that_says_why(rita, memory):
    r = rita.get(URL + "?state=deleted&kind=rumour")
    assert r.status_code == 422
    html = r.content.decode()
    assert "These filters cannot be used" in html
    assert "<strong>state</strong>" in html and "<strong>kind</strong>" in html


def test_load_more_follows_a_keyset_cursor(rita, memory, agent):
    uids = [add(memory, agent.actor, f"Fact number {i} about the build farm") for i in range(5)]
    html = rita.get(URL + "?limit=2").content.decode()
    assert ids_on(html) == uids[::-1][:2]
    more = re.search(r'<a href="\?([^"]+)" hx-get', html)
    assert more is not None
    query = more.group(1).replace("&amp;", "&")
    assert "cursor=" in query and "limit=2" in query
    second = rita.get(f"{URL}?{query}", **HMTX_LOAD_MORE)
    page2 = second.content.decode()
    assert ids_on(page2) == uids[::-1][2:4]
    assert "<h1>" not in page2  # only the rows partial
    assert 'id="load-more"' in page2
    assert "HX-Target" in second["Vary"]
    assert rita.get(URL + "?cursor=not-json!").status_code == 422


def test_filters_swap_only_the_results_under_htmx(rita, memory, agent):
    add(memory, agent.actor, "Prefer small pull requests", kind="preference")
    r = rita.get(URL + "?kind=preference", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="entry-results")
    html = r.content.decode()
    assert html.lstrip().startswith('<section id="entry-results"')
    assert "Prefer small pull requests" in html


def test_q_searches_text_with_the_filters_applied(rita, memory, agent):
    deploy = add(memory, agent.actor, "Deploys run nightly at 02:00 UTC via deploy.sh")
    add(memory, agent.actor, "The staging cluster lives in eu-west-1")
    pref = add(memory, agent.actor, "Prefer deploys on Tuesdays", kind="preference")
    found = listed(rita, "?q=deploys")
    assert set(found) == {deploy, pref}
    assert listed(rita, "?q=deploys&kind=preference") == [pref]
    assert listed(rita, "?q=zzzz-nothing") == []
    assert "Text search" in rita.get(URL + "?q=deploys").content.decode()


def test_entries_above_the_clearance_are_left_out(memory, agent, staff):
    from dataclasses import replace

    from memory.web.entries import EntryFilter, filtered

    add(memory, agent.actor, "Public enough", sensitivity="internal")
    secret = add(memory, staff, "The root password hint", sensitivity="restricted")
    low = replace(agent.actor, clearance="internal")
    uids = [e.uid for e in filtered(low, memory, EntryFilter())]
    assert secret not in uids and len(uids) == 1


def test_the_memory_home_and_the_nav_link_the_browser(rita, memory):
    html = rita.get("/memories/acme/").content.decode()
    assert f'href="{URL}">Browse entries</a>' in html
    assert f'<a href="{URL}" >Entries</a>' in html
    page = rita.get(URL).content.decode()
    assert f'<a href="{URL}" aria-current="page">Entries</a>' in page


def test_a_page_is_chosen_on_the_entries_alone(rita, memory, agent):
    """The page's keys come from the entry table alone, its rows are then read by key (joined
    into the LIMIT query, the heads were merge-joined from their first row: a page of a small
    Memory beside a large one read the large one's rows)."""
    for i in range(3):
        add(memory, agent.actor, f"Chosen: fact {i} about the build farm")
    with CaptureQueriesContext(connection) as ctx:
        assert len(listed(rita, "?limit=2")) == 2
    (chooser,) = [q["sql"] for q in ctx.captured_queries if "LIMIT 3" in q["sql"]]
    assert 'FROM "memory_entry"' in chooser and "JOIN" not in chooser, chooser


def test_a_fixed_number_of_queries_per_page(rita, memory, agent, django_assert_max_num_queries):
    for i in range(3):
        add(memory, agent.actor, f"Few: fact {i} about the build farm")
    few = count_queries(rita, URL + "?limit=20")
    for i in range(40):
        uid = add(memory, agent.actor, f"Many: fact {i} about the build farm")
        if i % 7 == 0:
            memory_actions.forget_entry(memory, actor=agent.actor, entry_uid=uid, reason="old")
    with django_assert_max_num_queries(few):
        assert rita.get(URL + "?limit=20").status_code == 200
    assert count_queries(rita, URL + "?limit=20") == few
    assert count_queries(rita, URL + "?limit=20&state=active&pinned=no") == few


@pytest.mark.browser
def test_entry_browser_in_chromium_at_desktop_and_phone_widths(page, memory, agent, reviewer):
    uids = [add(memory, agent.actor, f"Browser fact {i} about the build farm") for i in range(3)]
    login(page, "rita", "pw-rita-123", next_path="/review/")
    page.goto(URL + "?limit=2")
    assert page.get_by_role("heading", name=re.compile("Entries")).is_visible()
    assert page.evaluate(NO_OVERFLOW), "overflow at 1280 px"
    page.get_by_role("link", name="Load more").click()
    page.locator(f"#entry-{uids[0]}").wait_for()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(URL)
    assert page.evaluate(NO_OVERFLOW), "overflow at 390 px"
    page.get_by_label("Kind").select_option("preference")
    page.wait_for_url("**kind=preference**")
    page.get_by_text("No entries match these filters.").wait_for()
    page.get_by_label("Kind").select_option("")
    page.locator(f"#entry-{uids[1]}").wait_for()
    page.get_by_role("link", name=f"Timeline of entry {uids[1]}").click()
    page.wait_for_url(f"**/entries/{uids[1]}/")


def test_the_memory_home_and_the_entry_browser_link_the_search_playground(rita, memory):
    for page in ("/memories/acme/", URL):
        html = rita.get(page).content.decode()
        assert 'href="/memories/acme/search/">Search playground</a>' in html, page


def test_an_unknown_memory_gets_the_sites_own_not_found_page(rita, memory):
    for page in ("/memories/nope/", "/memories/nope/entries/", "/memories/nope/maintenance/"):
        r = rita.get(page)
        assert r.status_code == 404, page
        html = r.content.decode()
        assert 'class="skip-link"' in html and "/static/css/app.css" in html, page


def test_a_refusal_is_the_sites_own_page_and_says_why(nobody):
    for page in ("/memories/acme/", URL):
        r = nobody.get(page)
        assert r.status_code == 403, page
        html = r.content.decode()
        assert 'class="skip-link"' in html and "/static/css/app.css" in html, page
        assert "Only reviewers, auditors and staff may" in html, page


def test_a_superseded_entry_reads_superseded_by_its_successor_never_active(rita, memory, agent):
    old = add(memory, agent.actor, "The deploy target is eu-1")
    new = add(memory, agent.actor, "The deploy target is eu-2")
    supersede(memory, old=Entry.objects.get(uid=old), new=Entry.objects.get(uid=new))
    html = rita.get(URL).content.decode()
    old_row = html.split(f'<tr id="entry-{old}"')[1].split("</tr>")[0]
    new_row = html.split(f'<tr id="entry-{new}"')[1].split("</tr>")[0]
    assert 'data-validity="superseded"' in old_row and ">superseded</span>" in old_row
    assert ">active</span>" not in old_row
    assert f'href="/memories/acme/entries/{new}/"' in old_row
    assert 'data-validity="current"' in new_row and ">active</span>" in new_row
    # A filter of its own, in the URL.
    assert listed(rita, "?validity=superseded") == [old]
    assert listed(rita, "?validity=current") == [new]
    assert (
        '<option value="superseded" selected>'
        in rita.get(URL + "?validity=superseded").content.decode()
    )
    assert rita.get(URL + "?validity=stale").status_code == 422

    # The entry page's headline says so too: never "Current text · active".
    page = rita.get(f"{URL}{old}/").content.decode()
    h1 = page.split("<h1>")[1].split("</h1>")[0]
    assert ">superseded</span>" in h1 and "active" not in h1
    assert "Superseded by" in page and f'href="/memories/acme/entries/{new}/"' in page
    current = page.split('id="current-h">')[1].split("</h2>")[0]
    assert current.startswith("Latest text") and "active" not in current
    successor = rita.get(f"{URL}{new}/").content.decode()
    assert 'id="current-h">Current text <span class="badge ok">active</span>' in successor
