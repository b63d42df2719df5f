"""The vector index: one vector per entry version, nearest neighbours per Memory (DESIGN.md §6).

Vectors are a derived projection, never authoritative, and rebuildable at any time:

- **Where they live.** SQLite: a ``vec0`` virtual table of the ``sqlite-vec`` extension
  (partitioned by Memory, exact KNN). PostgreSQL: a ``vector(384)`` column of pgvector with an
  HNSW index (cosine), when the extension is installed. Otherwise — an SQLite build that cannot
  load extensions, a PostgreSQL without pgvector — a bounded, batched numpy scan over the cached
  embeddings (:class:`~memory.models.EntryEmbedding`); ``manage.py check`` warns about it and
  the ranking trace says how many vectors the scan compared and whether it stopped at its bound.
- **When they are made.** After a revision that created versions commits
  (``memory.effects.versions_written``, wired to the ``memory.index_vectors`` Celery task, which
  runs in-process when no broker is configured),
  never under the Memory lock. ``manage.py rebuild_projection --vectors`` backfills the missing
  ones in bounded batches with a progress bar. Embeddings are cached by (provider, content hash):
  the admission check has usually embedded the body already, so indexing it costs no inference.
- **What a query sees.** :func:`nearest` asks the index for the ``fetch`` nearest vectors of the
  Memory, then applies the same scope, clearance, validity and request filters
  (:mod:`memory.search.filters`) as the lexical channel (one query), widening ``fetch`` (×4, up to
  :data:`MAX_FETCH`) while the filters left fewer than asked and the index has more: a bounded,
  reported number of vectors per query, whatever the size of the Memory. On pgvector one HNSW
  graph holds every Memory and the Memory is filtered after the walk, so a probe can come back
  short only because other Memories filled it; a short probe is answered exactly over the
  Memory's own rows instead (:func:`_pg_exact`): a Memory's k nearest do not depend on how large
  the other Memories are.

:class:`IndexedVector` records which versions the index holds, under which provider — a plain
table both backends can join, so finding the missing vectors is a keyset walk, not a scan of the
vector table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.db import DatabaseError, connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, F, OuterRef

from .embeddings import (
    EmbeddingProvider,
    get_provider,
    indexing_keys,
    model_reads,
    other_model_reads,
    other_scripts_path,
    pack,
    provider_for,
    provider_key,
)
from .models import WITHHELD_STATES, EntryEmbedding, EntryVersion, HeadState, IndexedVector
from .search.common import ACTIVE, CANDIDATES, CURRENT, HEADS, HISTORY, Candidate, setting
from .search.filters import RecallFilters

log = logging.getLogger(__name__)

#: The dimension of the index column (both packaged models, bge-small-en-v1.5 and
#: all-MiniLM-L6-v2, give 384). A
#: provider of another dimension is served by the scan fallback.
DIMENSIONS = 384
TABLE = "memory_vector"
SQLITE_VEC = "sqlite-vec"
PGVECTOR = "pgvector"
SCAN = "scan"
#: Most vectors one query asks the index for (sqlite-vec's own ceiling for ``k``).
MAX_FETCH = 4096
#: Versions embedded and stored per batch (after a write, in the backfill).
BATCH = 256


# --- Which index this connection has --------------------------------------------------------


def index_kind(using: str = "default") -> str:
    """``sqlite-vec``, ``pgvector`` or ``scan`` for the current connection (cached per raw
    connection: one catalogue query per new connection at most)."""
    conn = connections[using]
    conn.ensure_connection()
    raw = conn.connection
    cached = getattr(conn, "_steward_vector_index", None)
    if cached is not None and cached[0] is raw:
        return str(cached[1])
    kind = _detect(conn)
    conn._steward_vector_index = (raw, kind)  # type: ignore[attr-defined]
    return kind


def _detect(conn: BaseDatabaseWrapper) -> str:
    with conn.cursor() as cursor:
        if conn.vendor == "sqlite":
            if not getattr(conn, "vector_extension", None):
                return SCAN
            cursor.execute("SELECT 1 FROM sqlite_master WHERE name = %s", [TABLE])
            return SQLITE_VEC if cursor.fetchone() else SCAN
        if conn.vendor == "postgresql":
            cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [TABLE])
            row = cursor.fetchone()
            return PGVECTOR if row and row[0] else SCAN
    return SCAN


def pgvector_available(conn: BaseDatabaseWrapper) -> bool:
    with conn.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return cursor.fetchone() is not None


def create_index_sql(vendor: str) -> list[str]:
    """The statements creating the index table (idempotent)."""
    if vendor == "sqlite":
        return [
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING vec0("
            "version_id integer primary key, memory_id integer partition key, "
            f"embedding float[{DIMENSIONS}] distance_metric=cosine)"
        ]
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"CREATE TABLE IF NOT EXISTS {TABLE} (version_id bigint PRIMARY KEY, "
        f"memory_id bigint NOT NULL, embedding vector({DIMENSIONS}) NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {TABLE}_memory ON {TABLE} (memory_id)",
        f"CREATE INDEX IF NOT EXISTS {TABLE}_hnsw ON {TABLE} "
        "USING hnsw (embedding vector_cosine_ops)",
    ]


def index_statements(conn: BaseDatabaseWrapper) -> list[str]:
    """What creates the index table on ``conn`` (none where it cannot hold one)."""
    if conn.vendor == "sqlite" and getattr(conn, "vector_extension", None):
        return create_index_sql("sqlite")
    if conn.vendor == "postgresql" and pgvector_available(conn):
        return create_index_sql("postgresql")
    return []


def ensure_index(using: str = "default") -> str:
    """Create the index table where this database can hold one; returns the index kind."""
    conn = connections[using]
    conn.ensure_connection()
    statements = index_statements(conn)
    try:
        with transaction.atomic(using=using), conn.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
    except DatabaseError as exc:  # e.g. no privilege to CREATE EXTENSION: the scan serves
        log.warning("vector index not created: %s", exc)
    conn._steward_vector_index = None  # type: ignore[attr-defined]
    return index_kind(using)


# --- Making vectors -------------------------------------------------------------------------


def vectors_for(
    provider: EmbeddingProvider, items: Iterable[tuple[str, str]]
) -> dict[str, np.ndarray]:
    """Unit vectors for (content_hash, body) pairs: cached ones read, the others embedded once
    (one batch) and cached. Keyed by content hash."""
    pending = dict(items)
    out: dict[str, np.ndarray] = {}
    if not pending:
        return out
    for h, data in EntryEmbedding.objects.filter(
        provider=provider.key, content_hash__in=list(pending)
    ).values_list("content_hash", "vector"):
        out[h] = np.frombuffer(bytes(data), dtype=np.float32)
    todo = [(h, b) for h, b in pending.items() if h not in out]
    if todo:
        embedded = provider.embed([b for _, b in todo])
        EntryEmbedding.objects.bulk_create(
            [
                EntryEmbedding(
                    provider=provider.key,
                    content_hash=h,
                    dimensions=provider.dimensions,
                    vector=pack(vec),
                )
                for (h, _), vec in zip(todo, embedded, strict=True)
            ],
            ignore_conflicts=True,
        )
        for (h, _), vec in zip(todo, embedded, strict=True):
            out[h] = np.asarray(vec, dtype=np.float32)
    return out


def head_vectors(
    memory_pk: int, provider: EmbeddingProvider, entry_pks: Iterable[int], *, batch: int = 1000
) -> dict[int, np.ndarray]:
    """Unit vectors of the head versions of ``entry_pks`` in ``memory_pk``, as stored (the
    cache keyed by provider and content hash, :func:`vectors_for`), keyed by entry; ``batch``
    entries per pair of queries. A head whose vector is not stored yet (its indexing after
    the write has not run) is embedded here, not stored: no write. A head ``provider`` does not
    read (:func:`memory.embeddings.model_reads`: its vector would mean nothing, and another
    model may hold the stored one) is left out unless its vector is stored. Takes no lock."""
    pks = sorted(set(entry_pks))
    out: dict[int, np.ndarray] = {}
    for start in range(0, len(pks), batch):
        chunk = pks[start : start + batch]
        hashes = dict(
            EntryVersion.objects.filter(
                memory_id=memory_pk, entry_id__in=chunk, entry__head__version_id=F("pk")
            ).values_list("entry_id", "content_hash")
        )
        stored = {
            h: np.frombuffer(bytes(data), dtype=np.float32)
            for h, data in EntryEmbedding.objects.filter(
                provider=provider.key, content_hash__in=set(hashes.values())
            ).values_list("content_hash", "vector")
        }
        missing = [pk for pk, h in hashes.items() if h not in stored]
        if missing:
            bodies = dict(
                EntryVersion.objects.filter(
                    entry_id__in=missing, entry__head__version_id=F("pk")
                ).values_list("entry_id", "body")
            )
            order = [pk for pk in sorted(bodies) if model_reads(bodies[pk], provider)]
            embedded = provider.embed([bodies[pk] for pk in order]) if order else []
            for pk, vec in zip(order, embedded, strict=True):
                stored[hashes[pk]] = np.asarray(vec, dtype=np.float32)
        out.update((pk, stored[h]) for pk, h in hashes.items() if h in stored)
    return out


def index_versions(version_pks: Sequence[int], *, provider: EmbeddingProvider | None = None) -> int:
    """Embed (or read from the cache) and index the given versions; returns how many now have a
    vector (in the index, or in the cache the scan reads). Each version gets the vector of the
    model that reads its text (:func:`memory.embeddings.provider_for`), or ``provider``'s when
    given. Idempotent; takes no lock; run after the writing transaction committed."""
    if not version_pks or (provider is None and get_provider() is None):
        return 0
    done = 0
    for start in range(0, len(version_pks), BATCH):
        chunk = list(version_pks[start : start + BATCH])
        rows = list(
            EntryVersion.objects.filter(pk__in=chunk).values_list(
                "pk", "memory_id", "content_hash", "body"
            )
        )
        by_model: dict[str, tuple[EmbeddingProvider, list[tuple[int, int, str, str]]]] = {}
        for row in rows:
            chosen = provider or provider_for(row[3])
            assert chosen is not None
            by_model.setdefault(chosen.key, (chosen, []))[1].append(row)
        for chosen, group in by_model.values():
            vectors = vectors_for(chosen, [(h, b) for _, _, h, b in group])
            _store(chosen, [(pk, m, vectors[h]) for pk, m, h, _ in group])
        done += len(rows)
    return done


def _store(provider: EmbeddingProvider, rows: Sequence[tuple[int, int, np.ndarray]]) -> int:
    """Put (version, memory, vector) rows into the index, replacing another provider's."""
    kind = index_kind()
    if kind == SCAN or provider.dimensions != DIMENSIONS or not rows:
        return 0
    pks = [pk for pk, _, _ in rows]
    with transaction.atomic():
        have = dict(
            IndexedVector.objects.filter(version_id__in=pks).values_list("version_id", "provider")
        )
        stale = [pk for pk, p in have.items() if p != provider.key]
        new = [r for r in rows if r[0] not in have or r[0] in stale]
        if not new:
            return 0
        with connections["default"].cursor() as cursor:
            if stale:
                marks = ", ".join(["%s"] * len(stale))
                cursor.execute(f"DELETE FROM {TABLE} WHERE version_id IN ({marks})", stale)
            if kind == SQLITE_VEC:
                cursor.executemany(
                    f"INSERT INTO {TABLE}(version_id, memory_id, embedding) VALUES (%s, %s, %s)",
                    [(pk, m, np.asarray(vec, dtype=np.float32).tobytes()) for pk, m, vec in new],
                )
            else:
                cursor.executemany(
                    f"INSERT INTO {TABLE}(version_id, memory_id, embedding) "
                    "VALUES (%s, %s, %s::vector) ON CONFLICT (version_id) DO UPDATE "
                    "SET embedding = EXCLUDED.embedding",
                    [(pk, m, _pg_literal(vec)) for pk, m, vec in new],
                )
        IndexedVector.objects.filter(version_id__in=stale).delete()
        IndexedVector.objects.bulk_create(
            [IndexedVector(version_id=pk, memory_id=m, provider=provider.key) for pk, m, _ in new],
            ignore_conflicts=True,
        )
    return len(new)


