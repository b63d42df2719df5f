"""Governance fields and revalidation (spec 004, API.md "Entries" and "Recall"): ``owner``,
``confidence`` and ``review_at`` at admission; a fact past its review date is flagged in hits
and the Context Pack, left out by ``strict_fresh``, listed as due, and renewed by ``confirm`` —
a revision, never a new version; nothing deactivates by itself."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory import actions
from memory.models import Entry, Head, LifecycleProjection, Revision
from memory.search import RecallFilters, search
from tests.factories import remember
from tests.memory.test_scoped_recall import Q, build_vectors, vectors_on  # noqa: F401

E = "/api/v1/memories/acme/entries"
S = "/api/v1/memories/acme/search"
P = "/api/v1/memories/acme/context-pack"
DUE = "/api/v1/memories/acme/revalidation/due"

PAST = "2026-01-01"
FUTURE = "2099-01-01T00:00:00Z"


def iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


# --- Governance fields at admission ------------------------------------------------------------


def test_an_add_takes_owner_confidence_and_review_at_and_reads_return_them(api, agent):
    client = api.as_(agent)
    r = client.post(
        E,
        {
            "body": "The deploy target is eu-2",
            "kind": "fact",
            "current_state": True,
            "owner": "platform-team",
            "confidence": 0.8,
            "review_at": "2099-06-01",
        },
    )
    assert r.status_code == 201, r.text
    entry = client.get(f"{E}/{r.json()['entry_id']}").json()
    assert entry["owner"] == "platform-team"
    assert entry["confidence"] == 0.8
    assert iso(entry["review_at"]) == datetime(2099, 6, 1, tzinfo=UTC)
    assert entry["review_due"] is False
    # Metadata of the entry, not of its text: one version, recorded on the add's change.
    change = Revision.objects.get(number=1).changes.get()
    assert change.attributes["owner"] == "platform-team"
    # The same body without the fields is still an exact duplicate (not part of the hash).
    again = client.post(E, {"body": "The deploy target is eu-2", "kind": "fact"})
    assert again.status_code == 200 and again.json()["reason"] == "exact_duplicate"
    # Without them: null.
    bare = client.post(E, {"body": "Builds run on Linux", "kind": "fact"}).json()
    read = client.get(f"{E}/{bare['entry_id']}").json()
    assert (read["owner"], read["confidence"], read["review_at"], read["review_due"]) == (
        None,
        None,
        None,
        False,
    )


@pytest.mark.parametrize(
    ("field", "value", "status", "code"),
    [
        ("confidence", 1.5, 400, "invalid"),
        ("confidence", -0.1, 400, "invalid"),
        ("confidence", "high", 400, "invalid"),
        ("review_at", "next tuesday", 400, "invalid"),
        ("owner", "x" * 201, 413, "too_large"),
        ("owner", "two\nlines", 400, "invalid"),
    ],
)
def test_a_bad_governance_field_is_refused_and_nothing_is_written(
    api, agent, field, value, status, code
):
    r = api.as_(agent).post(E, {"body": "Builds run on Linux", "kind": "fact", field: value})
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert field in r.json()["error"]["details"]
    assert Entry.objects.count() == 0


def test_a_secret_in_the_owner_is_refused(api, agent):
    r = api.as_(agent).post(
        E, {"body": "Builds run on Linux", "kind": "fact", "owner": "AKIAIOSFODNN7EXAMPLE"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "secret_detected"


def test_the_batch_and_the_import_take_the_governance_fields(api, agent, tmp_path):
    client = api.as_(agent)
    r = client.post(
        f"{E}/batch",
        {
            "entries": [
                {"body": "Staging is in eu-1", "kind": "fact", "owner": "ops", "confidence": 1},
                {"body": "Prod is in eu-2", "kind": "fact", "review_at": FUTURE},
            ]
        },
    )
    assert r.status_code == 200, r.text
    first, second = (client.get(f"{E}/{x['entry_id']}").json() for x in r.json()["results"])
    assert (first["owner"], first["confidence"], first["review_at"]) == ("ops", 1.0, None)
    assert iso(second["review_at"]) == datetime(2099, 1, 1, tzinfo=UTC)
    bad = client.post(
        f"{E}/batch", {"entries": [{"body": "x is y", "kind": "fact", "confidence": 2}]}
    )
    assert bad.status_code == 400, bad.text

    lines = tmp_path / "facts.jsonl"
    lines.write_text(
        json.dumps({"body": "The on-call is Sam", "kind": "fact", "owner": "sre"}) + "\n"
    )
    call_command("import", str(lines), memory="acme", stdout=io.StringIO())
    head = Head.objects.get(version__body="The on-call is Sam")
    assert head.owner == "sre"


# --- The policy's default review date ------------------------------------------------------------


def test_the_revalidation_policy_dates_facts_that_name_no_review_date(memory, agent, staff):
    actions.update_memory_policy(
        memory,
        actor=staff,
        policy={"revalidation": {"fact": 90, "current_state": 14, "sources": {"repo": 7}}},
    )
    memory.refresh_from_db()
    me = agent.actor
    before = timezone.now()
    plain = remember(memory, me, "Builds run on Linux").entry
    volatile = remember(memory, me, "The on-call is Sam", current_state=True).entry
    cited = remember(
        memory, me, "The API port is 8443", evidence=[{"source": "repo", "ref": "a.md"}]
    ).entry
    decision = remember(memory, me, "We use Django", kind="decision").entry
    given = remember(memory, me, "The region is eu-2", review_at=FUTURE).entry
    after = timezone.now()

    def days(entry: Entry) -> float | None:
        at = Head.objects.get(entry=entry).review_at
        return None if at is None else round((at - before).total_seconds() / 86400)

    assert days(plain) == 90
    assert days(volatile) == 14  # the shortest rule that applies wins
    assert days(cited) == 7  # the operator's per-source setting
    assert days(decision) is None  # no rule for decisions
    assert Head.objects.get(entry=given).review_at == datetime(2099, 1, 1, tzinfo=UTC)
    assert after - before < timedelta(minutes=1)


@pytest.mark.parametrize(
    "bad",
    [
        {"fact": 0},
        {"fact": "30"},
        {"nonsense": 3},
        {"sources": {"repo": -1}},
        {"sources": []},
        [],
    ],
)
def test_a_malformed_revalidation_policy_is_refused(api, reviewer, bad):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"revalidation": bad}})
    assert r.status_code == 400, r.text
    assert "policy.revalidation" in r.json()["error"]["details"]


# --- A due fact: flagged, dropped with strict_fresh, listed, confirmed ------------------------------


def test_a_due_fact_is_flagged_dropped_listed_and_renewed_by_confirm(api, agent, reviewer):
    client = api.as_(agent)
    due = client.post(
        E,
        {
            "body": "alpha beta the deploy target is eu-2",
            "kind": "fact",
            "owner": "platform",
            "review_at": PAST,
        },
    ).json()["entry_id"]
    fresh = client.post(
        E, {"body": "alpha beta builds run on Linux", "kind": "fact", "review_at": FUTURE}
    ).json()["entry_id"]
    undated = client.post(E, {"body": "alpha beta we use Django", "kind": "decision"}).json()[
        "entry_id"
    ]

    # Flagged in every hit and every Context Pack item.
    hits = {h["entry_id"]: h for h in client.post(S, {"query": Q}).json()["hits"]}
    assert set(hits) == {due, fresh, undated}
    assert hits[due]["review_due"] is True and hits[due]["owner"] == "platform"
    assert hits[fresh]["review_due"] is False and hits[undated]["review_due"] is False
    pack = client.post(P, {"query": Q}).json()
    items = {i["entry_id"]: i for i in pack["items"]}
    assert items[due]["review_due"] is True and items[fresh]["review_due"] is False
    headers = {line.split()[1]: line for line in pack["text"].splitlines() if line[:1] == "["}
    assert headers[due].endswith(" · review due")
    assert "review due" not in headers[fresh]
    assert client.get(f"{E}/{due}").json()["review_due"] is True

    # Dropped with strict_fresh, in search and in the pack.
    strict = client.post(S, {"query": Q, "strict_fresh": True}).json()["hits"]
    assert {h["entry_id"] for h in strict} == {fresh, undated}
    strict_pack = client.post(P, {"query": Q, "strict_fresh": True}).json()
    assert {i["entry_id"] for i in strict_pack["items"]} == {fresh, undated}
    bad = client.post(S, {"query": Q, "strict_fresh": "maybe"})
    assert bad.status_code == 400 and "strict_fresh" in bad.json()["error"]["details"]

    # Listed as due.
    listed = client.get(DUE).json()
    assert [i["entry_id"] for i in listed["items"]] == [due]
    assert listed["items"][0]["review_due"] is True and listed["next_cursor"] is None

    # Confirmed: a revision, no new version; no longer due anywhere.
    r = client.post(
        f"{E}/{due}/confirm",
        {"evidence": [{"source": "repo", "ref": "deploy.tf"}], "review_at": FUTURE},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["version"] == 1 and body["review_due"] is False
    assert iso(body["review_at"]) == datetime(2099, 1, 1, tzinfo=UTC)
    revision = Revision.objects.get(number=body["revision"])
    assert revision.kind == "confirm"
    change = revision.changes.get()
    assert change.from_version_id == change.to_version_id
    assert change.attributes["confirmed_evidence"][0]["ref"] == "deploy.tf"
    assert Entry.objects.get(uid=due).versions.count() == 1
    assert client.get(DUE).json()["items"] == []
    hits = {h["entry_id"]: h for h in client.post(S, {"query": Q}).json()["hits"]}
    assert hits[due]["review_due"] is False
    strict = client.post(S, {"query": Q, "strict_fresh": True}).json()["hits"]
    assert due in {h["entry_id"] for h in strict}

    # Nothing deactivated anything: every entry is still active and current.
    assert set(Head.objects.values_list("state", flat=True)) == {"active"}
    assert set(LifecycleProjection.objects.values_list("validity", flat=True)) == {"current"}


def test_confirm_refusals(api, agent, auditor, reviewer):
    client = api.as_(agent)
    uid = client.post(E, {"body": "The port is 8443", "kind": "fact", "review_at": PAST}).json()[
        "entry_id"
    ]
    past = client.post(f"{E}/{uid}/confirm", {"review_at": PAST})
    assert past.status_code == 400 and "review_at" in past.json()["error"]["details"]
    unknown = client.post(f"{E}/{uid}/confirm", {"evidence": [{"source": "nope", "ref": "x"}]})
    assert unknown.status_code == 400, unknown.text
    extra = client.post(f"{E}/{uid}/confirm", {"body": "new text"})
    assert extra.status_code == 400
    assert api.as_(auditor).post(f"{E}/{uid}/confirm", {}).status_code == 403
    assert client.post(f"{E}/e_missing/confirm", {}).status_code == 404
    assert Revision.objects.count() == 1  # none of these wrote anything
    client.post(f"{E}/{uid}/forget", {"reason": "wrong"})
    inactive = client.post(f"{E}/{uid}/confirm", {"review_at": FUTURE})
    assert inactive.status_code == 409 and inactive.json()["error"]["code"] == "entry_inactive"
    # A reviewer may confirm too.
    uid2 = client.post(E, {"body": "The region is eu-2", "kind": "fact"}).json()["entry_id"]
    ok = api.as_(reviewer).post(f"{E}/{uid2}/confirm", {"review_at": FUTURE})
    assert ok.status_code == 200, ok.text


def test_confirm_without_a_date_takes_the_policys_from_now(memory, agent, staff):
    actions.update_memory_policy(memory, actor=staff, policy={"revalidation": {"fact": 30}})
    memory.refresh_from_db()
    entry = remember(memory, agent.actor, "The port is 8443", review_at=PAST).entry
    actions.confirm_entry(memory, actor=agent.actor, entry_uid=entry.uid)
    at = Head.objects.get(entry=entry).review_at
    assert at is not None
    assert round((at - timezone.now()).total_seconds() / 86400) == 30


def test_a_reviewer_requires_reverification(api, agent, reviewer, auditor):
    client = api.as_(agent)
    uid = client.post(E, {"body": "The port is 8443", "kind": "fact", "review_at": FUTURE}).json()[
        "entry_id"
    ]
    assert client.post(f"{E}/{uid}/require-reverification", {"reason": "x"}).status_code == 403
    assert (
        api.as_(auditor).post(f"{E}/{uid}/require-reverification", {"reason": "x"}).status_code
        == 403
    )
    missing = api.as_(reviewer).post(f"{E}/{uid}/require-reverification", {})
    assert missing.status_code == 400
    r = api.as_(reviewer).post(
        f"{E}/{uid}/require-reverification", {"reason": "The port moved in the last release"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["review_due"] is True and r.json()["version"] == 1
    assert Revision.objects.get(number=r.json()["revision"]).kind == "reverify"
    assert [i["entry_id"] for i in client.get(DUE).json()["items"]] == [uid]
    assert client.get(f"{E}/{uid}").json()["state"] == "active"
    again = api.as_(reviewer).post(f"{E}/{uid}/require-reverification", {"reason": "again"})
    assert again.status_code == 200 and again.json()["reason"] == "no_change"


# --- strict_fresh in both channels, before fusion -------------------------------------------------


def test_strict_fresh_applies_in_the_lexical_and_the_vector_channel(memory, agent, vectors_on):  # noqa: F811
    me = agent.actor
    vector_due = remember(memory, me, "zeta one", review_at=PAST).entry.uid
    vector_ok = remember(memory, me, "zeta two").entry.uid
    lexical_due = remember(memory, me, "alpha beta one", review_at=PAST).entry.uid
    lexical_ok = remember(memory, me, "alpha beta two", review_at=FUTURE).entry.uid
    build_vectors()
    everything = search(memory, actor=me, query=Q).hits
    assert {h.entry_id for h in everything} == {vector_due, vector_ok, lexical_due, lexical_ok}
    assert {h.entry_id for h in everything if h.review_due} == {vector_due, lexical_due}
    fresh = search(
        memory, actor=me, query=Q, filters=RecallFilters(fresh_at=timezone.now()), trace=True
    )
    assert {h.entry_id for h in fresh.hits} == {vector_ok, lexical_ok}
    assert fresh.trace.channels == {"lexical": 1, "vector": 1}
    assert fresh.trace.filters == {"strict_fresh": True}
    # The history view keeps every version of a due entry out too.
    actions.revise_entry(memory, actor=me, entry_uid=lexical_due, body="alpha beta one, fixed")
    history = search(
        memory, actor=me, query=Q, view="history", filters=RecallFilters(fresh_at=timezone.now())
    ).hits
    assert lexical_due not in {h.entry_id for h in history}


def test_a_due_fact_filtered_out_does_not_push_a_fresh_one_out(memory, agent):
    """40 better matches, all due, fill more than the channel's candidates; the one fresh
    match is still found, so the filter ran inside the channel's query."""
    me = agent.actor
    for i in range(40):
        remember(memory, me, f"alpha beta gamma {i}", review_at=PAST, dedupe=False)
    kept = remember(memory, me, "alpha beta and a much longer note about other things").entry
    hits = search(
        memory,
        actor=me,
        query="alpha beta gamma",
        limit=5,
        filters=RecallFilters(fresh_at=timezone.now()),
    ).hits
    assert [h.entry_id for h in hits] == [kept.uid]


