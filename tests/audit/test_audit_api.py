"""``GET /api/v1/audit/events``: who may read it, its filters (the same as the page's), keyset
pagination at page boundaries, scope and clearance, and a fixed number of queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from lib.correlation import correlation_scope
from memory import actions, audit
from memory.models import AuditEvent
from tests.audit.conftest import bearer, in_request
from tests.conftest import make_key

pytestmark = pytest.mark.django_db

URL = "/api/v1/audit/events"


def get(key, query: str = "", **extra):
    return Client().get(f"{URL}?{query}" if query else URL, headers=bearer(key), **extra)


def all_pages(key, query: str) -> tuple[list[int], list[int]]:
    """Follow next_cursor to the end; return the ids and the size of every page."""
    ids: list[int] = []
    sizes: list[int] = []
    cursor = None
    while True:
        r = get(key, query + (f"&cursor={cursor}" if cursor else ""))
        assert r.status_code == 200, r.content
        body = r.json()
        ids += [item["id"] for item in body["items"]]
        sizes.append(len(body["items"]))
        cursor = body["next_cursor"]
        if cursor is None:
            return ids, sizes


def add_many(memory, agent, n: int, prefix: str = "Widget fact") -> None:
    for i in range(n):
        in_request(actions.add_entry, memory, actor=agent.actor, body=f"{prefix} {i}", kind="fact")


# --- Who may read ---------------------------------------------------------------------------


def test_auditors_reviewers_and_staff_keys_read_agents_get_403(history, auditor, reviewer, agent):
    assert get(auditor).status_code == 200
    assert get(reviewer).status_code == 200
    r = get(agent)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "forbidden"


def test_no_key_is_401_and_a_browser_session_reads_like_its_role(history, auditor_browser):
    r = Client().get(URL)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "not_authenticated"
    assert auditor_browser.get(URL).status_code == 200


def test_item_shape(history, auditor, agent):
    r = get(auditor, "action=entry.forgotten")
    [item] = r.json()["items"]
    event = AuditEvent.objects.get(action="entry.forgotten")
    assert item == {
        "id": event.pk,
        "action": "entry.forgotten",
        "recorded_at": item["recorded_at"],
        "actor": {"type": "agent", "id": agent.actor.id, "label": "agent-1", "on_behalf_of": None},
        "correlation_id": event.correlation_id,
        "memory": "acme",
        "label": "The deploy target is the eu-3 cluster",
        "revision": 3,
        "proposal": None,
        "operation": None,
        "run": None,
        "entry_ids": [history.entry_id],
        "payload": {"version": 2, "reason": "cluster decommissioned"},
        "redacted": False,
    }
    assert item["recorded_at"].endswith("Z")


# --- Filters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("action=entry.revised", ["entry.revised", "entry.revised"]),
        ("kind=relation", ["relation.observed"]),
        ("kind=source", ["source.registered", "source.registered"]),
        ("memory=acme&kind=memory", ["memory.created"]),
        ("q=K8S-PROD", ["entry.revised"]),
        (
            "entry={entry}",
            [
                "relation.observed",
                "entry.revised",
                "entry.reactivated",
                "entry.forgotten",
                "entry.revised",
                "entry.added",
            ],
        ),
    ],
)
def test_filters(history, auditor, query, expected):
    r = get(auditor, query.format(entry=history.entry_id))
    assert r.status_code == 200, r.content
    assert [i["action"] for i in r.json()["items"]] == expected


def test_actor_filter_matches_the_actor_id_its_owner_and_its_label(history, auditor, reviewer):
    rita = reviewer.actor
    in_request(
        actions.pin_entry,
        history.memory,
        actor=rita,
        entry_uid=history.entry_id,
        pinned=True,
        category="durable_decision",
        reason="we decided this",
    )
    by_key = [i["action"] for i in get(auditor, f"actor={rita.id}").json()["items"]]
    by_owner = [i["action"] for i in get(auditor, f"actor={rita.on_behalf_of}").json()["items"]]
    by_label = [i["action"] for i in get(auditor, "actor=rita-key").json()["items"]]
    assert by_key == by_owner == by_label == ["entry.pinned"]


def test_correlation_filter_returns_the_events_of_one_request(history, auditor, agent):
    with correlation_scope("req-many"):
        actions.end_session(history.memory, actor=agent.actor, session_id="s-none")
        audit.record("maintenance.run", actor=agent.actor, memory=history.memory, run_id=3)
        audit.record("projection.rebuilt", actor=agent.actor, memory=history.memory)
    items = get(auditor, "correlation=req-many").json()["items"]
    assert [i["action"] for i in items] == ["projection.rebuilt", "maintenance.run"]
    assert items[1]["run"] == 3


def test_date_range_since_inclusive_until_exclusive_and_dates_cover_the_whole_day(history, auditor):
    midnight = (timezone.now() - timedelta(days=10)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    stamps = [
        midnight,
        midnight + timedelta(hours=23, minutes=59, seconds=59),
        midnight + timedelta(days=1),
    ]
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(
                action="maintenance.run",
                recorded_at=t,
                actor_type="system",
                actor_id="system",
                actor_label="clock",
                correlation_id=f"clock-{i}",
            )
            for i, t in enumerate(stamps)
        ]
    )

    def got(query):
        return [i["correlation_id"] for i in get(auditor, f"actor=clock&{query}").json()["items"]]

    day = midnight.date().isoformat()
    next_day = stamps[2].date().isoformat()
    late = stamps[1].strftime("%Y-%m-%dT%H:%M:%S")
    assert got(f"since={day}&until={day}") == ["clock-1", "clock-0"]
    assert got(f"since={next_day}") == ["clock-2"]
    assert got(f"until={day}") == ["clock-1", "clock-0"]
    assert got(f"since={late}Z") == ["clock-2", "clock-1"]
    assert got(f"until={late}Z") == ["clock-0"]
    # An offset whose "+" arrived unescaped (as a space) still parses.
    assert got(f"until={late}+00:00") == ["clock-0"]
    assert got(f"since={late}%2B01:00") == ["clock-2", "clock-1"]
    assert got(f"until={late}-01:00") == ["clock-2", "clock-1", "clock-0"]


def test_bad_filter_values_and_unknown_parameters_are_400_with_details(history, auditor):
    r = get(auditor, "action=entry.exploded&kind=nope&since=soon&color=red")
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "The request has invalid fields."
    details = r.json()["error"]["details"]
    assert set(details) == {"action", "kind", "since", "color"}
    assert details["color"] == ["Unknown field."]
    r = get(auditor, "since=2026-01-02&until=2026-01-01")
    assert r.status_code == 400 and "until" in r.json()["error"]["details"]
    assert get(auditor, "cursor=%%%").status_code == 400
    assert get(auditor, "limit=0").status_code == 400


def test_unknown_or_out_of_scope_memory_is_404(history, auditor, other_memory):
    assert get(auditor, "memory=nope").status_code == 404
    scoped = make_key("ada-other", "auditor", memories=("other",))
    assert get(scoped, "memory=acme").status_code == 404
    assert get(scoped, "memory=other").status_code == 200


# --- Pagination -----------------------------------------------------------------------------


@pytest.mark.parametrize("extra_pages", [0, 1])
def test_pages_are_exact_at_the_boundaries(history, auditor, agent, extra_pages):
    """2 full pages, then either nothing (exactly 2*page) or one event (2*page + 1)."""
    page = 5
    add_many(history.memory, agent, 2 * page + extra_pages, prefix="Boundary fact")
    query = f"action=entry.added&q=Boundary&limit={page}"
    ids, sizes = all_pages(auditor, query)
    expected = list(
        AuditEvent.objects.filter(action="entry.added", label__startswith="Boundary")
        .order_by("-id")
        .values_list("id", flat=True)
    )
    assert len(expected) == 2 * page + extra_pages
    assert ids == expected
    assert sizes == ([page, page, 1] if extra_pages else [page, page])


def test_events_written_while_paging_do_not_shift_pages(history, auditor, agent):
    ids_before = list(AuditEvent.objects.order_by("-id").values_list("id", flat=True))
    first = get(auditor, "limit=3").json()
    add_many(history.memory, agent, 4, prefix="Late fact")
    second = get(auditor, f"limit=3&cursor={first['next_cursor']}").json()
    assert [i["id"] for i in first["items"] + second["items"]] == ids_before[:6]


# --- Scope and clearance --------------------------------------------------------------------


def test_key_scoped_to_a_memory_sees_only_its_events(history, other_memory, agent, auditor):
    scoped = make_key("ada-acme", "auditor", memories=("acme",))
    in_request(actions.add_entry, other_memory, actor=agent.actor, body="Elsewhere", kind="fact")
    ids, _ = all_pages(scoped, "limit=200")
    memories = set(AuditEvent.objects.filter(pk__in=ids).values_list("memory_label", flat=True))
    assert memories == {"acme"}
    expected = AuditEvent.objects.filter(memory_id=history.memory.pk).count()
    assert len(ids) == expected
    everything, _ = all_pages(auditor, "limit=200")
    assert len(everything) == AuditEvent.objects.count()


def test_events_about_entries_above_the_keys_clearance_are_redacted(
    history, auditor, restricted_auditor, staff
):
    secret_text = "Incident 4411: the vault root token was rotated"
    result = in_request(
        actions.add_entry,
        history.memory,
        actor=staff,
        body=secret_text,
        kind="fact",
        sensitivity="restricted",
    )
    in_request(
        actions.forget_entry,
        history.memory,
        actor=staff,
        entry_uid=result.entry.uid,
        reason="rotated again",
    )
    items = [i for i in get(auditor, "limit=200").json()["items"] if i["redacted"]]
    assert [i["action"] for i in items] == ["entry.forgotten", "entry.added"]
    assert all(i["label"] == "" and i["payload"] == {} and i["entry_ids"] == [] for i in items)
    # Filtering on the hidden id answers as for an id that does not exist.
    assert get(auditor, f"entry={result.entry.uid}").json()["items"] == []
    # Free text cannot probe the withheld label either.
    assert get(auditor, "q=vault root").json()["items"] == []
    # A key cleared for restricted entries reads them in full.
    cleared = get(restricted_auditor, f"entry={result.entry.uid}").json()["items"]
    assert cleared[1]["label"] == secret_text and not cleared[1]["redacted"]
    assert [i["label"] for i in get(restricted_auditor, "q=vault root").json()["items"]] == [
        secret_text,
        secret_text,
    ]


# --- Queries --------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [0, 40])
def test_list_costs_a_fixed_number_of_queries(
    history, auditor, agent, django_assert_max_num_queries, extra
):
    add_many(history.memory, agent, extra)
    with django_assert_max_num_queries(5):
        r = get(auditor, "memory=acme&limit=50")
    assert r.status_code == 200
    assert len(r.json()["items"]) == min(
        50, AuditEvent.objects.filter(memory_id=history.memory.pk).count()
    )