def _pg_literal(vec: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vec.tolist()) + "]"


def missing_versions(provider: EmbeddingProvider | None = None) -> models.QuerySet[Any]:
    """Versions without a vector (in the index, or in the cache for the scan) of ``provider``,
    or, by default, of any model the index holds (:func:`memory.embeddings.indexing_keys`).
    A version embedded by the main model although the other scripts' model reads it is found by
    :func:`misrouted_versions`."""
    models_ = {provider.key: provider.dimensions} if provider is not None else indexing_keys()
    keys = list(models_)
    versions = EntryVersion.objects.all()
    have: models.QuerySet[Any]
    if index_kind() != SCAN and all(d == DIMENSIONS for d in models_.values()):
        have = IndexedVector.objects.filter(version_id=OuterRef("pk"), provider__in=keys)
    else:
        have = EntryEmbedding.objects.filter(
            content_hash=OuterRef("content_hash"), provider__in=keys
        )
    return versions.filter(~Exists(have))


def misrouted_versions(*, batch: int = BATCH) -> Iterator[list[int]]:
    """Batches of versions whose vector was made by a model other than the one that reads their
    text — made before the other scripts' model was configured, or after it was turned off —
    and that have no vector of the right model (with an index: its row records the model; with
    the scan: the cache by model). Only texts with a letter outside ASCII can differ; they are
    read keyset by id, ``batch`` at a time, and checked here (the script test is Python's)."""
    provider = get_provider()
    if provider is None:
        return
    path = other_scripts_path()
    other_key = provider_key(path) if path else None
    scan = index_kind() == SCAN or any(d != DIMENSIONS for d in indexing_keys().values())
    rows = EntryVersion.objects.filter(body__regex=r"[^\x01-\x7f]")
    if not scan:
        made_by = IndexedVector.objects.filter(version_id=OuterRef("pk")).values("provider")[:1]
        rows = rows.annotate(made_by=models.Subquery(made_by)).filter(made_by__isnull=False)
    fields = ("pk", "body", "content_hash") if scan else ("pk", "body", "content_hash", "made_by")
    cursor = 0
    while True:
        page = list(rows.filter(pk__gt=cursor).order_by("pk").values_list(*fields)[:batch])
        if not page:
            return
        cursor = page[-1][0]
        right = {row[0]: _reader_key(row[1], provider, other_key) for row in page}
        if scan:
            cached = set(
                EntryEmbedding.objects.filter(
                    content_hash__in=[row[2] for row in page], provider__in=set(right.values())
                ).values_list("provider", "content_hash")
            )
            wrong = [row[0] for row in page if (right[row[0]], row[2]) not in cached]
        else:
            wrong = [row[0] for row in page if row[3] != right[row[0]]]
        if wrong:
            yield wrong


