"""Reading the ledger (reviewers and auditors, filters, cursor pages, clearance, a fixed number
of queries), the entry page's "served to N runs", and the purge that keeps it at the retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from exposure import ledger
from exposure.models import Exposure
from memory import actions
from memory.actors import Actor
from tests.factories import remember

X = "/api/v1/memories/acme/exposures"


def served(memory, actor, entry, *, run="", via="search", version=1, at=None):
    ledger.write([(memory.pk, entry.pk, version, actor.id, run, via, (at or timezone.now()))])


@pytest.fixture
def two(memory, agent):
    a = remember(memory, agent.actor, "The deploy target is Frankfurt").entry
    b = remember(memory, agent.actor, "The cache is Redis 7").entry
    return a, b


def test_agents_may_not_read_the_ledger(api, agent, two):
    r = api.as_(agent).get(X)
    assert r.status_code == 403, r.text
    assert r.json()["error"]["code"] == "forbidden"


def test_reviewers_and_auditors_filter_and_page_it(
    api, memory, agent, other_agent, reviewer, auditor, two
):
    a, b = two
    old = timezone.now() - timedelta(days=3)
    served(memory, agent.actor, a, run="run-1", at=old)
    served(memory, agent.actor, b, run="run-1", via="context_pack")
    served(memory, other_agent.actor, a, run="run-2", via="mcp")
    for key in (reviewer, auditor):
        r = api.as_(key).get(X)
        assert r.status_code == 200, r.text
        items = r.json()["items"]
        assert [(i["entry_id"], i["run_id"], i["via"]) for i in items] == [
            (a.uid, "run-2", "mcp"),
            (b.uid, "run-1", "context_pack"),
            (a.uid, "run-1", "search"),
        ]
        assert set(items[0]) >= {"at", "key", "run_id", "entry_id", "version", "via"}
    rv = api.as_(reviewer)

    def ids(query):
        r = rv.get(f"{X}?{query}")
        assert r.status_code == 200, r.text
        return [(i["entry_id"], i["run_id"]) for i in r.json()["items"]]

    assert ids(f"entry={a.uid}") == [(a.uid, "run-2"), (a.uid, "run-1")]
    assert ids(f"entry={a.uid}&version=2") == []
    assert ids("run=run-1") == [(b.uid, "run-1"), (a.uid, "run-1")]
    assert ids(f"key={other_agent.actor.id}") == [(a.uid, "run-2")]
    since = (timezone.now() - timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert ids(f"since={since}") == [(a.uid, "run-2"), (b.uid, "run-1")]
    page1 = rv.get(f"{X}?limit=2").json()
    page2 = rv.get(f"{X}?limit=2&cursor={page1['next_cursor']}").json()
    assert len(page1["items"]) == 2 and len(page2["items"]) == 1
    assert page2["next_cursor"] is None
    for bad in ("since=yesterday", "version=0", "cursor=%%%", "colour=red"):
        r = rv.get(f"{X}?{bad}")
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["error"]["code"] == "invalid"


def test_a_page_costs_a_fixed_number_of_queries(
    memory, agent, reviewer, two, django_assert_max_num_queries
):
    a, b = two
    for i in range(30):
        served(memory, agent.actor, a if i % 2 else b, run=f"run-{i}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {reviewer.secret}")
    with django_assert_max_num_queries(6):
        r = client.get(f"{X}?limit=25")
    assert r.status_code == 200 and len(r.json()["items"]) == 25


def test_entries_above_the_readers_clearance_are_left_out(api, memory, agent, reviewer, two):
    a, _ = two
    secret = remember(
        memory, Actor.system(), "The vault root token rotates monthly", sensitivity="restricted"
    ).entry
    served(memory, agent.actor, a, run="r")
    served(memory, agent.actor, secret, run="r")
    items = api.as_(reviewer).get(X).json()["items"]
    assert [i["entry_id"] for i in items] == [a.uid]


def test_another_memorys_key_sees_404(api, other_memory, two):
    from tests.conftest import make_key

    outsider = make_key("other-reviewer", "reviewer", memories=("other",))
    assert api.as_(outsider).get(X).status_code == 404


def test_the_entry_page_says_how_many_runs_were_served_it(memory, agent, reviewer, two):
    a, b = two
    served(memory, agent.actor, a, run="run-1")
    served(memory, agent.actor, a, run="run-1")
    served(memory, agent.actor, a, run="run-2")
    served(memory, agent.actor, a)  # no run id: counts once for the key
    served(memory, agent.actor, a, run="run-3", at=timezone.now() - timedelta(days=31))
    served(memory, agent.actor, b, run="run-9")
    client = Client()
    client.force_login(User.objects.get(username="rita"))
    r = client.get(f"/memories/acme/entries/{a.uid}/")
    assert r.status_code == 200
    assert "served to 3 runs in 30 days" in r.content.decode()


def test_the_purge_keeps_the_ledger_at_the_retention(memory, other_memory, agent, two, monkeypatch):
    a, _ = two
    now = timezone.now()
    founder = Actor.for_user(User.objects.get(username="founder"))
    far = remember(other_memory, founder, "Other team deploys on Fridays").entry
    for days in (45, 31, 29, 1):
        served(memory, agent.actor, a, run=f"d{days}", at=now - timedelta(days=days))
        served(other_memory, agent.actor, far, run=f"d{days}", at=now - timedelta(days=days))
    actions.update_memory_policy(
        other_memory, actor=founder, policy={"exposure": {"retention_days": 7}}
    )
    monkeypatch.setattr(ledger, "PURGE_BATCH", 1)  # several bounded batches
    assert ledger.purge(now=now) == 2 + 3
    assert sorted(Exposure.objects.filter(memory=memory).values_list("run_id", flat=True)) == [
        "d1",
        "d29",
    ]
    assert list(Exposure.objects.filter(memory=other_memory).values_list("run_id", flat=True)) == [
        "d1"
    ]
    assert ledger.purge(now=now) == 0  # idempotent


def test_one_purge_run_deletes_a_bounded_number_of_rows(memory, agent, two, monkeypatch):
    a, _ = two
    old = timezone.now() - timedelta(days=40)
    for i in range(5):
        served(memory, agent.actor, a, run=f"r{i}", at=old)
    monkeypatch.setattr(ledger, "PURGE_BATCH", 2)
    monkeypatch.setattr(ledger, "PURGE_MAX_BATCHES", 2)
    assert ledger.purge() == 4
    assert ledger.purge() == 1


def test_the_purge_runs_in_beat():
    entry = settings.CELERY_BEAT_SCHEDULE["purge-exposures"]
    assert entry["task"] == "exposure.purge" and float(str(entry["schedule"])) <= 86400
    from exposure.tasks import purge_exposures

    assert purge_exposures.name == "exposure.purge"