# --- The "needs re-checking" list ----------------------------------------------------------------


def test_the_due_list_is_sorted_by_recalls_in_keyset_pages(
    api, agent, django_assert_max_num_queries
):
    client = api.as_(agent)
    uids = [
        client.post(
            E, {"body": f"The port of service {i} is 80{i}", "kind": "fact", "review_at": PAST}
        ).json()["entry_id"]
        for i in range(5)
    ]
    client.post(E, {"body": "Not due yet", "kind": "fact", "review_at": FUTURE})
    counts = {uids[0]: 1, uids[1]: 9, uids[2]: 4, uids[3]: 4, uids[4]: 0}
    for uid, n in counts.items():
        LifecycleProjection.objects.filter(entry__uid=uid).update(recall_count=n)
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get(DUE, params=params).json()
        seen += [i["entry_id"] for i in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    ties = sorted([uids[2], uids[3]], key=lambda u: Entry.objects.get(uid=u).pk)
    assert seen == [uids[1], *ties, uids[0], uids[4]]
    first = client.get(DUE).json()["items"][0]
    assert first["recall_count"] == 9 and first["review_due"] is True
    assert client.get(DUE, params={"cursor": "garbage"}).status_code == 400


def test_the_due_list_reads_one_query_per_page(memory, agent, django_assert_max_num_queries):
    from memory.revalidation import due_heads, due_item, due_page

    for i in range(30):
        remember(memory, agent.actor, f"Service {i} listens on {1000 + i}", review_at=PAST)
    with django_assert_max_num_queries(1):
        rows, cursor = due_page(
            due_heads(memory, actor=agent.actor, now=timezone.now()), cursor=None, limit=25
        )
        items = [due_item(h) for h in rows]
    assert len(items) == 25 and cursor is not None


def test_the_due_list_keeps_entries_above_the_keys_clearance_out(api, agent, memory):
    from tests.conftest import make_key

    remember(memory, agent.actor, "A public fact", review_at=PAST, sensitivity="public")
    remember(memory, agent.actor, "An internal fact", review_at=PAST)
    public = make_key("public-agent", "agent", clearance="public")
    items = api.as_(public).get(DUE).json()["items"]
    assert [i["body"] for i in items] == ["A public fact"]


# --- The lifecycle's recall counters (API.md "Entries") --------------------------------------------


def test_an_entry_read_returns_its_recall_count_and_last_recall(api, agent):
    client = api.as_(agent)
    uid = client.post(E, {"body": "The port is 8443", "kind": "fact"}).json()["entry_id"]
    life = client.get(f"{E}/{uid}").json()["lifecycle"]
    assert (life["recall_count"], life["last_recalled_at"]) == (0, None)
    at = datetime(2026, 5, 1, 12, tzinfo=UTC)
    LifecycleProjection.objects.filter(entry__uid=uid).update(recall_count=3, last_recalled_at=at)
    life = client.get(f"{E}/{uid}").json()["lifecycle"]
    assert life["recall_count"] == 3 and iso(life["last_recalled_at"]) == at
    listed = client.get(E).json()["items"][0]["lifecycle"]
    assert listed["recall_count"] == 3


# --- The "Needs re-checking" page ------------------------------------------------------------------


def test_the_needs_rechecking_page_lists_due_facts_most_recalled_first(
    memory, agent, reviewer, auditor, django_assert_max_num_queries
):
    from django.contrib.auth.models import User
    from django.test import Client

    me = agent.actor
    quiet = remember(memory, me, "The port is 8443", owner="sre", review_at=PAST).entry
    busy = remember(memory, me, "The region is eu-2", confidence=0.4, review_at=PAST).entry
    remember(memory, me, "Builds run on Linux", review_at=FUTURE)
    LifecycleProjection.objects.filter(entry=busy).update(recall_count=7)
    page = "/memories/acme/revalidation/"
    for username in ("rita", "ada"):
        c = Client()
        c.force_login(User.objects.get(username=username))
        with django_assert_max_num_queries(12):
            r = c.get(page)
        assert r.status_code == 200
        html = r.content.decode()
        assert html.index(busy.uid) < html.index(quiet.uid)
        assert "Builds run on Linux" not in html and "sre" in html and "0.4" in html
    c = Client()
    c.force_login(User.objects.get(username="rita"))
    first = c.get(page, {"limit": 1})
    assert busy.uid in first.content.decode() and quiet.uid not in first.content.decode()
    assert "Load more" in first.content.decode()
    more = c.get(
        page,
        {"limit": 1, "cursor": first.context["next_cursor"]},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="load-more",
    )
    assert quiet.uid in more.content.decode() and "<h1>" not in more.content.decode()
    assert c.get(page, {"cursor": "bad"}).status_code == 422
    assert "Needs re-checking" in c.get("/memories/acme/").content.decode()
    nobody = User.objects.create_user("nobody", password="x")
    c.force_login(nobody)
    assert c.get(page).status_code == 403
