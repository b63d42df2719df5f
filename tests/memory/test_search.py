"""Current-state recall through ``memory.search.search``: validity before fusion, RRF, the pool,
the reranker's fixed membership, quality gating, the trace, and read-only behaviour."""

from __future__ import annotations

from fractions import Fraction

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions
from memory.actors import Actor
from memory.models import Validity
from memory.ranking import ReorderInvariantError
from memory.search import Candidate, rrf_fuse, search
from tests.factories import remember

from .conftest import RecordingReranker, supersede

pytestmark = pytest.mark.django_db


@pytest.fixture
def me(agent):
    return agent.actor


def ids(result):
    return [h.entry_id for h in result.hits]


def test_after_a_revise_current_recall_returns_only_the_new_version(memory, me):
    e = remember(memory, me, "The deploy target is eu-2", current_state=True).entry
    actions.revise_entry(memory, actor=me, entry_uid=e.uid, body="The deploy target is eu-3")
    hits = search(memory, actor=me, query="deploy target").hits
    assert [(h.entry_id, h.version, h.body) for h in hits] == [
        (e.uid, 2, "The deploy target is eu-3")
    ]
    hist = search(memory, actor=me, query="deploy target", view="history").hits
    assert sorted((h.version, h.validity) for h in hist) == [(1, "replaced"), (2, "current")]
    old = next(h for h in hist if h.version == 1)
    assert old.validity_reason == "replaced_by_version:2"


def test_forgotten_and_superseded_entries_never_reach_fusion_or_the_reranker(
    memory, me, recording_reranker
):
    kept = remember(memory, me, "Docs changes must run make docs-test").entry
    gone = remember(memory, me, "Docs changes must run make lint").entry
    old = remember(memory, me, "Docs changes must run make test").entry
    actions.forget_entry(memory, actor=me, entry_uid=gone.uid, reason="obsolete")
    supersede(memory, old=old, new=kept)
    result = search(
        memory, actor=me, query="docs changes make", reranker=recording_reranker, trace=True
    )
    assert ids(result) == [kept.uid]
    assert RecordingReranker.shown == [[kept.uid]]
    assert result.trace.validity_filter == {"inactive": 1, "superseded": 1}
    assert result.trace.reranker == "recording-reverse"
    hist = search(memory, actor=me, query="docs changes make", view="history")
    labels = {h.entry_id: (h.validity, h.validity_reason) for h in hist.hits}
    assert labels[gone.uid] == ("inactive", "obsolete")
    assert labels[old.uid] == ("superseded", f"superseded_by:{kept.uid}")
    assert next(h for h in hist.hits if h.entry_id == old.uid).successor_entry == kept.uid


def test_unresolved_conflicts_come_back_as_both_entries_each_labelled(memory, me):
    a = remember(memory, me, "The cache TTL is 60 seconds").entry
    b = remember(memory, me, "The cache TTL is 300 seconds").entry
    actions.record_conflict(memory, actor=me, from_entry=a.uid, to_entry=b.uid)
    result = search(memory, actor=me, query="cache ttl", trace=True)
    got = {h.entry_id: (h.validity, h.validity_reason) for h in result.hits}
    assert got == {
        a.uid: ("unresolved_conflict", f"conflicts_with:{b.uid}"),
        b.uid: ("unresolved_conflict", f"conflicts_with:{a.uid}"),
    }
    assert result.trace.unresolved_conflicts == 2


def test_results_are_never_padded_up_to_the_limit(memory, me):
    for body in ("Queue is RabbitMQ", "Queue depth alarm at 500", "Unrelated note on fonts"):
        remember(memory, me, body)
    assert len(search(memory, actor=me, query="queue", limit=10).hits) == 2