def backfill(
    *, batch: int = BATCH, progress: Callable[[int], None] | None = None
) -> dict[str, int | str]:
    """Make every missing vector, ``batch`` versions at a time (keyset by id), then embed again
    the versions embedded by a model that does not read them (:func:`misrouted_versions`);
    returns counts. ``progress(n)`` is called after each batch with the number of versions it
    made."""
    provider = get_provider()
    kind = index_kind()
    if provider is None:
        return {"provider": "", "index": kind, "missing": 0, "stored": 0, "rerouted": 0}
    missing = missing_versions()
    total = missing.count()
    cursor, stored = 0, 0
    while True:
        pks = list(
            missing.filter(pk__gt=cursor).order_by("pk").values_list("pk", flat=True)[:batch]
        )
        if not pks:
            break
        cursor = pks[-1]
        stored += index_versions(pks)
        if progress is not None:
            progress(len(pks))
    rerouted = 0
    for pks in misrouted_versions(batch=batch):
        rerouted += index_versions(pks)
    keys = "+".join(indexing_keys())
    return {
        "provider": keys,
        "index": kind,
        "missing": total,
        "stored": stored,
        "rerouted": rerouted,
    }


# --- Nearest neighbours ---------------------------------------------------------------------


@dataclass
class VectorScan:
    """What one vector query looked at (reported in the ranking trace)."""

    index: str
    fetched: int = 0
    scanned: int = 0
    bounded: bool = False
    widened: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def nearest(
    memory_pk: int,
    qvec: Sequence[float],
    *,
    provider: EmbeddingProvider,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    min_cosine: float = 0.0,
    exclude_entry_pks: Iterable[int] = (),
    filters: RecallFilters | None = None,
) -> tuple[list[tuple[int, int, float]], VectorScan]:
    """The ``limit`` nearest versions of ``memory_pk`` in ``view`` within ``sensitivities`` and
    the request's ``filters``, as (entry_pk, version_pk, cosine) best first (ties by version
    id), at or above ``min_cosine``."""
    q = np.asarray(qvec, dtype=np.float32)
    excluded = set(exclude_entry_pks)
    kind = index_kind()
    if kind == SCAN or provider.dimensions != DIMENSIONS or len(q) != DIMENSIONS:
        return _scan(
            memory_pk, q, provider, view, limit, sensitivities, min_cosine, excluded, filters
        )
    scan = VectorScan(index=kind)
    fetch = min(max(2 * limit, 64), MAX_FETCH)
    while True:
        found = _knn(kind, memory_pk, q, fetch)
        scan.fetched = fetch
        scan.scanned = len(found)
        close = [(pk, cos) for pk, cos in found if cos >= min_cosine]
        kept = _visible(close, memory_pk, view, sensitivities, excluded, provider.key, filters)
        exhausted = len(found) < fetch or len(close) < len(found)
        if len(kept) >= limit or exhausted or fetch >= MAX_FETCH:
            scan.bounded = not exhausted and len(kept) < limit
            return kept[:limit], scan
        fetch = min(fetch * 4, MAX_FETCH)
        scan.widened += 1


