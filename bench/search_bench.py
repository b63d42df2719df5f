"""Search latency benchmark (not a test): recall p50/p95 against the bare full-text query.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_bench .venv/bin/python bench/search_bench.py
    .venv/bin/python bench/search_bench.py            # SQLite: /tmp/steward_bench.sqlite3

Builds (once per database) two Memories of 10,000 and 100,000 entries with bulk inserts that
write exactly the rows the actions would — an ``add`` revision per entry with its change, the
version (content hash, analyzer tokens), evidence snapshots for a share of them, the head and
the lifecycle projection derived by ``memory.lifecycle.derive`` — then checks a sample with the
projection rebuild (``--verify`` checks every row). Some entries are revised, forgotten or in
conflict so the validity filter has work to do.

On PostgreSQL the same model instances are loaded with ``COPY`` (psycopg 3) in batches of 2,000
entries instead of ``bulk_create``, with the lexical GIN index dropped for the load and built
once at the end, then ``ANALYZE`` (``memory.db_stats.analyze``); the random vectors of
``--semantic`` go in with a binary ``COPY`` and the HNSW graph is built once after them. That is
what makes the 1,000,000-entry size practical (≈ 1,600 entries/s against ≈ 430–670 through the
ORM on this machine). SQLite keeps ``bulk_create``.

For each Memory it times ``memory.search.search`` (limit 10, current view, lexical channel — the
default configuration) over a fixed set of 1–6 word queries, and the bare full-text query on the
same data: the backend's own ranked match (bm25 on SQLite over the Memory's scope token,
ts_rank on PostgreSQL) limited to the same channel cap, with no admission floor, no validity
filter, no clearance, no fusion and no row loading. Prints p50/p95 in milliseconds and the
ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import timedelta
from typing import Any

from bench_env import setup_django

setup_django(default_database="sqlite:////tmp/steward_bench.sqlite3")

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402
from seed_common import (  # noqa: E402
    KINDS,
    BulkCreate,
    Copy,
    add_revisions,
    declared_source,
    load_adds,
    vocabulary,
    zipf_words,
)

from memory import db_stats, lifecycle, maintenance, vectors  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.embeddings import require_provider  # noqa: E402
from memory.models import Entry, Head, IndexedVector, Memory, Relation, Revision  # noqa: E402
from memory.search import (  # noqa: E402
    RecallFilters,
    channel_cap,
    lexical_channel,
    query_terms,
    search,
)

#: The indexes a bulk load drops and builds once at the end: the GIN index of the lexical
#: tsvector, updated in place on every insert (``fastupdate = off``, migration 0013), and the
#: versions in length order (migration 0028).
BULK_INDEXES = ("memory_entryversion_search_vector", "memory_entryversion_length_order")


def build(slug: str, n: int, seed: int, batch: int = 2000) -> Memory:
    existing = Memory.objects.filter(slug=slug).first()
    if existing is not None:
        return existing
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    repo = declared_source("bench-repo")
    actor = Actor.system("bench")
    memory = Memory.objects.create(slug=slug, name=f"Benchmark {n}")
    postgres = connection.vendor == "postgresql"
    loader: BulkCreate | Copy = Copy() if postgres else BulkCreate()
    dropped: list[str] = []
    if postgres:
        with connection.cursor() as c:
            c.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)",
                [list(BULK_INDEXES)],
            )
            for name, definition in c.fetchall():
                c.execute(f"DROP INDEX {name}")
                dropped.append(definition)
    started = time.monotonic()
    number = 0
    try:
        for start in range(0, n, batch):
            size = min(batch, n - start)
            with transaction.atomic():
                now = timezone.now()
                entries = loader.add(
                    Entry,
                    [
                        Entry(
                            memory=memory,
                            kind=rng.choice(KINDS),
                            current_state=rng.random() < 0.2,
                        )
                        for _ in range(size)
                    ],
                )
                revisions = loader.add(
                    Revision, add_revisions(memory, actor, number, len(entries), now)
                )
                number += len(entries)
                bodies, cites = [], []
                for _ in entries:
                    words = zipf_words(rng, vocab, rng.randint(8, 25))
                    bodies.append(" ".join(words).capitalize() + ".")
                    cites.append(repo if rng.random() < 0.3 else None)
                load_adds(loader, memory, entries, revisions, bodies, cites)
            done = start + size
            if postgres and done % 100_000 == 0:
                # Keep the derivation's lookups planned for the tables' real size.
                db_stats.analyze(db_stats.MEMORY_TABLES)
            if done % (batch * 10) == 0 or done == n:
                elapsed = time.monotonic() - started
                print(f"  {slug}: {done}/{n} entries ({elapsed:.0f}s, {done / elapsed:.0f}/s)")
    finally:
        if dropped:
            t0 = time.monotonic()
            with connection.cursor() as c:
                c.execute("SET maintenance_work_mem = '2GB'")
                for definition in dropped:
                    c.execute(definition)
                c.execute("RESET maintenance_work_mem")
            print(f"  {slug}: rebuilt {len(dropped)} index(es) ({time.monotonic() - t0:.0f}s)")
    memory.head = number
    memory.save(update_fields=["head"])
    db_stats.analyze(db_stats.MEMORY_TABLES)
    retire_some(memory, rng, share=0.1)
    db_stats.analyze(db_stats.MEMORY_TABLES)
    print(f"  {slug}: seeded in {time.monotonic() - started:.0f}s")
    return memory


def retire_some(memory: Memory, rng: random.Random, share: float) -> None:
    """Forget a share of entries and record some conflicts through the real actions' writer."""
    from memory import actions

    pks = list(Entry.objects.filter(memory=memory).values_list("pk", flat=True))
    chosen = rng.sample(pks, int(len(pks) * share))
    actor = Actor.system("bench")
    for start in range(0, len(chosen), 500):
        chunk = Entry.objects.filter(pk__in=chosen[start : start + 500])
        with transaction.atomic():
            locked = actions.lock_memory(memory.pk)
            actions.write_revision(
                locked,
                actor=actor,
                kind="forget",
                reason="bench",
                changes=[
                    actions.Change(entry=e, to_state="inactive", state_reason="bench")
                    for e in chunk
                ],
            )
            memory.refresh_from_db()
    pairs = rng.sample(pks, 200)
    with transaction.atomic():
        Relation.objects.bulk_create(
            [
                Relation(memory=memory, kind="conflicts_with", from_entry_id=a, to_entry_id=b)
                for a, b in zip(pairs[::2], pairs[1::2], strict=True)
                if a != b
            ]
        )
        lifecycle.refresh(pairs)


