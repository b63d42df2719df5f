"""The audit pages: who may see them, the log's filters and pagination, the entry timeline and
the revision page, links to every record they mention, and a fixed number of queries each."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client

from memory import actions
from memory.models import AuditEvent, Revision

pytestmark = pytest.mark.django_db

PAGES = ["/audit/", "/memories/acme/entries/{entry}/", "/memories/acme/revisions/2/"]


def _pages(history) -> list[str]:
    return [p.format(entry=history.entry_id) for p in PAGES]


def _text(response) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def _event_ids(response) -> list[int]:
    return [int(x) for x in re.findall(r'<tr id="event-(\d+)"', response.content.decode())]


# --- Access ---------------------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_the_login_page(history):
    for url in _pages(history):
        r = Client().get(url)
        assert r.status_code == 302, url
        assert r["Location"].startswith("/accounts/login/?next="), r["Location"]


def test_users_without_a_reading_role_get_403(history, nobody_browser):
    for url in _pages(history):
        assert nobody_browser.get(url).status_code == 403, url


def test_reviewers_auditors_and_staff_may_read(
    history, auditor_browser, reviewer_browser, staff_browser
):
    for client in (auditor_browser, reviewer_browser, staff_browser):
        for url in _pages(history):
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code)


def test_pages_accept_no_writes(history, auditor_browser, staff_browser):
    for client in (auditor_browser, staff_browser):
        for url in _pages(history):
            for method in ("post", "put", "patch", "delete"):
                assert getattr(client, method)(url).status_code == 405, (method, url)


def test_unknown_memory_entry_or_revision_is_404(history, auditor_browser):
    assert auditor_browser.get("/memories/nope/entries/e_x/").status_code == 404
    assert auditor_browser.get("/memories/acme/entries/e_missing/").status_code == 404
    assert auditor_browser.get("/memories/acme/revisions/999/").status_code == 404


# --- The log --------------------------------------------------------------------------------


def test_log_lists_events_newest_first_with_actor_label_and_links(history, auditor_browser):
    r = auditor_browser.get("/audit/")
    ids = _event_ids(r)
    assert ids == sorted(ids, reverse=True)
    assert ids == list(AuditEvent.objects.order_by("-id").values_list("id", flat=True))
    html = r.content.decode()
    forgotten = AuditEvent.objects.get(action="entry.forgotten")
    row = html[html.index(f'id="event-{forgotten.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "agent-1" in row and "The deploy target is the eu-3 cluster" in row
    assert f'href="/memories/acme/revisions/{forgotten.revision_number}/"' in row
    assert f'href="/memories/acme/entries/{history.entry_id}/"' in row
    assert f'href="/audit/?correlation={forgotten.correlation_id}"' in row
    assert 'href="/audit/?action=entry.forgotten"' in row
    assert 'href="/audit/?memory=acme"' in row
    # The action may wrap after its dot in a narrow column.
    assert "<code>entry.<wbr>forgotten</code>" in row


@pytest.mark.parametrize(
    ("query", "expected_actions"),
    [
        ("action=entry.revised", {"entry.revised"}),
        ("kind=entry", {"entry.added", "entry.revised", "entry.forgotten", "entry.reactivated"}),
        ("kind=relation", {"relation.observed"}),
        ("q=decommissioned", set()),
        ("q=k8s-prod-3", {"entry.revised"}),
    ],
)
def test_log_filters_come_from_the_url(history, auditor_browser, query, expected_actions):
    r = auditor_browser.get(f"/audit/?{query}")
    assert r.status_code == 200
    got = set(AuditEvent.objects.filter(pk__in=_event_ids(r)).values_list("action", flat=True))
    assert got == expected_actions


def test_log_filters_by_memory_and_actor(history, auditor_browser, other_memory, agent):
    agent_events = set(
        AuditEvent.objects.filter(actor_id=agent.actor.id).values_list("pk", flat=True)
    )
    r = auditor_browser.get(f"/audit/?actor={agent.actor.id}")
    assert set(_event_ids(r)) == agent_events
    r = auditor_browser.get("/audit/?memory=other")
    assert [e.action for e in AuditEvent.objects.filter(pk__in=_event_ids(r))] == ["memory.created"]
    assert 'option value="other" selected' in r.content.decode()


def test_log_filters_by_correlation_id(history, auditor_browser):
    event = AuditEvent.objects.get(action="entry.forgotten")
    r = auditor_browser.get(f"/audit/?correlation={event.correlation_id}")
    assert _event_ids(r) == [event.pk]


def test_invalid_filters_answer_422_with_the_reasons(history, auditor_browser):
    r = auditor_browser.get("/audit/?action=entry.exploded&since=yesterday")
    assert r.status_code == 422
    text = _text(r)
    assert "Not a registered action" in text and "ISO 8601" in text
    assert _event_ids(r) == []


def test_first_page_links_to_the_next_and_load_more_returns_only_rows(history, auditor_browser):
    all_ids = list(AuditEvent.objects.order_by("-id").values_list("id", flat=True))
    r = auditor_browser.get("/audit/?limit=4")
    assert _event_ids(r) == all_ids[:4]
    more = re.search(r'<tr id="load-more">.*?href="\?([^"]+)"', r.content.decode(), re.S)
    assert more is not None
    next_url = "/audit/?" + unescape(more.group(1))
    assert "limit=4" in next_url
    # Without JavaScript the link is a full page; with htmx the same URL answers the rows only.
    page = auditor_browser.get(next_url)
    assert "<h1>Audit log</h1>" in page.content.decode()
    rows = auditor_browser.get(next_url, headers={"HX-Request": "true", "HX-Target": "load-more"})
    body = rows.content.decode()
    assert "<h1>" not in body and "<table" not in body
    assert _event_ids(rows) == all_ids[4:8]
    assert rows["Vary"] and "HX-Request" in rows["Vary"]


def test_filter_change_via_htmx_returns_the_results_partial(history, auditor_browser):
    r = auditor_browser.get(
        "/audit/?kind=relation", headers={"HX-Request": "true", "HX-Target": "audit-results"}
    )
    body = r.content.decode()
    assert body.lstrip().startswith('<section id="audit-results"')
    assert "<h1>" not in body
    assert "/api/v1/audit/export?kind=relation&amp;format=csv" in body
    assert len(_event_ids(r)) == 1


def test_browser_readers_are_cleared_for_restricted_entries(history, auditor_browser, staff):
    actions.add_entry(
        history.memory,
        actor=staff,
        body="The break-glass password rotates monthly",
        kind="fact",
        sensitivity="restricted",
    )
    r = auditor_browser.get("/audit/?action=entry.added")
    assert "The break-glass password rotates monthly" in r.content.decode()
    assert "withheld" not in r.content.decode()


# --- Links to pages other apps build --------------------------------------------------------


def test_log_and_timeline_link_to_the_operation_page(history, auditor_browser, agent):
    from lib.correlation import correlation_scope
    from memory import audit

    with correlation_scope("op-demo"):
        audit.record(
            "operation.compensated",
            actor=agent.actor,
            memory=history.memory,
            label="undo",
            operation_id=7,
            entry_ids=[history.entry_id],
        )
    r = auditor_browser.get("/audit/?correlation=op-demo")
    assert "operation 7" in _text(r)
    assert 'href="/operations/7/"' in r.content.decode()
    timeline = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/")
    assert 'href="/operations/7/"' in timeline.content.decode()


# --- Entry timeline -------------------------------------------------------------------------


def test_timeline_shows_versions_with_word_diffs(history, auditor_browser):
    html = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/").content.decode()
    assert "Version 1" in html and "Version 3" in html
    assert "<del>eu-2</del><ins>eu-3</ins>" in html
    assert "<ins> (k8s-prod-3)</ins>" in html


def test_timeline_shows_lifecycle_intervals_with_reasons(history, auditor_browser):
    r = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/")
    html = r.content.decode()
    section = html[html.index('id="lifecycle"') : html.index('id="revisions"')]
    rows = re.findall(r'<tr class="interval (\w+)">(.*?)</tr>', section, re.S)
    assert [state for state, _ in rows] == ["active", "inactive", "active"]
    assert "cluster decommissioned" in rows[1][1]
    assert "cluster is back" in rows[2][1]
    assert "revision 3" in rows[0][1] and "now" in rows[2][1]


def test_timeline_shows_evidence_snapshots_and_todays_declaration(history, auditor_browser, staff):
    from memory.models import Source

    actions.declare_source(
        Source.objects.get(name="repo"),
        actor=staff,
        declaration={"authority": "untrusted", "verification": "not_verified"},
    )
    text = _text(auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/"))
    assert "repository_attested · verified · declaration v1" in text
    assert "changed since untrusted · not_verified · v2" in text
    assert "untrusted · unknown · no declaration" in text  # chat has no declaration


def test_timeline_shows_relations_revisions_and_events_with_links(history, auditor_browser):
    html = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/").content.decode()
    assert f'href="/memories/acme/entries/{history.other_id}/"' in html
    assert "conflicts_with" in html
    for number in range(1, 6):
        assert f'href="/memories/acme/revisions/{number}/"' in html
    events = html[html.index('id="events"') :]
    for action in ("entry.added", "entry.forgotten", "entry.reactivated", "relation.observed"):
        assert action in events
    assert "No proposal has touched this entry." in html


def test_timeline_lists_proposals_from_events_even_without_the_proposal_models(
    history, auditor_browser, agent
):
    from lib.correlation import correlation_scope
    from memory import audit

    with correlation_scope("p-1"):
        audit.record(
            "proposal.submitted",
            actor=agent.actor,
            memory=history.memory,
            label="merge deploy facts",
            proposal_id=41,
            entry_ids=[history.entry_id, history.other_id],
        )
    html = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/").content.decode()
    section = html[html.index('id="proposals"') : html.index('id="events"')]
    assert "Proposal 41" in section and "proposal.submitted" in section


# --- Revision page --------------------------------------------------------------------------


def test_revision_page_shows_actor_reason_and_before_after(history, auditor_browser, agent):
    html = auditor_browser.get("/memories/acme/revisions/2/").content.decode()
    text = _text(auditor_browser.get("/memories/acme/revisions/2/"))
    assert "Revision 2" in text and "revise" in text and "agent-1" in text
    assert "Before (version 1)" in text and "After (version 2)" in text
    assert "The deploy target is the eu-2 cluster" in text
    assert "The deploy target is the eu-3 cluster" in text
    assert "<del>eu-2</del><ins>eu-3</ins>" in html
    assert f'href="/memories/acme/entries/{history.entry_id}/"' in html
    assert 'href="/memories/acme/revisions/1/"' in html and 'rel="prev"' in html
    assert 'href="/memories/acme/revisions/3/"' in html and 'rel="next"' in html
    revision = Revision.objects.get(number=2)
    assert f'href="/audit/?correlation={revision.correlation_id}"' in html
    assert f'href="/audit/?actor={agent.actor.id.replace(":", "%3A")}"' in html


def test_revision_page_of_a_forget_shows_the_reason_and_state_change(history, auditor_browser):
    text = _text(auditor_browser.get("/memories/acme/revisions/3/"))
    assert "cluster decommissioned" in text
    assert "v2 active → v2 inactive" in text


# --- Fixed query counts ---------------------------------------------------------------------


def _grow(memory, agent, n: int) -> None:
    for i in range(n):
        actions.add_entry(
            memory, actor=agent.actor, body=f"Fact number {i} about widget {i}", kind="fact"
        )


@pytest.mark.parametrize("extra", [0, 30])
def test_log_page_costs_a_fixed_number_of_queries(
    history, agent, auditor_browser, django_assert_max_num_queries, extra
):
    _grow(history.memory, agent, extra)
    with django_assert_max_num_queries(6):
        r = auditor_browser.get("/audit/?memory=acme&kind=entry&q=e")
    assert r.status_code == 200


@pytest.mark.parametrize("revisions", [0, 12])
def test_timeline_costs_a_fixed_number_of_queries(
    history, agent, auditor_browser, django_assert_max_num_queries, revisions
):
    for i in range(revisions):
        actions.revise_entry(
            history.memory,
            actor=agent.actor,
            entry_uid=history.entry_id,
            body=f"The deploy target is cluster number {i}",
            evidence=[{"source": "repo", "ref": f"deploy/{i}.yaml"}],
        )
    # One query more than the history alone: the exposure ledger's "served to N runs".
    with django_assert_max_num_queries(13):
        r = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/")
    assert r.status_code == 200


def test_revision_page_costs_a_fixed_number_of_queries(
    history, auditor_browser, django_assert_max_num_queries
):
    with django_assert_max_num_queries(8):
        r = auditor_browser.get("/memories/acme/revisions/2/")
    assert r.status_code == 200


def test_timeline_shows_the_newest_events_and_links_to_the_rest(
    history, auditor_browser, monkeypatch
):
    from review import history as pages

    monkeypatch.setattr(pages, "TIMELINE_EVENTS", 2)
    html = auditor_browser.get(f"/memories/acme/entries/{history.entry_id}/").content.decode()
    events = html[html.index('id="events"') :]
    assert len(re.findall(r'<tr id="event-', events)) == 2
    assert "relation.observed" in events and "entry.added" not in events
    assert f'href="/audit/?memory=acme&amp;entry={history.entry_id}"' in events


def _approved_consolidations(memory, agent, reviewer, n: int) -> str:
    """n approved consolidations into one target entry; returns the target's id."""
    from proposals.requests import submit_request
    from review.actions import approve_proposal
    from tests.audit.conftest import in_request

    target = in_request(
        actions.add_entry, memory, actor=agent.actor, body="Deploys run at 02:00 UTC", kind="fact"
    ).entry.uid
    for i in range(n):
        redundant = in_request(
            actions.add_entry,
            memory,
            actor=agent.actor,
            body=f"Deploys happen nightly, note {i}",
            kind="fact",
            dedupe=False,
        ).entry.uid
        version = i + 1
        proposal = in_request(
            submit_request,
            actor=agent.actor,
            data={
                "memory": memory.slug,
                "kind": "consolidation",
                "rationale": "the same schedule",
                "target": {"entry_id": target, "version": version},
                "redundant": [{"entry_id": redundant, "version": 1}],
                "body": "Deploys run nightly at 02:00 UTC (notes "
                + ", ".join(str(k) for k in range(i + 1))
                + ")",
            },
        ).proposal
        in_request(approve_proposal, proposal.pk, actor=reviewer.actor, comment=f"ok {i}")
    return target


@pytest.mark.parametrize("approved", [1, 3])
def test_timeline_with_proposals_and_decisions_costs_a_fixed_number_of_queries(
    memory, agent, reviewer, auditor_browser, django_assert_max_num_queries, approved
):
    target = _approved_consolidations(memory, agent, reviewer, approved)
    with django_assert_max_num_queries(15):
        r = auditor_browser.get(f"/memories/acme/entries/{target}/")
    html = r.content.decode()
    section = html[html.index('id="proposals"') : html.index('id="events"')]
    assert section.count("<strong>approve</strong> by") == approved
    assert section.count("consolidation") == approved
