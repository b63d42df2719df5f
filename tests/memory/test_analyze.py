"""The bulk paths: planner statistics after bulk work (``memory.db_stats.analyze``), and the
batched projection rebuild.

Every bulk path ends with ``ANALYZE`` of the tables it filled: the rebuild in write mode, the
re-analysis of versions, the vector backfill and the demo loader. On PostgreSQL the proof is the
server's own counter, ``pg_stat_user_tables.analyze_count`` (manual ``ANALYZE`` only; autovacuum
counts apart, in ``autoanalyze_count``), read before and after with a fresh stats snapshot, and
``pg_class.reltuples``, which ``ANALYZE`` sets inside the test's transaction. On SQLite it is the
``sqlite_stat1`` table, for tables past ``SQLITE_MIN_ROWS``.

The rebuild walks a Memory in keyset spans and reads each table by range; the same batch given
as plain pks is read with ``IN`` lists. Both must find the same rows, and a batch costs a fixed
number of queries whatever it holds.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from memory import actions, db_stats, lifecycle, maintenance
from memory.actors import Actor
from memory.models import Entry, Head, LifecycleProjection, Memory, RelationKind, RevisionKind
from memory.search.reindex import reanalyze_versions
from tests.factories import remember

from .conftest import supersede

pytestmark = pytest.mark.django_db

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="ANALYZE statistics are a PostgreSQL matter"
)
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite behaviour")

REPO = [{"source": "repo", "ref": "ADR-1"}]


def analyze_count(table: str) -> int:
    """Manual ANALYZE runs of ``table`` so far (a fresh snapshot: the view caches per
    transaction otherwise)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = %s", [table])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def reltuples(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cursor.fetchone()[0])


def some_entries(memory: Memory, actor: Actor, n: int = 3) -> list[Entry]:
    return [
        remember(memory, actor, f"Deploy target {i} is eu-{i}", evidence=REPO, dedupe=False).entry
        for i in range(n)
    ]


# --- analyze ---------------------------------------------------------------------------------


@postgres_only
def test_rebuild_projection_analyzes_the_projection_table(memory, agent):
    some_entries(memory, agent.actor)
    table = "memory_lifecycleprojection"
    before = analyze_count(table)
    maintenance.rebuild_projection(memory, actor=Actor.system(), check=True)
    assert analyze_count(table) == before  # a check writes nothing, analyzes nothing
    maintenance.rebuild_projection(memory, actor=Actor.system())
    assert analyze_count(table) == before + 1
    assert reltuples(table) >= 3  # statistics of the rows this transaction wrote
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = %s", [table]
        )
        assert cursor.fetchone()[0] is True


@postgres_only
def test_the_command_and_the_rebuild_job_analyze(memory, agent):
    some_entries(memory, agent.actor)
    before = analyze_count("memory_lifecycleprojection")
    call_command("rebuild_projection", "--memory", "acme", "--no-progress", stdout=StringIO())
    assert analyze_count("memory_lifecycleprojection") == before + 1
    maintenance.run_projection_rebuild(memory, actor=Actor.system(), dry_run=False)
    assert analyze_count("memory_lifecycleprojection") == before + 2


@postgres_only
def test_reanalyzing_versions_analyzes_the_version_table(memory, agent):
    some_entries(memory, agent.actor)
    before = analyze_count("memory_entryversion")
    reanalyze_versions(check=True)
    assert analyze_count("memory_entryversion") == before
    reanalyze_versions()
    assert analyze_count("memory_entryversion") == before + 1
    call_command("rebuild_projection", "--reindex", "--no-progress", stdout=StringIO())
    assert analyze_count("memory_entryversion") == before + 2


@postgres_only
def test_the_vector_backfill_analyzes_the_vector_tables(memory, agent, settings):
    from memory.embeddings import _provider
    from memory.models import EntryEmbedding

    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    try:
        some_entries(memory, agent.actor)
        before = analyze_count("memory_entryembedding")
        out = StringIO()
        call_command("rebuild_projection", "--vectors", "--no-progress", stdout=out)
        assert "made" in out.getvalue()
        assert EntryEmbedding.objects.exists()
        assert analyze_count("memory_entryembedding") == before + 1
    finally:
        _provider.cache_clear()