def test_rrf_adds_reciprocal_ranks_and_breaks_ties_by_entry_then_version():
    fused = rrf_fuse(
        {
            "lexical": [Candidate(7, 70, 1), Candidate(3, 30, 2)],
            "vector": [Candidate(3, 30, 1), Candidate(7, 70, 2), Candidate(5, 50, 3)],
        }
    )
    assert [f.key for f in fused] == [(3, 30), (7, 70), (5, 50)]
    assert fused[0].score == fused[1].score == Fraction(1, 61) + Fraction(1, 62)
    assert fused[2].score == Fraction(1, 63)
    assert fused[0].channels == {"lexical": 2, "vector": 1}
    tie = rrf_fuse({"lexical": [Candidate(4, 41, 1)], "vector": [Candidate(4, 40, 1)]})
    assert [f.key for f in tie] == [(4, 40), (4, 41)]


def test_public_score_is_the_plain_rrf_score(memory, me):
    a = remember(memory, me, "Kafka retention is 7 days").entry
    b = remember(memory, me, "Kafka brokers run on three hosts in the eu region").entry
    hits = search(memory, actor=me, query="kafka retention").hits
    assert [h.entry_id for h in hits] == [a.uid, b.uid]
    assert hits[0].score == pytest.approx(1 / 61)
    assert hits[1].score == pytest.approx(1 / 62)
    assert hits[0].channels == {"lexical": 1}


def test_chinese_query_recalls_a_chinese_entry(memory, me):
    zh = remember(memory, me, "文档变更必须运行 make docs-test").entry
    remember(memory, me, "Documentation is built nightly")
    assert ids(search(memory, actor=me, query="文档变更")) == [zh.uid]


def test_entries_above_the_key_clearance_are_filtered_before_fusion(memory, me):
    remember(
        memory, Actor.system(), "Root password rotation happens monthly", sensitivity="restricted"
    )
    visible = remember(memory, me, "Password rotation policy is documented").entry
    result = search(memory, actor=me, query="password rotation", trace=True)
    assert ids(result) == [visible.uid]
    assert result.trace.channels["lexical"] == 1


def test_without_quality_ranking_order_is_exactly_plain_rrf(memory, me):
    for i in range(6):
        remember(memory, me, f"Leader election note number {i} " + "pad " * i, kind="working_note")
    remember(
        memory,
        me,
        "Leader election must use advisory locks in every service we run",
        kind="constraint",
        evidence=[{"source": "repo", "ref": "ADR-7"}],
    )
    result = search(memory, actor=me, query="leader election", trace=True)
    assert [h.baseline_rank for h in result.hits] == list(range(1, 8))
    assert result.trace.quality == {
        "enabled": False,
        "reason": "policy_off",
        "current_intent": False,
        "policy": {
            "rules_version": "quality:v4",
            "max_shift": 2,
            "tier_ratio": 1.5,
            "freshness": {"alpha": 0.5, "half_life_days": 30.0},
        },
    }
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_quality_needs_declared_sources_even_when_the_policy_enables_it(memory, me):
    memory.policy = {"quality_ranking": True}
    memory.save(update_fields=["policy"])
    remember(memory, me, "Leader election note", kind="working_note")
    remember(
        memory,
        me,
        "Leader election constraint",
        kind="constraint",
        evidence=[{"source": "chat", "ref": "msg-1"}],
    )
    result = search(memory, actor=me, query="leader election", trace=True)
    assert result.trace.quality["enabled"] is False
    assert result.trace.quality["reason"] == "no_declared_sources"


