"""Scoped recall and provenance (API.md "Recall"): ``filters`` narrow both channels inside their
queries, before fusion, and every hit and Context Pack item says where it came from.

The vector channel runs on the index this database has — sqlite-vec on SQLite, pgvector on a
PostgreSQL that has it, the bounded scan otherwise — with known 384-dimension vectors (the
index's width), so a lexical-only and a vector-only match can be placed on either side of each
filter. ``test_scoped_recall_with_the_packaged_model`` runs the product's own model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client

from agents.server import Caller, run_tool
from agents.tools import BY_NAME
from memory import actions, vectors
from memory.embeddings import _provider, get_provider, normalize
from memory.models import LifecycleProjection, Source
from memory.search import RecallFilters, search
from tests.factories import remember

pytestmark = pytest.mark.django_db

S = "/api/v1/memories/acme/search"
P = "/api/v1/memories/acme/context-pack"
Q = "alpha beta"

# Directions in the first three of 384 dimensions: the query, two texts near it that share no
# word with it (vector-only matches) and a direction orthogonal to it (cosine 0, below the
# channel's 0.3 floor) for every other text — the lexical-only matches among them.
NEAR = {
    Q: (1.0, 0.0, 0.0),
    "zeta one": (0.9, 0.436, 0.0),
    "zeta two": (0.8, 0.6, 0.0),
    "zeta three": (0.95, 0.31, 0.0),
    "zeta far": (0.5, 0.866, 0.0),
}
ORTHOGONAL = (0.0, 0.0, 1.0)


class Fixed384:
    """Known unit vectors of the index's width for known texts."""

    key = "fixed-384-test"
    dimensions = 384

    def embed(self, texts):
        out = []
        for t in texts:
            head = NEAR.get(t, NEAR["zeta two"] if t.startswith("zeta crowd") else ORTHOGONAL)
            out.append(normalize([*head, *([0.0] * 381)]))
        return out


@pytest.fixture
def vectors_on(settings):
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "tests.memory.test_scoped_recall.Fixed384"}
    yield
    _provider.cache_clear()


def build_vectors() -> None:
    """What the after-commit task does (test transactions never commit)."""
    assert get_provider() is not None
    vectors.backfill()


@pytest.fixture
def me(agent):
    return agent.actor


def ids(hits) -> set[str]:
    return {h.entry_id for h in hits}


# --- Every filter, in both channels ----------------------------------------------------------

MARCH = "2026-03-10T08:00:00Z"
OLD = "2024-01-01T00:00:00Z"

