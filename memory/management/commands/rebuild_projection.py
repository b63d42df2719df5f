"""``manage.py rebuild_projection [--memory SLUG] [--check] [--batch N] [--reindex] [--vectors]``.

Rebuilds the derived lifecycle projection (and, with an embedding provider, the derived vectors)
from authoritative records — heads replayed from revision changes, evidence snapshots, relations
— in bounded batches with progress output. ``--check`` writes nothing: it lists every row that
differs from the rebuilt value (and every head that differs from the replay of its revisions)
and exits 1 if there is any. ``--reindex`` also re-analyzes every entry version with the
installed analyzer (``searchable_text`` and ``term_count``, ``memory.search.reindex``: bounded
batches, a progress bar on stderr, only changed rows written, idempotent) and then rebuilds the
lexical index (on SQLite the FTS5 table; on PostgreSQL a REINDEX). Without ``--memory``,
``--check`` also counts the versions whose stored analysis is stale and runs the FTS5 integrity
check on SQLite. ``--no-progress`` leaves out the progress bar. ``--vectors`` only backfills
the vector index (``memory.vectors``): every version without a vector of the configured model,
in bounded batches, with a progress bar. Every run that writes ends with ``ANALYZE`` of the
tables it filled on PostgreSQL (``memory.db_stats.analyze``): the planner needs statistics of
the new rows, and autovacuum may be off or late.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from tqdm import tqdm

from memory.actors import Actor
from memory.db_stats import VECTOR_TABLES, analyze
from memory.maintenance import RebuildReport, rebuild_projection
from memory.models import Memory
from memory.search.reindex import BATCH_SIZE, count_versions, reanalyze_versions


class Command(BaseCommand):
    help = "Rebuild the lifecycle projection from authoritative records (or --check it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--memory", metavar="SLUG", help="Only this Memory.")
        parser.add_argument(
            "--check", action="store_true", help="Compare only; exit 1 on any difference."
        )
        parser.add_argument("--batch", type=int, default=500, help="Entries per batch.")
        parser.add_argument(
            "--reindex",
            action="store_true",
            help="Also re-analyze every entry version and rebuild the lexical index.",
        )
        parser.add_argument(
            "--vectors",
            action="store_true",
            help="Only the vector index: create it where the database can hold one, then "
            "make every missing vector in bounded batches (progress bar).",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["vectors"]:
            self.backfill_vectors(max(1, options["batch"]), no_progress=options["no_progress"])
            return
        memories = Memory.objects.order_by("pk")
        if options["memory"]:
            memories = memories.filter(slug=options["memory"])
            if not memories.exists():
                raise CommandError(f"No memory '{options['memory']}'.")
        check: bool = options["check"]
        batch: int = max(1, options["batch"])
        problems = 0
        bar = not options["no_progress"]
        if check and not options["memory"]:
            problems += self.reanalyze(check=True, progress=bar)
            problems += self.check_lexical_index()
        if options["reindex"] and not check:
            self.reanalyze(check=False, progress=bar)
            self.reindex()
        actor = Actor.system("rebuild_projection")
        for memory in memories.iterator():
            started = time.monotonic()
            total = memory.entries.count()
            self.stdout.write(f"{memory.slug}: {total} entries")

            def progress(report: RebuildReport, total: int = total) -> None:
                self.stdout.write(
                    f"  {report.memory_slug}: {report.entries}/{total} entries, "
                    f"{len(report.differing)} differ"
                )

            report = rebuild_projection(
                memory, actor=actor, check=check, batch_size=batch, progress=progress
            )
            problems += self.summarize(report, check=check, seconds=time.monotonic() - started)
        if check and problems:
            self.stderr.write(f"{problems} difference(s) found.")
            sys.exit(1)
        self.stdout.write("projection clean." if check else "projection rebuilt.")

    def summarize(self, report: RebuildReport, *, check: bool, seconds: float) -> int:
        for row in report.differing:
            fields = ", ".join(
                f"{name}: live={live!r} rebuilt={rebuilt!r}"
                for name, (live, rebuilt) in sorted(row.fields.items())
            )
            self.stdout.write(f"  DIFF {report.memory_slug} {row.entry_uid}: {fields}")
        for uid in report.head_mismatches:
            self.stdout.write(
                f"  HEAD {report.memory_slug} {uid}: head differs from the replay of its revisions"
            )
        if report.vectors_missing:
            self.stdout.write(
                f"  VECTORS {report.memory_slug}: {report.vectors_missing} head versions "
                "have no vector"
            )
        verb = "checked" if check else "rebuilt"
        self.stdout.write(
            f"{report.memory_slug}: {report.entries} entries {verb} in {seconds:.1f}s, "
            f"{len(report.differing)} differ, {report.written} written, "
            f"{report.vectors_created} vectors created"
        )
        return len(report.differing) + len(report.head_mismatches) + report.vectors_missing

    def backfill_vectors(self, batch: int, *, no_progress: bool = False) -> None:
        from memory import vectors
        from memory.embeddings import get_provider, indexing_keys

        provider = get_provider()
        if provider is None:
            self.stdout.write(
                "vectors: no embedding model configured (lexical only); nothing to do."
            )
            return
        kind = vectors.ensure_index()
        total = vectors.missing_versions().count()
        models = " + ".join(indexing_keys())
        self.stdout.write(f"vectors: {models}, index {kind}, {total} missing")
        with tqdm(
            total=total, unit="version", file=self.stderr, disable=total == 0 or no_progress
        ) as bar:
            counts = vectors.backfill(batch=min(batch, vectors.BATCH), progress=bar.update)
        analyze(VECTOR_TABLES)
        self.stdout.write(
            f"vectors: {counts['stored']} made, {counts['rerouted']} made again by the model "
            f"that reads them, index {counts['index']}."
        )

    def reanalyze(self, *, check: bool, progress: bool) -> int:
        """Re-analyze every version (``check``: count only); the number of stale versions."""
        bar = tqdm(
            total=count_versions(),
            unit="versions",
            desc="analyzer",
            disable=not progress,
            file=self.stderr._out,
        )
        try:
            report = reanalyze_versions(batch_size=BATCH_SIZE, check=check, progress=bar.update)
        finally:
            bar.close()
        if check:
            self.stdout.write(
                f"analyzer: {report.changed} of {report.rows} versions stale"
                + (" (run --reindex)" if report.changed else "")
            )
        else:
            self.stdout.write(f"analyzer: {report.changed} of {report.rows} versions re-analyzed")
        return report.changed

    def check_lexical_index(self) -> int:
        if connection.vendor != "sqlite":
            return 0
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "INSERT INTO memory_entryversion_fts(memory_entryversion_fts, rank) "
                    "VALUES ('integrity-check', 1)"
                )
        except Exception as exc:  # the FTS5 module reports corruption as an error
            self.stdout.write(f"  LEXICAL index differs from entry versions: {exc}")
            return 1
        self.stdout.write("lexical index: ok")
        return 0

    def reindex(self) -> None:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(
                    "INSERT INTO memory_entryversion_fts(memory_entryversion_fts) "
                    "VALUES ('rebuild')"
                )
            elif connection.vendor == "postgresql":
                cursor.execute("REINDEX INDEX memory_entryversion_search_vector")
        self.stdout.write("lexical index rebuilt.")