def queries(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    vocab = vocabulary(random.Random(1))
    return [" ".join(zipf_words(rng, vocab[:800], rng.randint(1, 6))) for _ in range(count)]


def bare_fts(memory_pk: int, text: str, limit: int) -> list[int]:
    """The backend's own ranked full-text match, nothing else."""
    terms = query_terms(text)
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            q = " | ".join(f"'{t}'" for t in terms)
            cursor.execute(
                "SELECT v.id FROM memory_entryversion v "
                "WHERE v.search_vector @@ %s::tsquery AND v.memory_id = %s "
                "ORDER BY ts_rank(v.search_vector, %s::tsquery) DESC "
                "LIMIT %s",
                [q, memory_pk, q, limit],
            )
        else:
            any_term = " OR ".join(f'"{t}"' for t in terms)
            q = f'scope:"m{int(memory_pk)}" AND searchable_text:({any_term})'
            cursor.execute(
                "SELECT rowid FROM memory_entryversion_fts WHERE memory_entryversion_fts MATCH %s "
                "ORDER BY rank LIMIT %s",
                [q, limit],
            )
        return [row[0] for row in cursor.fetchall()]


def fill_vectors(memory: Memory, embed: int, seed: int) -> dict[str, float]:
    """Vectors for every version of ``memory`` missing one: the first ``embed`` through the real
    model and the backfill (its throughput is measured), the rest random unit vectors inserted
    straight into the index (what the index costs does not depend on how a vector was made;
    embedding 1M texts on two CPU cores would take hours)."""
    import numpy as np

    provider = require_provider()
    kind = vectors.index_kind()
    missing = vectors.missing_versions(provider).filter(memory_id=memory.pk)
    total = missing.count()
    out: dict[str, float] = {"missing": total}
    if not total:
        return out
    pks = list(missing.order_by("pk").values_list("pk", flat=True)[:embed])
    t0 = time.perf_counter()
    vectors.index_versions(pks, provider=provider)
    out["backfill_texts_per_s"] = len(pks) / (time.perf_counter() - t0)
    rng = np.random.default_rng(seed)
    cursor = pks[-1] if pks else 0
    rebuild_hnsw = connection.vendor == "postgresql" and kind == "pgvector" and total > 50_000
    # The random vectors of a fresh Memory go in with COPY: what ``vectors._store`` writes (the
    # index row and the IndexedVector row), without its per-row literal and upsert.
    bulk = (
        rebuild_hnsw
        and not IndexedVector.objects.filter(memory_id=memory.pk)
        .exclude(provider=provider.key)
        .exists()
    )
    if rebuild_hnsw:  # a bulk load: build the graph once at the end, not row by row
        with connection.cursor() as c:
            c.execute(f"DROP INDEX IF EXISTS {vectors.TABLE}_hnsw")
    while True:
        rows = list(
            missing.filter(pk__gt=cursor).order_by("pk").values_list("pk", "memory_id")[:5000]
        )
        if not rows:
            break
        cursor = rows[-1][0]
        mat = rng.standard_normal((len(rows), vectors.DIMENSIONS)).astype(np.float32)
        mat /= np.linalg.norm(mat, axis=1, keepdims=True)
        if bulk:
            copy_vectors(provider.key, rows, mat)
        else:
            vectors._store(provider, [(pk, m, vec) for (pk, m), vec in zip(rows, mat, strict=True)])
    if rebuild_hnsw:
        t0 = time.perf_counter()
        with connection.cursor() as c:
            c.execute("SET maintenance_work_mem = '4GB'")
            c.execute("SET max_parallel_maintenance_workers = 1")
            for sql in vectors.create_index_sql("postgresql"):
                c.execute(sql)
        out["hnsw_build_s"] = time.perf_counter() - t0
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("ANALYZE memory_vector")
    out["indexed"] = IndexedVector.objects.filter(memory_id=memory.pk).count()
    out["index"] = kind  # type: ignore[assignment]
    return out


def copy_vectors(provider_key: str, rows: list[tuple[int, int]], mat: Any) -> None:
    """PostgreSQL: ``COPY`` (version, memory, vector) rows into the pgvector table in binary
    (a vector is int16 dimensions, int16 0, then big-endian float4s) and their IndexedVector
    rows, in one transaction."""
    import numpy as np

    dims = mat.shape[1]
    record = np.dtype(
        [
            ("fields", ">i2"),
            ("len1", ">i4"),
            ("version", ">i8"),
            ("len2", ">i4"),
            ("memory", ">i8"),
            ("len3", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("vec", ">f4", (dims,)),
        ]
    )
    out = np.zeros(len(rows), dtype=record)
    out["fields"], out["len1"], out["len2"], out["len3"] = 3, 8, 8, 4 + 4 * dims
    out["version"] = [pk for pk, _ in rows]
    out["memory"] = [m for _, m in rows]
    out["dim"] = dims
    out["vec"] = mat
    header = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
    trailer = (-1).to_bytes(2, "big", signed=True)
    with transaction.atomic(), connection.cursor() as c:
        with c.cursor.copy(
            f"COPY {vectors.TABLE} (version_id, memory_id, embedding) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.write(header + out.tobytes() + trailer)
        table = IndexedVector._meta.db_table
        with c.cursor.copy(f"COPY {table} (version_id, memory_id, provider) FROM STDIN") as copy:
            for pk, m in rows:
                copy.write_row((pk, m, provider_key))


def bare_ann(memory_pk: int, qvec: list[float], k: int) -> list[int]:
    """The index's own nearest-neighbour query for the Memory, nothing else."""
    import numpy as np

    q = np.asarray(qvec, dtype=np.float32)
    return [pk for pk, _ in vectors._knn(vectors.index_kind(), memory_pk, q, k)]


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def mark_review_dates(memory: Memory) -> tuple[int, int]:
    """A fifth of the Memory's heads due (a review date a year ago), a fifth scheduled (a year
    ahead), by entry pk: what ``confirm`` / ``require-reverification`` revisions would leave on
    the heads. Idempotent. Returns (due, scheduled)."""
    now = timezone.now()
    heads = Head.objects.filter(memory=memory)
    pks = list(heads.order_by("entry_id").values_list("entry_id", flat=True))
    due = pks[0::5]
    later = pks[1::5]
    heads.filter(entry_id__in=due).update(review_at=now - timedelta(days=365))
    heads.filter(entry_id__in=later).update(review_at=now + timedelta(days=365))
    return len(due), len(later)


def strict_fresh_side_by_side(
    memory: Memory,
    actor: Actor,
    qs: list[str],
    warm: list[str],
    limit: int,
    vendor: str,
    entries: int,
) -> None:
    """Search with ``strict_fresh`` off and on over the same queries, alternating query by
    query so both sides share the machine's load; p50/p95 of each and the p95 ratio."""
    due, later = mark_review_dates(memory)
    fresh = RecallFilters(fresh_at=timezone.now())
    for q in warm:
        search(memory, actor=actor, query=q, limit=limit)
        search(memory, actor=actor, query=q, limit=limit, filters=fresh)
    off: list[float] = []
    on: list[float] = []
    for i, q in enumerate(qs):
        sides = [(off, None), (on, fresh)]
        for out, filters in sides if i % 2 == 0 else reversed(sides):
            t0 = time.perf_counter()
            search(memory, actor=actor, query=q, limit=limit, filters=filters)
            out.append((time.perf_counter() - t0) * 1000.0)
    print(
        f"{vendor} {entries:>7} entries ({due} due, {later} scheduled) | strict_fresh off p50 "
        f"{pct(off, 0.5):7.2f} ms  p95 {pct(off, 0.95):7.2f} ms | on p50 {pct(on, 0.5):7.2f} ms  "
        f"p95 {pct(on, 0.95):7.2f} ms | p95 on/off {pct(on, 0.95) / max(pct(off, 0.95), 1e-6):5.2f}"
    )


def bound_side_by_side(memory: Memory, qs: list[str], cap: int, vendor: str, entries: int) -> None:
    """The search's lexical channel (exact: every admitted row ranked, plain BM25 over the same
    tokens) beside the bounded reading the write path's near-duplicate check uses (only the
    ``LEXICAL_TIER_ROWS`` newest admitted versions ranked), alternating query by query: the time
    of each and how many queries' exact top 10 the bounded reading misses."""
    times: dict[bool, list[float]] = {True: [], False: []}
    missed = 0
    for i, q in enumerate(qs):
        found: dict[bool, list[int]] = {}
        for exact in (True, False) if i % 2 == 0 else (False, True):
            t0 = time.perf_counter()
            rows = lexical_channel(
                memory.pk, query_terms(q), view="current", limit=cap, exact=exact
            )
            times[exact].append((time.perf_counter() - t0) * 1000.0)
            found[exact] = [c.entry_pk for c in rows]
        missed += bool(set(found[True][:10]) - set(found[False]))
    e, b = times[True], times[False]
    print(
        f"{vendor} {entries:>7} entries | lexical channel exact p50 {pct(e, 0.5):7.2f} ms  p95 "
        f"{pct(e, 0.95):7.2f} ms | bounded p50 {pct(b, 0.5):7.2f} ms  p95 {pct(b, 0.95):7.2f} ms"
        f" | queries whose exact top 10 the bounded reading misses: {missed}/{len(qs)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--verify", action="store_true", help="check every projection row")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="the vector channel on (the default model): index every version, time search "
        "against the FTS query plus the ANN query",
    )
    parser.add_argument(
        "--embed", type=int, default=2000, help="versions embedded by the model (the rest random)"
    )
    parser.add_argument(
        "--strict-fresh",
        action="store_true",
        help="also time search with strict_fresh, side by side with it off, after giving a fifth "
        "of the heads a past review date and a fifth a future one",
    )
    parser.add_argument(
        "--exactness",
        action="store_true",
        help="also time the exact lexical channel beside the newest-rows bounded reading",
    )
    args = parser.parse_args()
    from django.conf import settings

    if not args.semantic:
        settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    elif settings.STEWARD_EMBEDDINGS.get("PROVIDER") is None:
        sys.exit(
            "--semantic needs the embedding model (make install) and no "
            "STEWARD_EMBEDDINGS_PROVIDER=none"
        )

    call_command("migrate", verbosity=0)
    vendor = connection.vendor
    print(f"backend: {vendor} ({connection.settings_dict['NAME']})")
    # Searches run as a typical agent key: internal clearance, so the clearance filter is on.
    actor = Actor(type="agent", id="key:bench", label="bench", role="agent", clearance="internal")
    qs = queries(seed=7, count=args.queries)
    warm = queries(seed=8, count=20)
    cap = channel_cap(args.limit)
    for size in [int(s) for s in args.sizes.split(",")]:
        memory = build(f"bench-{size}", size, seed=size)
        sample = list(
            Entry.objects.filter(memory=memory).order_by("?").values_list("pk", flat=True)[:500]
        )
        diffs, heads, _ = lifecycle.rebuild_batch(sample, write=False)
        assert not diffs and not heads, "bulk rows differ from what the actions would write"
        if args.verify:
            report = maintenance.rebuild_projection(memory, actor=Actor.system(), check=True)
            assert report.clean, report.differing[:5]
        entries = Entry.objects.filter(memory=memory).count()
        qvecs: dict[str, list[float]] = {}
        if args.semantic:
            filled = fill_vectors(memory, args.embed, seed=size)
            print(f"vectors: {filled}")
            provider = require_provider()
            qvecs = {q: provider.embed([q])[0] for q in qs + warm}
            # Every timed search embeds its query afresh, as a new question from an agent does.
            provider._recent.clear(size=0)  # type: ignore[attr-defined]

        def run_search(q: str, memory: Memory = memory) -> None:
            search(memory, actor=actor, query=q, limit=args.limit)

        def run_bare(q: str, memory: Memory = memory) -> None:
            bare_fts(memory.pk, q, cap)

        def run_channel(q: str, memory: Memory = memory) -> None:
            lexical_channel(memory.pk, query_terms(q), view="current", limit=cap)

        def run_ann(q: str, memory: Memory = memory, qvecs: dict = qvecs) -> None:
            bare_ann(memory.pk, qvecs[q], cap)

        def run_embed(q: str) -> None:
            require_provider().embed([q])

        for fn in (run_search, run_bare, run_channel):
            timed(fn, warm)
        s, b, c = timed(run_search, qs), timed(run_bare, qs), timed(run_channel, qs)
        if args.semantic:
            timed(run_ann, warm)
            a, e = timed(run_ann, qs), timed(run_embed, qs)
            bare = [x + y for x, y in zip(b, a, strict=True)]
            print(
                f"{vendor} {entries:>7} entries | semantic search p50 {pct(s, 0.5):7.2f} ms  p95 "
                f"{pct(s, 0.95):7.2f} ms | FTS+ANN p50 {pct(bare, 0.5):7.2f} ms  p95 "
                f"{pct(bare, 0.95):7.2f} ms (ANN p95 {pct(a, 0.95):.2f}, FTS p95 "
                f"{pct(b, 0.95):.2f}) | query embedding p50 {pct(e, 0.5):.2f} ms | ratio p50 "
                f"{pct(s, 0.5) / pct(bare, 0.5):5.2f}x  p95 {pct(s, 0.95) / pct(bare, 0.95):5.2f}x"
                f" | with the embedding p95 "
                f"{pct(s, 0.95) / (pct(bare, 0.95) + pct(e, 0.95)):5.2f}x"
            )
            continue
        if args.exactness:
            bound_side_by_side(memory, qs, cap, vendor, entries)
        if args.strict_fresh:
            strict_fresh_side_by_side(memory, actor, qs, warm, args.limit, vendor, entries)
        hits = statistics.mean(
            len(search(memory, actor=actor, query=q, limit=args.limit).hits) for q in qs[:50]
        )
        print(
            f"{vendor} {entries:>7} entries | search p50 {pct(s, 0.5):7.2f} ms  p95 "
            f"{pct(s, 0.95):7.2f} ms | bare FTS p50 {pct(b, 0.5):7.2f} ms  p95 {pct(b, 0.95):7.2f} ms"
            f" | ratio p50 {pct(s, 0.5) / max(pct(b, 0.5), 1e-6):5.2f}x  p95 "
            f"{pct(s, 0.95) / max(pct(b, 0.95), 1e-6):5.2f}x | lexical channel p50 "
            f"{pct(c, 0.5):7.2f} ms | mean hits {hits:.1f}"
        )


if __name__ == "__main__":
    main()