def test_quality_reorder_moves_members_at_most_two_ranks_and_keeps_the_pool(memory, me):
    memory.policy = {"quality_ranking": True}
    memory.save(update_fields=["policy"])
    notes = [
        remember(memory, me, f"Leader election note {i}", kind="working_note").entry
        for i in range(5)
    ]
    strong = remember(
        memory,
        me,
        "Leader election must use advisory locks in every single service",
        kind="constraint",
        evidence=[{"source": "repo", "ref": "ADR-7"}],
    ).entry
    plain = search(memory, actor=me, query="leader election", trace=True)
    baseline = [h["entry_id"] for h in plain.trace.baseline]
    assert baseline[-1] == strong.uid and len(baseline) == 6
    adjusted = {a["entry_id"]: a for a in plain.trace.adjusted}
    assert adjusted[strong.uid]["baseline_rank"] == 6
    assert adjusted[strong.uid]["rank"] == 4
    assert adjusted[strong.uid]["shift"] == 2
    assert adjusted[strong.uid]["rules"] == ["importance_high", "evidence_direct"]
    assert adjusted[notes[0].uid]["rules"] == ["importance_low"]
    assert {h.entry_id for h in plain.hits} == set(baseline)
    # The public score is still the plain RRF score of each member.
    by_id = {b["entry_id"]: b["score"] for b in plain.trace.baseline}
    assert all(h.score == by_id[h.entry_id] for h in plain.hits)
    assert plain.trace.membership_changed is False


def test_quality_cannot_pull_in_a_member_from_outside_the_pool(memory, me):
    memory.policy = {"quality_ranking": True}
    memory.save(update_fields=["policy"])
    for i in range(3):
        remember(memory, me, f"Leader election note {i}", kind="working_note")
    outsider = remember(
        memory,
        me,
        "Leader election uses advisory locks everywhere we deploy services",
        kind="constraint",
        evidence=[{"source": "repo", "ref": "ADR-7"}],
    ).entry
    result = search(memory, actor=me, query="leader election", limit=3, trace=True)
    assert outsider.uid not in ids(result)
    assert result.trace.pool_size == 3


@pytest.fixture
def wiki(memory, staff):
    """A declared but low-authority source (user asserted, not verified)."""
    return actions.register_source(
        actor=staff,
        name="wiki",
        declaration={"authority": "user_asserted", "verification": "not_verified"},
    )


def test_freshness_needs_current_intent_and_current_state(memory, me, wiki):
    from datetime import timedelta

    from django.utils import timezone

    memory.policy = {"quality_ranking": True, "freshness": {"alpha": 0.5, "half_life_days": 1}}
    memory.save(update_fields=["policy"])
    stale = remember(
        memory,
        me,
        "Deploy target eu-2",
        current_state=True,
        evidence=[{"source": "wiki", "ref": "page-1"}],
    ).entry
    durable = remember(
        memory,
        me,
        "Deploy target naming follows the region",
        evidence=[{"source": "wiki", "ref": "p2"}],
    ).entry
    attested = remember(
        memory,
        me,
        "Deploy target is set in deploy.yml",
        current_state=True,
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    ).entry
    later = timezone.now() + timedelta(days=10)

    def rules(result):
        return {a["entry_id"]: a["rules"] for a in result.trace.adjusted}

    neutral = search(memory, actor=me, query="deploy target", now=later, trace=True)
    assert neutral.trace.quality["current_intent"] is False
    assert rules(neutral)[stale.uid] == []
    current = search(memory, actor=me, query="current deploy target", now=later, trace=True)
    assert current.trace.quality["current_intent"] is True
    assert rules(current)[stale.uid] == ["stale"]
    # Not current_state: freshness does not apply (historical facts get no newer-wins penalty).
    assert rules(current)[durable.uid] == []
    # High authority is never lowered by freshness.
    assert rules(current)[attested.uid] == ["evidence_direct", "stale_protected"]
    fresh = search(memory, actor=me, query="deploy target", intent="current", trace=True)
    assert rules(fresh)[stale.uid] == ["fresh"]
    # Unknown intent words off: explicit intent="none" disables the cue list.
    off = search(
        memory, actor=me, query="current deploy target", intent="none", now=later, trace=True
    )
    assert rules(off)[stale.uid] == []