def _knn(kind: str, memory_pk: int, q: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest vectors of the Memory: (version_pk, cosine), nearest first."""
    conn = connections["default"]
    with conn.cursor() as cursor:
        if kind == SQLITE_VEC:
            cursor.execute(
                f"SELECT version_id, distance FROM {TABLE} WHERE embedding MATCH %s AND k = %s "
                "AND memory_id = %s ORDER BY distance",
                [q.tobytes(), k, memory_pk],
            )
        else:
            lit = _pg_literal(q)
            rows = _pg_walk(conn, cursor, memory_pk, lit, k, WALK_WIDTH)
            if (
                k // WIDEN_SHARE <= len(rows) < k
                and min(WIDE_WALK_WIDTH * k, MAX_EF) > min(WALK_WIDTH * k, MAX_EF)
                and _indexed_versions(cursor, memory_pk) > EXACT_BELOW
            ):
                # Other Memories' vectors hold part of this neighbourhood (a Memory's texts
                # sit near another's on the same subject), but not most of it: a wider walk
                # finds the rest at a fraction of the exact pass's cost for a large Memory.
                rows = _pg_walk(conn, cursor, memory_pk, lit, k, WIDE_WALK_WIDTH)
            if len(rows) < k:
                # One HNSW graph holds every Memory's vectors and the Memory is filtered after
                # the walk: a short answer may only mean that other Memories' vectors filled
                # the probe (a 10k-entry Memory beside a 100k one got 17 of 80). This Memory's
                # own k nearest, exactly, over its rows (the memory_id index).
                rows = _pg_exact(cursor, memory_pk, lit, k)
            return _cosines(rows)
        return _cosines(cursor.fetchall())


def _indexed_versions(cursor: Any, memory_pk: int) -> int:
    """The Memory's indexed versions (its BM25 collection size, one row by key): at most as
    many vectors."""
    cursor.execute("SELECT versions FROM memory_lexicalcorpus WHERE memory_id = %s", [memory_pk])
    row = cursor.fetchone()
    return int(row[0]) if row else 0


def _pg_walk(
    conn: BaseDatabaseWrapper, cursor: Any, memory_pk: int, lit: str, k: int, width: int
) -> list[tuple[Any, Any]]:
    """The Memory's nearest ``k`` the HNSW walk finds keeping ``width``·k candidates (fewer
    when other Memories' vectors are among them: the Memory is filtered after the walk)."""
    _pg_ef_search(conn, width * k)
    cursor.execute(
        f"SELECT version_id, embedding <=> %s::vector AS d FROM {TABLE} "
        "WHERE memory_id = %s ORDER BY embedding <=> %s::vector LIMIT %s",
        [lit, memory_pk, lit, k],
    )
    return list(cursor.fetchall())


def _cosines(rows: Sequence[tuple[Any, Any]]) -> list[tuple[int, float]]:
    # Rounded so both backends (and every platform) order equal cosines the same way.
    return [(int(pk), round(1.0 - float(d), 6)) for pk, d in rows]


def _pg_exact(cursor: Any, memory_pk: int, lit: str, k: int) -> list[tuple[Any, Any]]:
    """The ``k`` nearest vectors of one Memory by exact distance: its rows are read through
    the ``memory_id`` index and their distances sorted (the subquery's ``OFFSET 0`` keeps the
    planner from walking the HNSW graph for the order instead; only ids and distances are
    sorted, a top-k heap in memory); cost linear in the Memory's own size, never the table's."""
    cursor.execute(
        f"SELECT version_id, d FROM (SELECT version_id, embedding <=> %s::vector AS d "
        f"FROM {TABLE} WHERE memory_id = %s OFFSET 0) AS own ORDER BY d, version_id LIMIT %s",
        [lit, memory_pk, k],
    )
    return list(cursor.fetchall())


#: How many candidates the HNSW walk keeps (``hnsw.ef_search``) per row asked for. The Memory is
#: filtered after the walk, so with exactly ``k`` kept, one other Memory's vector among them made
#: the answer short and sent even a Memory holding most of the table (100,000 of 110,000
#: vectors) to the exact pass, linear in its size: bare ANN p95 94 ms at 100k
#: (docs/benchmarks.md). Twice ``k`` leaves room for the others' share.
WALK_WIDTH = 2

#: The second walk's width, tried when the first came back short but with at least
#: ``1 / WIDEN_SHARE`` of the rows asked for. Below that share the Memory is a small part of the
#: neighbourhood, and its exact pass (linear in its own rows) is the cheaper answer. On the
#: search bench, where the 10k and 100k Memories each hold a thousand model-made vectors near
#: every question, 36 of 100 searches of the large Memory went to its exact pass (73 ms each).
#: The second walk is tried only where it can help: when its width is wider than the first's
#: (pgvector walks at most ``MAX_EF``) and the Memory holds more than ``EXACT_BELOW`` indexed
#: versions — a smaller one (or one holding fewer vectors than asked for) is answered exactly at
#: once, in ~3 ms at 10,000 rows.
WIDE_WALK_WIDTH = 8
WIDEN_SHARE = 4
EXACT_BELOW = 20_000
MAX_EF = 1000


def _pg_ef_search(conn: BaseDatabaseWrapper, k: int) -> None:
    """HNSW returns at most ``hnsw.ef_search`` rows: set it to ``k`` (40..``MAX_EF``) for this
    connection, so a walk keeps the width asked for (a wide walk does not widen the next).

    Remembered per connection only outside a transaction: a setting made inside one is undone
    when it rolls back, and a remembered value would then leave the walk at the default 40
    (every longer answer short, so every search sent to the exact pass)."""
    want = min(max(k, 40), MAX_EF)
    raw = conn.connection
    inside = conn.in_atomic_block
    known = getattr(conn, "_steward_ef_search", None)
    if not inside and known is not None and known[0] is raw and known[1] == want:
        return
    with conn.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(want)])
    conn._steward_ef_search = None if inside else (raw, want)  # type: ignore[attr-defined]