@postgres_only
def test_the_demo_loader_analyzes_the_memory_tables():
    before = {t: analyze_count(t) for t in ("memory_entry", "memory_head", "memory_revision")}
    call_command("load_demo", "--quiet", stdout=StringIO())
    assert {t: analyze_count(t) for t in before} == {t: n + 1 for t, n in before.items()}
    assert reltuples("memory_entry") >= 30
    # Loading again loads nothing, so it analyzes nothing.
    call_command("load_demo", "--quiet", stdout=StringIO())
    assert analyze_count("memory_entry") == before["memory_entry"] + 1


@postgres_only
def test_analyze_takes_models_or_names_and_skips_missing_tables():
    assert db_stats.analyze([LifecycleProjection, "memory_head", "no_such_table"]) == [
        "memory_lifecycleprojection",
        "memory_head",
    ]
    assert db_stats.analyze([]) == []


def sqlite_stats(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
        if not cursor.fetchone()[0]:
            return 0
        cursor.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = %s", [table])
        return int(cursor.fetchone()[0])


@sqlite_only
def test_on_sqlite_a_rebuild_analyzes_tables_past_the_threshold(memory, agent, monkeypatch):
    some_entries(memory, agent.actor)
    table = "memory_lifecycleprojection"
    # Small tables are left to SQLite's heuristics.
    assert db_stats.analyze(db_stats.MEMORY_TABLES) == []
    maintenance.rebuild_projection(memory, actor=Actor.system())
    assert sqlite_stats(table) == 0
    monkeypatch.setattr(db_stats, "SQLITE_MIN_ROWS", 3)
    maintenance.rebuild_projection(memory, actor=Actor.system(), check=True)
    assert sqlite_stats(table) == 0  # a check writes nothing, analyzes nothing
    maintenance.rebuild_projection(memory, actor=Actor.system())
    assert sqlite_stats(table) > 0
    assert db_stats.analyze([LifecycleProjection, "no_such_table"]) == [table]


# --- The batched rebuild -------------------------------------------------------------------------


def rich_memory(memory: Memory, staff: Actor, agent: Actor) -> list[int]:
    """Entries in every situation the derivation knows: evidence (direct and weak), an
    evidence-backed revise of current state, supersession, an unresolved and a settled
    conflict, consolidation, forgetting (by hand and by decay), quarantine, a pin, a session."""
    a = remember(memory, agent, "Deploy target eu-2", current_state=True, evidence=REPO).entry
    actions.revise_entry(
        memory,
        actor=agent,
        entry_uid=a.uid,
        body="Deploy target eu-3",
        evidence=[{"source": "repo", "ref": "deploy.yml"}],
    )
    b = remember(memory, agent, "Old cache TTL is 60s", dedupe=False).entry
    c = remember(memory, agent, "Cache TTL is 90s", evidence=REPO, dedupe=False).entry
    supersede(memory, old=b, new=c)
    actions.record_conflict(memory, actor=agent, from_entry=b.uid, to_entry=c.uid)  # settled
    d = remember(memory, agent, "Leader election uses locks", dedupe=False).entry
    e = remember(
        memory, agent, "Leader election uses leases", evidence=[{"source": "chat", "ref": "m1"}]
    ).entry
    actions.record_conflict(memory, actor=agent, from_entry=d.uid, to_entry=e.uid)
    f = remember(memory, agent, "Queue retries three times", dedupe=False).entry
    g = remember(memory, agent, "Queue retries 3 times with backoff", dedupe=False).entry
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        actions.write_revision(
            locked,
            actor=staff,
            kind=RevisionKind.CONSOLIDATE,
            reason="test",
            changes=[actions.Change(entry=f, to_state="inactive", state_reason="consolidated")],
            relations=[
                actions.NewRelation(kind=RelationKind.CONSOLIDATED_INTO, from_entry=f, to_entry=g)
            ],
        )
    h = remember(memory, agent, "Scratch idea", kind="working_note", dedupe=False).entry
    actions.forget_entry(memory, actor=agent, entry_uid=h.uid, reason="wrong")
    i = remember(memory, agent, "Stale note", kind="working_note", dedupe=False).entry
    j = remember(memory, agent, "Suspicious note", dedupe=False).entry
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        actions.write_revision(
            locked,
            actor=staff,
            kind=RevisionKind.FORGET,
            reason=maintenance.AUTO_DECAY_REASON,
            changes=[
                actions.Change(
                    entry=i, to_state="inactive", state_reason=maintenance.AUTO_DECAY_REASON
                ),
                actions.Change(entry=j, to_state="quarantined", state_reason="quarantine:test"),
            ],
        )
    k = remember(memory, agent, "We chose Postgres", kind="decision", evidence=REPO).entry
    actions.pin_entry(
        memory, actor=staff, entry_uid=k.uid, pinned=True, category="durable_decision", reason="t"
    )
    remember(memory, agent, "Session scratch", kind="working_note", tier="session", session_id="s1")
    return list(
        Head.objects.filter(memory=memory).order_by("entry_id").values_list("entry_id", flat=True)
    )


def as_values(rows):
    return [(r.entry_uid, r.fields) for r in rows]


def test_a_span_finds_exactly_what_the_explicit_pks_find(memory, staff, agent):
    pks = rich_memory(memory, staff, agent.actor)
    span = lifecycle.Span(memory.pk, 0, pks[-1])
    assert lifecycle.rebuild_batch(pks, write=False, span=span) == ([], [], 0)
    assert lifecycle.rebuild_batch(pks, write=False) == ([], [], 0)
    validities = set(
        LifecycleProjection.objects.filter(memory=memory).values_list("validity", flat=True)
    )
    assert validities == {"current", "superseded", "unresolved_conflict", "inactive", "quarantined"}
    # Tamper with every row and one head: both paths report the same differences.
    LifecycleProjection.objects.filter(memory=memory).update(importance=3, validity_reason="x")
    LifecycleProjection.objects.filter(entry_id=pks[0]).delete()
    Head.objects.filter(entry_id=pks[1]).update(state_reason="tampered")
    by_span = lifecycle.rebuild_batch(pks, write=False, span=span)
    by_pks = lifecycle.rebuild_batch(pks, write=False)
    assert as_values(by_span[0]) == as_values(by_pks[0])
    assert len(by_span[0]) == len(pks)
    assert by_span[1] == by_pks[1] == [Entry.objects.get(pk=pks[1]).uid]


def test_a_rewrite_keeps_the_recall_counters(memory, agent):
    (e, _, _) = some_entries(memory, agent.actor)
    LifecycleProjection.objects.filter(entry=e).update(importance=0, recall_count=7)
    report = maintenance.rebuild_projection(memory, actor=Actor.system())
    assert report.written == 1
    row = LifecycleProjection.objects.get(entry=e)
    assert (row.importance, row.recall_count) == (1, 7)


def test_a_batch_costs_the_same_queries_whatever_it_holds(
    memory, staff, agent, django_assert_num_queries
):
    from django.db import connection as conn
    from django.test.utils import CaptureQueriesContext

    def cost() -> int:
        pks = list(Head.objects.filter(memory=memory).values_list("entry_id", flat=True))
        span = lifecycle.Span(memory.pk, 0, max(pks))
        with CaptureQueriesContext(conn) as ctx:
            lifecycle.rebuild_batch(pks, write=False, span=span)
        return len(ctx.captured_queries)

    rich_memory(memory, staff, agent.actor)
    few = cost()
    for n in range(30):
        remember(
            memory, agent.actor, f"Cache shard {n} lives on node {n}", evidence=REPO, dedupe=False
        )
    assert cost() == few <= 10


def test_the_decay_scan_costs_two_queries_per_batch_and_one_for_the_survivors(
    memory, agent, django_assert_num_queries
):
    from datetime import timedelta

    from django.utils import timezone

    for n in range(7):
        remember(
            memory, agent.actor, f"Old note {n}", kind="working_note", tier="long", dedupe=False
        )
    later = timezone.now() + timedelta(days=200)
    memory.refresh_from_db()
    # Batches of 3 over 7 candidates: 3 batches with rows and an empty one (2 queries each but
    # the last), then the survivors' ids and version numbers in one query.
    with django_assert_num_queries(3 * 2 + 1 + 1):
        scan = maintenance.decay_candidates(memory, later, memory.policy, batch_size=3)
    assert scan.eligible == 7 and len(scan.candidates) == 7
    assert [c.version_number for c in scan.candidates] == [1] * 7


@postgres_only
def test_postgresql_connections_run_without_jit():
    """Every query of the product is short or a batch of short lookups; PostgreSQL's JIT would
    compile such a batch before running it (its summed estimate passes ``jit_above_cost``).
    The connection turns it off (``STEWARD_PG_JIT`` turns it back on)."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        (value,) = cursor.fetchone()
    assert value == "off"