#: (what the entries kept by the filter are written with, what the others are written with,
#: the filter)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], RecallFilters]] = {
    "session": ({"session_id": "s-1"}, {"session_id": "s-2"}, RecallFilters(session_id="s-1")),
    "kind": ({"kind": "decision"}, {"kind": "fact"}, RecallFilters(kinds=("decision",))),
    "kinds, either": (
        {"kind": "constraint"},
        {"kind": "working_note"},
        RecallFilters(kinds=("decision", "constraint")),
    ),
    "tier": ({"tier": "short"}, {"tier": "long"}, RecallFilters(tiers=("short",))),
    "effective time": (
        {"effective_at": MARCH},
        {"effective_at": OLD},
        RecallFilters(
            effective_after=datetime(2026, 3, 1, tzinfo=UTC),
            effective_before=datetime(2026, 4, 1, tzinfo=UTC),
        ),
    ),
    "effective time from the evidence": (
        {"evidence": [{"source": "chat", "ref": "m-1", "observed_at": MARCH}]},
        {"evidence": [{"source": "chat", "ref": "m-2", "observed_at": OLD}]},
        RecallFilters(effective_after=datetime(2026, 3, 10, 8, tzinfo=UTC)),
    ),
    "unknown time never in a range": (
        {"effective_at": MARCH},
        {},
        RecallFilters(effective_before=datetime(2100, 1, 1, tzinfo=UTC)),
    ),
    "source": (
        {"evidence": [{"source": "repo", "ref": "README.md"}]},
        {"evidence": [{"source": "chat", "ref": "m-3"}]},
        RecallFilters(sources=("repo",)),
    ),
    "all at once": (
        {"kind": "decision", "session_id": "s-1", "evidence": [{"source": "repo", "ref": "a"}]},
        {"kind": "decision", "session_id": "s-2", "evidence": [{"source": "repo", "ref": "b"}]},
        RecallFilters(session_id="s-1", kinds=("decision",), sources=("repo", "nowhere")),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_filter_applies_in_the_lexical_and_the_vector_channel(case, memory, me, vectors_on):
    kept_with, left_with, filters = CASES[case]

    def add(body: str, fields: dict[str, Any]) -> str:
        fields = {"kind": "fact", **fields}
        return remember(memory, me, body, dedupe=False, **fields).entry.uid

    # The vector-only texts first: a short turn is indexed with the turn before it in its
    # session, which would give them the lexical texts' words.
    vector_in = add("zeta one", kept_with)
    vector_out = add("zeta two", left_with)
    lexical_in = add("alpha beta one", kept_with)
    lexical_out = add("alpha beta two", left_with)
    build_vectors()

    everything = search(memory, actor=me, query=Q).hits
    assert ids(everything) == {lexical_in, lexical_out, vector_in, vector_out}
    channels = {h.entry_id: set(h.channels) for h in everything}
    assert channels[lexical_in] == channels[lexical_out] == {"lexical"}
    assert channels[vector_in] == channels[vector_out] == {"vector"}

    scoped = search(memory, actor=me, query=Q, filters=filters, trace=True)
    assert ids(scoped.hits) == {lexical_in, vector_in}
    assert scoped.trace.channels == {"lexical": 1, "vector": 1}
    assert scoped.trace.filters == filters.as_dict()
    assert scoped.trace.validity_filter == {"inactive": 0, "superseded": 0}
    assert scoped.trace.vector is not None
    assert scoped.trace.vector["index"] == vectors.index_kind()


def test_filters_apply_to_the_history_view_by_each_versions_own_time(memory, me, vectors_on):
    e = remember(
        memory,
        me,
        "alpha beta draft",
        evidence=[{"source": "chat", "ref": "m-1", "observed_at": OLD}],
    ).entry
    actions.revise_entry(
        memory,
        actor=me,
        entry_uid=e.uid,
        body="alpha beta final",
        evidence=[{"source": "chat", "ref": "m-2", "observed_at": MARCH}],
    )
    old_window = RecallFilters(
        effective_after=datetime(2023, 1, 1, tzinfo=UTC),
        effective_before=datetime(2025, 1, 1, tzinfo=UTC),
    )
    hits = search(memory, actor=me, query=Q, view="history", filters=old_window).hits
    assert [(h.entry_id, h.version, h.validity) for h in hits] == [(e.uid, 1, "replaced")]
    assert hits[0].effective_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert search(memory, actor=me, query=Q, filters=old_window).hits == []
    march = RecallFilters(effective_after=datetime(2026, 3, 1, tzinfo=UTC))
    hits = search(memory, actor=me, query=Q, view="history", filters=march).hits
    assert [(h.version, h.effective_at) for h in hits] == [
        (2, datetime(2026, 3, 10, 8, tzinfo=UTC))
    ]


# --- Before fusion: what a filter leaves out never takes a place -------------------------------


def test_a_filtered_out_lexical_match_does_not_push_a_kept_one_out(memory, me):
    """40 better matches (more of the query's words, fewer tokens) in another session fill
    more than the channel's 32 candidates and the limit; the one match of the session asked
    for is still found, so the filter ran inside the channel's query."""
    for i in range(40):
        remember(memory, me, f"alpha beta gamma {i}", session_id="other", dedupe=False)
    kept = remember(
        memory, me, "alpha beta and a much longer note about other things", session_id="mine"
    ).entry
    assert kept.uid not in ids(search(memory, actor=me, query="alpha beta gamma", limit=1).hits)
    hits = search(
        memory,
        actor=me,
        query="alpha beta gamma",
        limit=1,
        filters=RecallFilters(session_id="mine"),
    ).hits
    assert [h.entry_id for h in hits] == [kept.uid]
    assert hits[0].score == pytest.approx(1 / 61)


def test_a_filtered_out_vector_match_does_not_push_a_kept_one_out(memory, me, vectors_on):
    """80 nearer vectors of another kind fill the index's first probe (64) and the channel's
    32 candidates; the farther vector of the kind asked for is still found."""
    for i in range(80):
        remember(memory, me, f"zeta crowd {i}", dedupe=False)
    kept = remember(memory, me, "zeta far", kind="constraint", dedupe=False).entry
    build_vectors()
    assert kept.uid not in ids(search(memory, actor=me, query=Q, limit=1).hits)
    hits = search(
        memory, actor=me, query=Q, limit=1, filters=RecallFilters(kinds=("constraint",))
    ).hits
    assert [(h.entry_id, h.channels) for h in hits] == [(kept.uid, {"vector": 1})]


# --- Provenance ----------------------------------------------------------------------------------


def test_hits_carry_their_provenance(memory, me, staff):
    e = remember(
        memory,
        me,
        "Releases are cut on Tuesdays",
        kind="decision",
        tier="short",
        session_id="s-9",
        evidence=[
            {"source": "repo", "ref": "RELEASING.md", "observed_at": "2026-05-01T09:00:00Z"},
            {"source": "chat", "ref": "msg-1"},
            {"source": "chat", "ref": "msg-2"},
        ],
    ).entry
    # A later declaration never changes what the evidence was cited with.
    actions.declare_source(
        Source.objects.get(name="chat"),
        actor=staff,
        declaration={"authority": "system_attested", "verification": "verified"},
    )
    (hit,) = search(memory, actor=me, query="releases tuesdays").hits
    projection = LifecycleProjection.objects.get(entry=e)
    assert (hit.kind, hit.tier, hit.session_id) == ("decision", "short", "s-9")
    assert hit.effective_at == datetime(2026, 5, 1, 9, tzinfo=UTC)  # from the evidence
    assert hit.recorded_at == projection.recorded_at is not None
    assert hit.provenance == [
        {
            "source": "repo",
            "authority": "repository_attested",
            "observed_at": datetime(2026, 5, 1, 9, tzinfo=UTC),
        },
        {"source": "chat", "authority": "untrusted", "observed_at": None},
    ]


def test_a_replaced_version_carries_its_own_provenance(memory, me):
    e = remember(
        memory,
        me,
        "The deploy target is eu-2",
        session_id="s-1",
        effective_at="2026-01-02T03:04:05Z",
        evidence=[{"source": "chat", "ref": "m-1"}],
    ).entry
    actions.revise_entry(
        memory,
        actor=me,
        entry_uid=e.uid,
        body="The deploy target is eu-3",
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    )
    hits = search(memory, actor=me, query="deploy target", view="history").hits
    by_version = {h.version: h for h in hits}
    assert by_version[1].effective_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert [p["source"] for p in by_version[1].provenance] == ["chat"]
    assert [p["source"] for p in by_version[2].provenance] == ["chat", "repo"]
    assert by_version[1].session_id == by_version[2].session_id == "s-1"
    first, second = by_version[1].recorded_at, by_version[2].recorded_at
    assert first is not None and second is not None and first < second


def test_an_entry_without_evidence_or_session_says_so(memory, me):
    remember(memory, me, "Leader election uses advisory locks")
    (hit,) = search(memory, actor=me, query="leader election").hits
    assert (hit.session_id, hit.effective_at, hit.provenance) == (None, None, [])
    assert (hit.kind, hit.tier) == ("fact", "long")


# --- Over REST -------------------------------------------------------------------------------


@pytest.fixture
def client(agent) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")


def post(client: Client, url: str, body: dict[str, Any]):
    return client.post(url, body, content_type="application/json")


def test_search_and_context_pack_take_filters_and_return_provenance(client, memory, me):
    kept = remember(
        memory,
        me,
        "Leader election uses advisory locks",
        kind="decision",
        session_id="s-1",
        effective_at="2026-05-01T10:00:00Z",
        evidence=[{"source": "repo", "ref": "ha.md", "observed_at": "2026-04-30T08:00:00Z"}],
    ).entry
    remember(memory, me, "Leader election timeouts are 5 seconds", session_id="s-2")
    filters = {
        "session_id": "s-1",
        "kind": ["decision", "fact"],
        "tier": ["long"],
        "effective_after": "2026-05-01",
        "effective_before": "2026-05-02T00:00:00+02:00",
        "source": ["repo"],
    }
    r = post(client, S, {"query": "leader election", "filters": filters})
    assert r.status_code == 200, r.content
    (hit,) = r.json()["hits"]
    assert hit["entry_id"] == kept.uid
    recorded = LifecycleProjection.objects.get(entry=kept).recorded_at
    assert {k: hit[k] for k in ("kind", "tier", "session_id", "provenance")} == {
        "kind": "decision",
        "tier": "long",
        "session_id": "s-1",
        "provenance": [
            {
                "source": "repo",
                "authority": "repository_attested",
                "observed_at": "2026-04-30T08:00:00Z",
            }
        ],
    }
    assert datetime.fromisoformat(hit["effective_at"]) == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert datetime.fromisoformat(hit["recorded_at"]) == recorded
    assert hit["lifecycle"]["validity"] == "current"

    r = post(client, P, {"query": "leader election", "filters": filters})
    assert r.status_code == 200, r.content
    body = r.json()
    (item,) = body["items"]
    assert item["entry_id"] == kept.uid
    assert {k: item[k] for k in ("kind", "tier", "session_id", "provenance", "effective_at")} == {
        k: hit[k] for k in ("kind", "tier", "session_id", "provenance", "effective_at")
    }
    assert item["lifecycle"]["validity"] == "current"
    assert f"[current] {kept.uid} v1 · effective 2026-05-01 10:00 UTC\n" in body["text"]
    assert body["bytes"] == len(body["text"].encode("utf-8"))

    assert len(post(client, S, {"query": "leader election", "filters": None}).json()["hits"]) == 2
    assert len(post(client, S, {"query": "leader election", "filters": {}}).json()["hits"]) == 2


@pytest.mark.parametrize("url", [S, P])
def test_an_unknown_filter_is_refused_by_name(client, memory, url):
    r = post(client, url, {"query": "x", "filters": {"session": "s-1", "kind": ["fact"]}})
    assert r.status_code == 400, r.content
    error = r.json()["error"]
    assert error["code"] == "invalid"
    assert error["details"] == {
        "filters": {
            "session": [
                "Unknown filter: filters are session_id, kind, tier, effective_after, "
                "effective_before, source."
            ]
        }
    }


@pytest.mark.parametrize(
    ("filters", "key"),
    [
        ({"session_id": 5}, "session_id"),
        ({"session_id": ""}, "session_id"),
        ({"session_id": "s" * 129}, "session_id"),
        ({"kind": "fact"}, "kind"),
        ({"kind": []}, "kind"),
        ({"kind": ["opinion"]}, "kind"),
        ({"tier": ["forever"]}, "tier"),
        ({"effective_after": "yesterday"}, "effective_after"),
        ({"effective_after": 1714550400}, "effective_after"),
        ({"effective_before": "2026-13-01"}, "effective_before"),
        ({"effective_after": "2026-05-02", "effective_before": "2026-05-01"}, "effective_before"),
        ({"effective_after": "2026-05-01", "effective_before": "2026-05-01"}, "effective_before"),
        ({"source": "repo"}, "source"),
        ({"source": [5]}, "source"),
        ({"source": []}, "source"),
    ],
)
def test_a_bad_filter_value_is_refused_naming_it(client, memory, filters, key):
    for url in (S, P):
        r = post(client, url, {"query": "x", "filters": filters})
        assert r.status_code == 400, (filters, r.content)
        error = r.json()["error"]
        assert error["code"] == "invalid"
        assert list(error["details"]["filters"]) == [key], error


def test_filters_must_be_an_object(client, memory):
    r = post(client, S, {"query": "x", "filters": ["session_id"]})
    assert r.status_code == 400 and list(r.json()["error"]["details"]) == ["filters"]


@pytest.mark.parametrize("n", [3, 30])
def test_a_page_of_hits_costs_the_same_queries_whatever_its_size(
    client, memory, me, n, django_assert_max_num_queries
):
    """Authentication, the lexical channel's statements, the hits and their provenance: however many
    hits, and however much evidence each cites."""
    from memory.search.lexical import MAX_STATEMENTS

    for i in range(n):
        evidence = [
            {"source": s, "ref": f"{s}-{i}-{j}"} for j in range(3) for s in ("repo", "chat")
        ]
        remember(
            memory,
            me,
            f"Leader election note {i}",
            session_id="s-1",
            effective_at=f"2026-05-01T10:{i:02}:00Z",
            evidence=evidence,
        )
    filters = {"session_id": "s-1", "source": ["repo"], "effective_before": "2100-01-01"}
    for url, key, limit in ((S, "hits", {"limit": 20}), (P, "items", {})):
        with django_assert_max_num_queries(6 + MAX_STATEMENTS - 1):
            r = post(client, url, {"query": "leader election", "filters": filters, **limit})
        assert r.status_code == 200, r.content
        assert len(r.json()[key]) == min(n, 20 if key == "hits" else 8)
        assert all(len(h["provenance"]) == 2 for h in r.json()[key])


# --- Over MCP ----------------------------------------------------------------------------------


def test_the_mcp_recall_and_context_pack_tools_take_filters(memory, me, agent):
    caller = Caller(agent.actor, "scoped")
    kept = remember(memory, me, "Leader election uses advisory locks", session_id="s-1").entry
    remember(memory, me, "Leader election timeouts are 5 seconds", session_id="s-2")
    args = {"memory": "acme", "query": "leader election", "filters": {"session_id": "s-1"}}
    result = run_tool(BY_NAME["recall"], caller, args)
    assert not result.is_error, result.structured_content
    (hit,) = result.structured_content["hits"]
    assert (hit["entry_id"], hit["session_id"], hit["provenance"]) == (kept.uid, "s-1", [])
    result = run_tool(BY_NAME["context_pack"], caller, args)
    assert not result.is_error, result.structured_content
    assert [i["entry_id"] for i in result.structured_content["items"]] == [kept.uid]

    for name in ("recall", "context_pack"):
        refused = run_tool(BY_NAME[name], caller, {**args, "filters": {"sesion_id": "s-1"}})
        assert refused.is_error
        error = refused.structured_content["error"]
        assert error["code"] == "invalid" and list(error["details"]["filters"]) == ["sesion_id"]
        schema = BY_NAME[name].input_schema["properties"]["filters"]
        assert set(schema["properties"]) == {
            "session_id",
            "kind",
            "tier",
            "effective_after",
            "effective_before",
            "source",
        }
        assert schema["additionalProperties"] is False
        assert schema["properties"]["effective_after"]["format"] == "date-time"


# --- The OpenAPI document ----------------------------------------------------------------------


def test_the_openapi_document_describes_filters_and_provenance(client, memory):
    r = client.get("/api/v1/schema/?format=json")
    assert r.status_code == 200
    schemas = r.json()["components"]["schemas"]
    filters = schemas["FiltersInRequest"]["properties"]
    assert set(filters) == {
        "session_id",
        "kind",
        "tier",
        "effective_after",
        "effective_before",
        "source",
    }
    assert filters["effective_after"]["format"] == "date-time"
    for name in ("SearchInRequest", "ContextPackInRequest"):
        assert "filters" in schemas[name]["properties"], name
    for name in ("HitOut", "PackItem"):
        props = schemas[name]["properties"]
        for field in ("kind", "tier", "session_id", "effective_at", "recorded_at", "provenance"):
            assert field in props, (name, field)
    assert set(schemas["ProvenanceOut"]["properties"]) == {"source", "authority", "observed_at"}


# --- With the product's model ------------------------------------------------------------------


@pytest.mark.semantic
@pytest.mark.django_db(transaction=True)
def test_scoped_recall_with_the_packaged_model(memory, me):
    """Vectors made after commit, as in production; a question that shares no word with the
    answer finds it by meaning only, and a filter takes it away."""
    pet = remember(memory, me, "I adopted a cat named Miso last spring.", session_id="home").entry
    remember(memory, me, "Deploys go out every Tuesday at 14:00 UTC.", session_id="work")
    question = "what is my pet called?"
    (hit,) = [h for h in search(memory, actor=me, query=question).hits if h.entry_id == pet.uid]
    assert list(hit.channels) == ["vector"]
    home = search(memory, actor=me, query=question, filters=RecallFilters(session_id="home"))
    assert [h.entry_id for h in home.hits] == [pet.uid]
    work = search(memory, actor=me, query=question, filters=RecallFilters(session_id="work"))
    assert pet.uid not in ids(work.hits)
