"""Embedding throughput and worker memory (not a test): what the semantic channel costs.

    .venv/bin/python bench/embedding_bench.py                     # SQLite: /tmp/steward_embed.sqlite3
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_embed .venv/bin/python bench/embedding_bench.py

Prints, for the configured model:

- **write**: texts/s when each text is embedded alone, as an add does (the admission check embeds
  the new body once; indexing it after the commit reads the cached vector);
- **add**: adds/s through ``memory.actions.add_entry`` with the model on and off, one at a time;
- **backfill**: texts/s of ``manage.py rebuild_projection --vectors`` (batches of 256);
- **worker RSS**: the resident memory of one real Celery worker (``--pool solo``, Redis broker)
  after it has indexed a batch — the model, torch and Django in one process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import uuid
from pathlib import Path

from bench_env import CELERY_WORKER, ROOT, setup_django

setup_django(default_database="sqlite:////tmp/steward_embed.sqlite3")

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from memory import actions, vectors  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.embeddings import require_provider  # noqa: E402
from memory.models import EntryVersion, Memory  # noqa: E402

TOPICS = [
    "deploys",
    "the staging database",
    "the on-call rotation",
    "the cat Miso",
    "the release train",
    "the VPN",
    "the build cache",
    "quarterly reviews",
]


def texts(n: int, salt: str) -> list[str]:
    return [
        f"Note {i} ({salt}): {TOPICS[i % len(TOPICS)]} changed on day {i % 28 + 1}, "
        f"see ticket OPS-{1000 + i} for the details agreed with team {i % 7}."
        for i in range(n)
    ]


def rss_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def worker_rss(version_pks: list[int], broker: str) -> float:
    """MiB resident in a real worker after it indexed ``version_pks``."""
    env = {**os.environ, "CELERY_BROKER_URL": broker, "DATABASE_URL": os.environ["DATABASE_URL"]}
    worker = subprocess.Popen(
        [
            *CELERY_WORKER,
            "-Q",
            "celery",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        from celery import Celery

        app = Celery(broker=broker, backend=None)
        app.send_task("memory.index_vectors", args=[version_pks])
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            missing = vectors.missing_versions(require_provider()).filter(pk__in=version_pks)
            if not missing.exists():
                break
            time.sleep(0.5)
        else:
            raise SystemExit("the worker did not index the batch within 3 minutes")
        return rss_of(worker.pid) / 2**20
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--backfill", type=int, default=2000)
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--no-worker", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    provider = require_provider()
    print(f"backend: {connection.vendor}, model {provider.key}, index {vectors.ensure_index()}")
    salt = uuid.uuid4().hex[:8]
    provider.embed(["warm up"])

    sample = texts(args.writes, salt + "w")
    t0 = time.perf_counter()
    for text in sample:
        provider.embed([text])
    print(f"write: {len(sample) / (time.perf_counter() - t0):.1f} texts/s (one text per call)")

    actor = Actor.system("bench")
    memory = Memory.objects.create(slug=f"embed-{salt}", name="Embedding benchmark")
    path = settings.STEWARD_EMBEDDINGS["PROVIDER"]
    for label, on in (("model on", True), ("model off", False)):
        settings.STEWARD_EMBEDDINGS = {"PROVIDER": path if on else None}
        batch = texts(args.writes // 2, f"{salt}a{int(on)}")
        t0 = time.perf_counter()
        for text in batch:
            actions.add_entry(memory, actor=actor, body=text, kind="fact")
        print(f"add ({label}): {len(batch) / (time.perf_counter() - t0):.1f} adds/s")
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    for text in texts(args.backfill, salt + "b"):
        actions.add_entry(memory, actor=actor, body=text, kind="fact", dedupe=False)
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": path}
    missing = vectors.missing_versions(provider).filter(memory_id=memory.pk).count()
    t0 = time.perf_counter()
    counts = vectors.backfill()
    seconds = time.perf_counter() - t0
    print(
        f"backfill: {missing} versions in {seconds:.1f}s = {missing / seconds:.1f} texts/s {counts}"
    )

    if args.no_worker:
        return
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    fresh = [
        actions.add_entry(memory, actor=actor, body=t, kind="fact", dedupe=False).version.pk
        for t in texts(64, salt + "k")
    ]
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": path}
    pks = [pk for pk in fresh if EntryVersion.objects.filter(pk=pk).exists()]
    print(f"worker RSS: {worker_rss(pks, args.broker):.0f} MiB after indexing {len(pks)} versions")


if __name__ == "__main__":
    main()
