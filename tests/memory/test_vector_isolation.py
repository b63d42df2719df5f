"""A Memory's vector channel returns its own k nearest however large the other Memories are.

On pgvector one HNSW graph holds every Memory's vectors and the Memory is filtered after the
walk, so a small Memory beside a large one got a handful of the rows it asked for. Runs where
the index is pgvector (`make test-pgvector`); elsewhere the index is partitioned by Memory
(sqlite-vec) or scanned per Memory, and the same assertions hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from django.db import connection

from memory import actions, vectors
from memory.embeddings import _provider, get_provider
from memory.search.common import CURRENT

pytestmark = pytest.mark.django_db

SMALL = 150
LARGE = 4000


@pytest.fixture
def hashing(settings):
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    yield get_provider()
    _provider.cache_clear()


def _crowd(memory_pk: int, n: int, near: np.ndarray, first_id: int = 10_000_000) -> None:
    """``n`` vectors of another Memory about the same subject (close to ``near``), straight
    into the index (no entries: the small Memory's query never reads them, they only crowd
    its probe)."""
    rng = np.random.default_rng(first_id)  # each crowd its own vectors
    noise = rng.normal(size=(n, vectors.DIMENSIONS)).astype(np.float32)
    rows = (near[None, :] * 4 + noise / np.sqrt(vectors.DIMENSIONS)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    with connection.cursor() as cursor:
        if vectors.index_kind() == vectors.SQLITE_VEC:
            cursor.executemany(
                f"INSERT INTO {vectors.TABLE}(version_id, memory_id, embedding) VALUES (%s, %s, %s)",
                [(first_id + i, memory_pk, v.tobytes()) for i, v in enumerate(rows)],
            )
        else:
            cursor.executemany(
                f"INSERT INTO {vectors.TABLE}(version_id, memory_id, embedding) "
                "VALUES (%s, %s, %s::vector)",
                [(first_id + i, memory_pk, vectors._pg_literal(v)) for i, v in enumerate(rows)],
            )


def test_a_small_memory_beside_a_large_one_gets_its_own_k_nearest(
    memory, other_memory, agent, hashing
):
    if vectors.index_kind() == vectors.SCAN:
        pytest.skip("no vector index on this database (the scan reads one Memory only)")
    entries = [
        {"body": f"Turn {i}: the {w} team ships the {w} service on day {i}", "kind": "fact"}
        for i, w in enumerate(["billing", "search", "pager", "mobile", "ledger"] * (SMALL // 5))
    ]
    batch = actions.add_entries(memory, actor=agent.actor, entries=entries)
    vectors.index_versions([r.version.pk for r in batch.items])
    q = np.asarray(vectors.query_vector(hashing, "which team ships the pager service"))

    def nearest(limit: int) -> list[tuple[int, int, float]]:
        found, _ = vectors.nearest(
            memory.pk, list(q), provider=hashing, view=CURRENT, limit=limit, min_cosine=-1.0
        )
        return found

    alone = nearest(80)
    assert len(alone) == 80
    _crowd(other_memory.pk, LARGE, q.astype(np.float32))
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            # The planner's statistics of the filled table, as autovacuum would gather them:
            # with them it walks the HNSW graph for the order (without, it may sort exactly).
            cursor.execute(f"ANALYZE {vectors.TABLE}")
            # At this size the planner sorts the small Memory's 150 rows exactly; from a few
            # thousand rows on (a 10k-entry Memory) it walks the graph instead. Made to walk it
            # here as it does there: sorting is what it would rather avoid.
            cursor.execute("SET enable_sort = off")
            cursor.execute(
                f"EXPLAIN SELECT version_id FROM {vectors.TABLE} WHERE memory_id = %s "
                "ORDER BY embedding <=> %s::vector LIMIT 160",
                [memory.pk, vectors._pg_literal(q)],
            )
            plan = " ".join(row[0] for row in cursor.fetchall())
        assert "hnsw" in plan, plan
    try:
        beside = nearest(80)
    finally:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("RESET enable_sort")
    assert len(beside) == len(alone) == 80
    # Exactly the Memory's own nearest: the exact order over its vectors.
    mine = vectors.head_vectors(memory.pk, hashing, [r.entry.pk for r in batch.items])
    exact = sorted((round(float(v @ q), 4) for v in mine.values()), reverse=True)[:80]
    assert [round(c, 4) for _, _, c in beside] == exact


def _unit(seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).normal(size=vectors.DIMENSIONS).astype(np.float32)
    return q / np.linalg.norm(q)


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[object, ...]]:
    """The arguments of every call to ``memory.vectors.<name>``, which still runs."""
    calls: list[tuple[object, ...]] = []
    real = getattr(vectors, name)

    def spy(*args):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(vectors, name, spy)
    return calls


@contextmanager
def _walking_the_graph() -> Iterator[None]:
    """The planner walks the HNSW graph, as at 100,000 rows: the filled table's statistics (as
    autovacuum would gather them), and sorting made what it would rather avoid."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {vectors.TABLE}")
        cursor.execute("SET enable_sort = off")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_sort")