def test_a_reranker_only_permutes_the_coarse_pool_of_max_k_30(memory, me, recording_reranker):
    made = [remember(memory, me, f"Leader election note {i}").entry for i in range(35)]
    result = search(memory, actor=me, query="leader election", limit=5, reranker=recording_reranker)
    assert len(RecordingReranker.shown[0]) == 30
    assert len(result.hits) == 5
    assert ids(result) == list(reversed(RecordingReranker.shown[0]))[:5]
    assert {h.entry_id for h in result.hits} <= {e.uid for e in made}


def test_the_configured_reranker_runs_by_default_and_none_runs_no_reranker(
    memory, me, recording_reranker, settings
):
    """``STEWARD_SEARCH["RERANKER"]`` is what a search runs unless told otherwise; an explicit
    ``reranker=None`` is a plain search (pool of k, the fused order), whatever is configured."""
    for i in range(12):
        remember(memory, me, f"Leader election note {i}")
    settings.STEWARD_SEARCH = {
        **settings.STEWARD_SEARCH,
        "RERANKER": "tests.memory.conftest.RecordingReranker",
    }
    configured = search(memory, actor=me, query="leader election", limit=5)
    assert len(RecordingReranker.shown) == 1 and len(RecordingReranker.shown[0]) == 12
    assert configured.trace.reranker == "recording-reverse"

    plain = search(memory, actor=me, query="leader election", limit=5, reranker=None)
    assert len(RecordingReranker.shown) == 1  # not called again
    assert plain.trace.reranker is None
    assert ids(plain) == RecordingReranker.shown[0][:5]  # the fused order, not reversed


def test_a_reranker_that_changes_membership_is_refused(memory, me):
    remember(memory, me, "Leader election note A")
    remember(memory, me, "Leader election note B")

    class Dropper:
        name = "dropper"

        def rerank(self, query, hits):
            return list(hits)[:1]

    with pytest.raises(ReorderInvariantError):
        search(memory, actor=me, query="leader election", reranker=Dropper())


def test_trace_holds_no_body_text(memory, me):
    body = "Zebra-striped dashboards confuse the oncall rotation"
    remember(memory, me, body)
    result = search(memory, actor=me, query="zebra dashboards", trace=True)
    dumped = repr(result.trace.as_dict())
    assert "Zebra" not in dumped and "zebra" not in dumped and "dashboards" not in dumped


def test_ordinary_search_never_writes(memory, me):
    remember(memory, me, "Leader election uses advisory locks")
    with CaptureQueriesContext(connection) as ctx:
        search(memory, actor=me, query="leader election", trace=True)
        search(memory, actor=me, query="leader election", view="history")
    assert ctx.captured_queries
    for q in ctx.captured_queries:
        assert q["sql"].lstrip().upper().startswith(("SELECT", "WITH")), q["sql"]


def test_search_has_a_fixed_query_count(memory, me, django_assert_max_num_queries):
    """The lexical channel reads the term statistics and at most ``MAX_STATEMENTS`` statements
    each, then the hits are loaded in one and their provenance in another; the trace runs the
    channel once more over every head and counts validity."""
    from memory.search.lexical import MAX_STATEMENTS

    for i in range(3):
        remember(memory, me, f"Leader election note {i}")
    with django_assert_max_num_queries(3 + MAX_STATEMENTS):
        search(memory, actor=me, query="the leader election")
    for i in range(30):
        remember(memory, me, f"Leader election extra {i}")
        remember(memory, me, f"Leader note {i}")
    with django_assert_max_num_queries(3 + MAX_STATEMENTS):
        search(memory, actor=me, query="the leader election", limit=20)
    with django_assert_max_num_queries(5 + 2 * MAX_STATEMENTS):
        search(memory, actor=me, query="the leader election", trace=True)


def test_search_validates_its_inputs(memory, me):
    from lib.errors import ValidationFailed

    for kwargs in ({"view": "all"}, {"intent": "past"}, {"limit": 0}, {"limit": 51}):
        with pytest.raises(ValidationFailed):
            search(memory, actor=me, query="x", **kwargs)