def _scoped(
    memory_pk: int,
    view: str,
    sensitivities: Sequence[str] | None,
    filters: RecallFilters | None = None,
) -> models.QuerySet[Any]:
    qs = EntryVersion.objects.filter(memory_id=memory_pk)
    if view in (ACTIVE, CURRENT, HEADS, CANDIDATES):
        qs = qs.filter(entry__head__version_id=F("pk"))
    if view in (ACTIVE, CURRENT):
        qs = qs.filter(entry__head__state=HeadState.ACTIVE)
    if view == CANDIDATES:
        qs = qs.filter(entry__head__state=HeadState.CANDIDATE)
    if view == CURRENT:
        qs = qs.filter(entry__projection__validity__in=["current", "unresolved_conflict"])
    if view == HISTORY:
        qs = qs.exclude(entry__projection__state__in=WITHHELD_STATES)
    if sensitivities is not None:
        qs = qs.filter(entry__sensitivity__in=list(sensitivities))
    if filters is not None:
        qs = filters.apply(qs, history=view == HISTORY)
    return qs


def _visible(
    found: Sequence[tuple[int, float]],
    memory_pk: int,
    view: str,
    sensitivities: Sequence[str] | None,
    excluded: set[int],
    provider: str,
    filters: RecallFilters | None = None,
) -> list[tuple[int, int, float]]:
    """The found versions the view, clearance and filters admit, best first (one query). A
    vector left by another model (until the backfill replaces it) is not a match."""
    if not found:
        return []
    cos = dict(found)
    current = IndexedVector.objects.filter(version_id=OuterRef("pk"), provider=provider)
    rows = _scoped(memory_pk, view, sensitivities, filters).filter(
        Exists(current), pk__in=list(cos)
    )
    entry_of = {v: e for e, v in rows.values_list("entry_id", "pk") if e not in excluded}
    kept = [(entry_of[v], v, cos[v]) for v in cos if v in entry_of]
    kept.sort(key=lambda t: (-t[2], t[1]))
    return kept


