"""A small Memory's vector channel beside a large one on pgvector (not a test).

    DATABASE_URL="$(PGVECTOR_DIR=/tmp/steward-pgvector .ci/pgvector-server | sed 's/steward$/steward_vecbench/')" \\
        .venv/bin/python bench/vector_isolation_bench.py --small 10000 --large 100000

Fills the vector index table alone (``memory_vector``, as ``memory.vectors`` creates it; no
entries are needed for the index query) with two Memories about the same subjects — vectors
drawn around shared cluster centres — then builds the HNSW index, as a database that grew
would have it. For ``--queries`` questions near those centres it asks the small Memory for its
``--k`` nearest (80: a search of limit 10 asks the index for max(2·40, 64)):

- *graph only* — the HNSW walk filtered by Memory afterwards, what the index gave before;
- *served* — :func:`memory.vectors._knn`, a short walk answered exactly over the Memory's rows;
- *alone* — the graph walk in a table holding the small Memory only;

and prints the rows each returned (mean, min), their recall of the exact k nearest (numpy over
the Memory's vectors) and the latency p50 / p95. The database is dropped at the end unless
``--keep``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from bench_env import setup_django

DIM = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=80)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("DATABASE_URL must name a PostgreSQL database with pgvector")
    import psycopg

    base, name = url.rsplit("/", 1)
    admin = psycopg.connect(
        f"{base}/postgres".replace("postgres://", "postgresql://"), autocommit=True
    )
    admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    admin.execute(f'CREATE DATABASE "{name}"')
    setup_django(database_url=url, broker=False)

    from django.db import connection

    from memory import vectors

    rng = np.random.default_rng(34)
    centres = unit(rng.normal(size=(300, DIM)))

    def around(n: int) -> np.ndarray:
        picks = centres[rng.integers(0, len(centres), size=n)]
        return unit(picks + rng.normal(size=(n, DIM)) * 0.06)

    small, large = around(args.small), around(args.large)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cursor.execute(
            f"CREATE TABLE {vectors.TABLE} (version_id bigint PRIMARY KEY, "
            f"memory_id bigint NOT NULL, embedding vector({DIM}) NOT NULL)"
        )
        cursor.execute("CREATE TABLE alone (LIKE memory_vector INCLUDING ALL)")
        raw = connection.connection
        with raw.cursor().copy(
            f"COPY {vectors.TABLE} (version_id, memory_id, embedding) FROM STDIN"
        ) as copy:
            for i, v in enumerate(small):
                copy.write_row((i + 1, 1, vectors._pg_literal(v)))
            for i, v in enumerate(large):
                copy.write_row((args.small + i + 1, 2, vectors._pg_literal(v)))
        cursor.execute(f"INSERT INTO alone SELECT * FROM {vectors.TABLE} WHERE memory_id = 1")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for table in (vectors.TABLE, "alone"):
            cursor.execute(f"CREATE INDEX ON {table} (memory_id)")
            cursor.execute(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)")
            cursor.execute(f"ANALYZE {table}")
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        version = cursor.fetchone()[0]
    print(
        f"pgvector {version}: {args.small} + {args.large} vectors loaded and indexed in "
        f"{time.perf_counter() - started:.0f} s"
    )
    connection.close()
    assert vectors.index_kind() == vectors.PGVECTOR

    def graph(table: str, lit: str) -> list[int]:
        vectors._pg_ef_search(connection, args.k)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT version_id FROM {table} WHERE memory_id = 1 "
                "ORDER BY embedding <=> %s::vector LIMIT %s",
                [lit, args.k],
            )
            return [int(r[0]) for r in cursor.fetchall()]

    sides = {
        "graph only": lambda q, lit: graph(vectors.TABLE, lit),
        "served": lambda q, lit: [pk for pk, _ in vectors._knn(vectors.PGVECTOR, 1, q, args.k)],
        "alone": lambda q, lit: graph("alone", lit),
    }
    rows: dict[str, list[int]] = {s: [] for s in sides}
    recall: dict[str, list[float]] = {s: [] for s in sides}
    took: dict[str, list[float]] = {s: [] for s in sides}
    for _ in range(args.queries):
        q = unit(centres[rng.integers(0, len(centres))] + rng.normal(size=DIM) * 0.06)
        lit = vectors._pg_literal(q)
        exact = set((np.argsort(-(small @ q))[: args.k] + 1).tolist())
        for side, run in sides.items():  # alternating, so load hits every side alike
            t = time.perf_counter()
            found = run(q, lit)
            took[side].append((time.perf_counter() - t) * 1000)
            rows[side].append(len(found))
            recall[side].append(len(exact & set(found)) / args.k)
    print(f"k = {args.k}, {args.queries} queries, small Memory {args.small} beside {args.large}:")
    for side in sides:
        ms = sorted(took[side])
        print(
            f"  {side:10s} rows mean {statistics.mean(rows[side]):5.1f} min {min(rows[side]):3d}"
            f"  recall@k {statistics.mean(recall[side]):.3f}"
            f"  p50 {ms[len(ms) // 2]:6.1f} ms  p95 {ms[int(0.95 * (len(ms) - 1))]:6.1f} ms"
        )
    connection.close()
    if not args.keep:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