def test_system_actor_sees_restricted_entries(memory, me):
    hidden = remember(
        memory, Actor.system(), "Root password rotation happens monthly", sensitivity="restricted"
    ).entry
    assert ids(search(memory, actor=Actor.system(), query="rotation")) == [hidden.uid]
    assert Validity.CURRENT == "current"


def test_a_fresh_neighbour_never_pushes_a_pinned_entry_down(memory, me, wiki, reviewer):
    """Current intent: a pinned (protected) fact ranks first lexically; a fresh current-state
    note right below it would pass it on its freshness vote alone. It is held back, and the
    trace names the withdrawn vote and the policy applied."""
    from datetime import timedelta

    from django.utils import timezone

    memory.policy = {"quality_ranking": True, "freshness": {"alpha": 0.5, "half_life_days": 2}}
    memory.save(update_fields=["policy"])
    now = timezone.now()
    pinned = remember(
        memory, me, "Release train cadence: the release train leaves every Tuesday"
    ).entry
    actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=pinned.uid,
        pinned=True,
        category="durable_decision",
        reason="release policy",
    )
    fresh = remember(
        memory,
        me,
        "Release train leaves on Thursday from this week",
        current_state=True,
        effective_at=(now - timedelta(hours=1)).isoformat(),
        evidence=[{"source": "wiki", "ref": "release-page"}],
    ).entry

    def order_and_rules(result):
        return [(a["entry_id"], a["rules"]) for a in result.trace.adjusted]

    query = "release train cadence"
    result = search(memory, actor=me, query=query, intent="current", trace=True)
    assert [b["entry_id"] for b in result.trace.baseline] == [pinned.uid, fresh.uid]
    assert order_and_rules(result) == [(pinned.uid, []), (fresh.uid, ["fresh_held"])]
    assert result.trace.quality["policy"]["freshness"] == {"alpha": 0.5, "half_life_days": 2.0}
    # Once it is no longer pinned, the fresh note passes it.
    actions.pin_entry(
        memory, actor=reviewer.actor, entry_uid=pinned.uid, pinned=False, reason="policy ended"
    )
    unpinned = search(memory, actor=me, query=query, intent="current", trace=True)
    assert order_and_rules(unpinned) == [(fresh.uid, ["fresh"]), (pinned.uid, [])]


def test_a_valid_hit_keeps_the_rank_and_score_it_has_when_invalid_entries_outrank_it(memory, me):
    # Forgotten and superseded entries that hold more of the query's rare words than the one
    # current answer: with validity filtered inside each channel they never take a rank, so the
    # answer is first in every channel that finds it and its RRF score is 1/61 per channel. Were
    # validity applied to the fused pool instead, its channel ranks (and score) would be worse.
    kept = remember(memory, me, "Quarterly invoices are archived in the vault").entry
    for i, body in enumerate(
        [
            "Quarterly invoices are archived in the blue vault by the zephyr clerk",
            "Quarterly zephyr invoices archived vault blue",
            "Zephyr clerk archives quarterly invoices in the vault",
        ]
    ):
        outranker = remember(memory, me, body).entry
        if i % 2:
            actions.forget_entry(memory, actor=me, entry_uid=outranker.uid, reason="obsolete")
        else:
            supersede(memory, old=outranker, new=kept)
    query = "zephyr clerk quarterly invoices vault"
    everything = search(memory, actor=me, query=query, view="history", limit=10)
    assert everything.hits[0].entry_id != kept.uid  # the invalid ones do outrank it lexically
    result = search(memory, actor=me, query=query, limit=5)
    assert [h.entry_id for h in result.hits] == [kept.uid]
    (hit,) = result.hits
    assert hit.channels and set(hit.channels.values()) == {1}
    assert hit.score == pytest.approx(len(hit.channels) / 61)