def test_a_memory_holding_most_of_the_index_is_answered_by_the_graph_walk(
    memory, other_memory, monkeypatch
):
    """The walk keeps more candidates than it is asked for (``vectors.WALK_WIDTH``): a few
    vectors of another Memory among them do not send the large Memory to the exact pass."""
    if vectors.index_kind() != vectors.PGVECTOR:
        pytest.skip("the graph walk filtered by Memory is pgvector's")
    q = _unit(3)
    _crowd(memory.pk, 1200, q)
    _crowd(other_memory.pk, 120, q, first_id=20_000_000)  # a tenth of the table, as near
    exact = _spy(monkeypatch, "_pg_exact")
    with _walking_the_graph():
        large = vectors._knn(vectors.PGVECTOR, memory.pk, q, 80)
        small = vectors._knn(vectors.PGVECTOR, other_memory.pk, q, 80)
    assert len(large) == len(small) == 80
    # The large Memory from the walk; the small one's walk came back short: answered exactly.
    assert [call[1] for call in exact] == [other_memory.pk]


def test_a_memory_sharing_its_neighbourhood_is_answered_by_a_wider_walk(
    memory, other_memory, monkeypatch
):
    """Another Memory holds two thirds of the neighbourhood: the first walk comes back short,
    but with more than ``1 / WIDEN_SHARE`` of the rows asked for, so a wider walk
    (``WIDE_WALK_WIDTH``) answers instead of the exact pass; its answer is nearly the exact
    one."""
    if vectors.index_kind() != vectors.PGVECTOR:
        pytest.skip("the graph walk filtered by Memory is pgvector's")
    q = _unit(5)
    _crowd(memory.pk, 400, q, first_id=30_000_000)
    _crowd(other_memory.pk, 800, q, first_id=40_000_000)
    real = vectors._pg_exact
    exact = _spy(monkeypatch, "_pg_exact")
    # The crowd has no entries: the Memory stands for one past the size answered exactly.
    monkeypatch.setattr(vectors, "_indexed_versions", lambda cursor, pk: vectors.EXACT_BELOW + 1)
    with _walking_the_graph():
        walked = vectors._knn(vectors.PGVECTOR, memory.pk, q, 80)
    assert exact == []
    assert len(walked) == 80
    with connection.cursor() as cursor:
        truth = real(cursor, memory.pk, vectors._pg_literal(q), 80)
    assert len({pk for pk, _ in walked} & {int(pk) for pk, _ in truth}) >= 72


def test_a_small_memory_or_a_walk_as_wide_as_allowed_goes_straight_to_the_exact_pass(
    memory, other_memory, monkeypatch
):
    """The second walk only where it can help: not for a Memory holding at most
    ``EXACT_BELOW`` versions (its exact pass is cheap, and it may hold fewer vectors than asked
    for), and not when the first walk was already as wide as pgvector walks."""
    if vectors.index_kind() != vectors.PGVECTOR:
        pytest.skip("the graph walk filtered by Memory is pgvector's")
    q = _unit(5)
    _crowd(memory.pk, 400, q, first_id=50_000_000)
    _crowd(other_memory.pk, 800, q, first_id=60_000_000)
    walks = _spy(monkeypatch, "_pg_walk")
    with _walking_the_graph():
        small = vectors._knn(vectors.PGVECTOR, memory.pk, q, 80)  # no entries: 0 versions
        monkeypatch.setattr(vectors, "_indexed_versions", lambda c, pk: vectors.EXACT_BELOW + 1)
        wide = vectors._knn(vectors.PGVECTOR, memory.pk, q, 500)  # 2·500 is pgvector's most
    assert len(small) == 80 and len(wide) == 400
    assert [call[5] for call in walks] == [vectors.WALK_WIDTH, vectors.WALK_WIDTH]