def _scan(
    memory_pk: int,
    q: np.ndarray,
    provider: EmbeddingProvider,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None,
    min_cosine: float,
    excluded: set[int],
    filters: RecallFilters | None = None,
) -> tuple[list[tuple[int, int, float]], VectorScan]:
    """Without an index: cosine over the cached embeddings of the Memory's versions in the view,
    newest first, in batches, at most ``VECTOR_SCAN_MAX`` of them (reported when reached). The
    cache may hold a vector of this model for a text another model reads (one written before
    the other scripts' model was configured): with that model configured, a text counts only
    for the model that reads it (the text is read for it; no model is loaded)."""
    path = other_scripts_path()
    main = get_provider()
    routed = path is not None and main is not None
    other_key = provider_key(path) if path else None
    bound = setting("VECTOR_SCAN_MAX", 50_000)
    cached = EntryEmbedding.objects.filter(
        provider=provider.key, content_hash=OuterRef("content_hash")
    )
    rows = (
        _scoped(memory_pk, view, sensitivities, filters)
        .annotate(vec=models.Subquery(cached.values("vector")[:1]))
        .filter(vec__isnull=False)
        .order_by("-pk")
        .values_list("entry_id", "pk", "vec", *(["body"] if routed else []))
    )
    best: list[tuple[int, int, float]] = []
    scanned = 0
    batch: list[tuple[int, int, bytes]] = []

    def flush() -> None:
        if not batch:
            return
        matrix = np.stack([np.frombuffer(bytes(v), dtype=np.float32) for _, _, v in batch])
        if matrix.shape[1] != len(q):
            batch.clear()
            return
        scores = np.round(matrix @ q, 6)
        for (e, v, _), s in zip(batch, scores.tolist(), strict=True):
            if s >= min_cosine and e not in excluded:
                best.append((e, v, float(s)))
        best.sort(key=lambda t: (-t[2], t[1]))
        del best[limit:]
        batch.clear()

    for entry_pk, version_pk, data, *body in rows[:bound].iterator(chunk_size=2000):
        scanned += 1
        if routed and _reader_key(body[0], main, other_key) != provider.key:
            continue
        batch.append((entry_pk, version_pk, data))
        if len(batch) >= 2000:
            flush()
    flush()
    return best, VectorScan(index=SCAN, fetched=bound, scanned=scanned, bounded=scanned >= bound)


def _reader_key(text: str, main: EmbeddingProvider | None, other_key: str | None) -> str | None:
    """The key of the model whose vector ``text`` gets (``embeddings.provider_for``, without
    loading the other model)."""
    if main is None:
        return None
    return other_key if other_key and other_model_reads(text, main) else main.key


def query_vector(provider: EmbeddingProvider, text: str) -> list[float]:
    """The query's embedding (one model call): the provider's own ``embed_query`` when it has
    one (a model that reads questions and passages each with its prefix), else its ``embed``
    with its ``query_prefix`` when it declares one (a retrieval instruction)."""
    as_query = getattr(provider, "embed_query", None)
    if as_query is not None:
        return list(as_query(text))
    return list(provider.embed([getattr(provider, "query_prefix", "") + text])[0])


def as_candidates(found: Sequence[tuple[int, int, float]]) -> list[Candidate]:
    return [Candidate(e, v, i) for i, (e, v, _) in enumerate(found, start=1)]
