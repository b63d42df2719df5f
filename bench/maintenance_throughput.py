"""Throughput of the maintenance jobs against a bare read of the same rows (not a test).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_maint_bench \\
        .venv/bin/python bench/maintenance_throughput.py              # 100,000 entries
    .venv/bin/python bench/maintenance_throughput.py --entries 20000  # SQLite: /tmp/steward_maint_bench.sqlite3
    ... --reuse      # keep the database and its seeded Memory (seed only when missing)
    ... --json out.json

Without ``--reuse`` the database is emptied first (PostgreSQL: its ``public`` schema is dropped
and made again; SQLite: the file is deleted): give it one of its own.

Seeds one Memory of N entries (default 100,000) with bulk inserts that write exactly the rows the
actions would (an ``add`` revision per entry with its change, the version with its analysis,
evidence snapshots for 30 %, the head, the projection from ``memory.lifecycle.derive``), spread
over two years of recorded time, in all tiers and kinds, then runs a share of real revisions
through the revision writer: forgets (some with ``auto_decay:v1``), evidence-backed revises of
current-state facts, supersessions, consolidations, quarantines, pins, and ``conflicts_with``
observations; some rows get recall counts. The seed ends with ``ANALYZE``
(``memory.db_stats.analyze``). The embedding provider is off (lexical only): embedding 100,000
texts on two cores would take over an hour, and no job measured here needs vectors.

Then, per job, in one process and one run:

- ``rebuild --check`` and ``rebuild`` (write; 10 % of the projection rows tampered with first,
  so the write run rewrites them; a check afterwards must be clean);
- the decay scan, dry run, with the policy's ``importance_floor`` 0 (the default) and 2;
- the proposal passes (near_duplicates, contradictions, promotion, capacity, injection_scan),
  dry runs, one bounded run each: ``jobs.<job>.max_scan`` (``--pass-scan``; the passes that look
  up a neighbourhood of every entry they examine get ``--neighbourhood-scan``, and their bare
  read walks the same batches as they do, ``base.NEIGHBOURHOOD_BATCH``).

Each job is timed against a bare read of the same rows in the same batches (keyset
``values_list`` of the tables the job reads, no derivation, no scoring), alternating with it,
best of ``--repeat`` rounds each (default 3).
Entries/s is the entries the job covers (the Memory's entries for the rebuild and the decay
scan, the entries examined for a pass) per second; the ratio is job entries/s over bare-read
entries/s (1.0 = as fast as reading its rows). Peak memory is the tracemalloc peak of Python
allocations during the job, in a second, traced run (tracing would slow the timed one).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench_env import setup_django

os.environ["STEWARD_EMBEDDINGS_PROVIDER"] = "none"
setup_django(default_database="sqlite:////tmp/steward_maint_bench.sqlite3", broker=False)

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Q  # noqa: E402

from memory import db_stats, lifecycle, maintenance  # noqa: E402
from memory.models import (  # noqa: E402
    Entry,
    EntryVersion,
    Evidence,
    Head,
    LifecycleProjection,
    Memory,
    Relation,
    RevisionChange,
)

settings.STEWARD_EMBEDDINGS = {**settings.STEWARD_EMBEDDINGS, "PROVIDER": None}

from maintenance_seed import SYSTEM, fresh_database, seed  # noqa: E402

# --- Bare reads ----------------------------------------------------------------------------------


def keyset(qs: Any, field: str, batch: int, limit: int | None = None) -> Iterator[list[int]]:
    last, taken = 0, 0
    while limit is None or taken < limit:
        size = batch if limit is None else min(batch, limit - taken)
        pks = list(
            qs.filter(**{f"{field}__gt": last}).order_by(field).values_list(field, flat=True)[:size]
        )
        if not pks:
            return
        taken += len(pks)
        last = pks[-1]
        yield pks


def bare_rebuild(memory: Memory, batch: int) -> int:
    """Every row the rebuild reads, per keyset batch of heads, each table read by range on its
    entry key (the cheapest plain shape): heads, entries, versions with their revision's time,
    the head versions' evidence, the live relations at either end (with the endpoints' ids),
    the revision changes with their revision's number and kind, and the projection rows."""
    n = 0
    m = memory.pk
    for_heads = Head.objects.filter(memory_id=m)
    last = 0
    for pks in keyset(for_heads, "entry_id", batch):
        lo, hi = last, pks[-1]
        last = hi
        rng = {"memory_id": m, "entry_id__gt": lo, "entry_id__lte": hi}
        heads = list(
            Head.objects.filter(**rng).values_list("entry_id", *lifecycle.load.HEAD_ROW_COLUMNS)
        )
        list(
            Entry.objects.filter(memory_id=m, pk__gt=lo, pk__lte=hi).values_list(
                "pk", *lifecycle.load.ENTRY_COLUMNS
            )
        )
        list(
            EntryVersion.objects.filter(**rng)
            .order_by()
            .values_list("pk", "effective_at", "revision__recorded_at")
        )
        list(
            Evidence.objects.filter(version_id__in=[h[1] for h in heads])
            .order_by()
            .values_list("version_id", "authority", "verification", "observed_at")
        )
        list(
            Relation.objects.filter(
                Q(memory_id=m, to_entry_id__gt=lo, to_entry_id__lte=hi)
                | Q(memory_id=m, from_entry_id__gt=lo, from_entry_id__lte=hi),
                retired_by__isnull=True,
            ).values_list(*lifecycle.load.RELATION_COLUMNS)
        )
        list(
            RevisionChange.objects.filter(revision__memory_id=m, entry_id__gt=lo, entry_id__lte=hi)
            .order_by()
            .values_list(*lifecycle.load.CHANGE_COLUMNS)
        )
        list(
            LifecycleProjection.objects.filter(**rng).values_list(
                "entry_id", *lifecycle.COMPARED_FIELDS
            )
        )
        n += len(pks)
    return n


DECAY_COLUMNS = (
    *maintenance.decay.SCAN_COLUMNS,
    "state",
    "validity",
    "pinned",
)


def bare_decay(memory: Memory, batch: int) -> int:
    """The Memory's projection rows (the table the scan walks), the columns it scores."""
    n = 0
    rows = LifecycleProjection.objects.filter(memory_id=memory.pk)
    last = 0
    while True:
        chunk = list(
            rows.filter(entry_id__gt=last).order_by("entry_id").values_list(*DECAY_COLUMNS)[:batch]
        )
        if not chunk:
            return n
        last = chunk[-1][0]
        n += len(chunk)


#: The passes that look up a bounded neighbourhood of every entry they examine.
NEIGHBOURHOOD_PASSES = ("near_duplicates", "contradictions", "promotion")


def pass_rows(memory: Memory, job: str) -> Any:
    """The projection rows each pass walks (as in ``proposals/passes``)."""
    from memory.models import HeadState, Validity
    from proposals.passes import base
    from proposals.passes.promotion import _notes

    live = [Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
    if job == "near_duplicates":
        return base.active_projection(memory).filter(validity__in=live).exclude(kind="working_note")
    if job == "contradictions":
        return base.active_projection(memory).filter(current_state=True, validity__in=live)
    if job == "promotion":
        return _notes(memory)
    if job == "capacity":
        return (
            base.active_projection(memory)
            .filter(importance__lte=1, validity=Validity.CURRENT, pinned=False, protected=False)
            .exclude(tier="session")
            .filter(~Q(entry__head__pinned=True))
        )
    return LifecycleProjection.objects.filter(
        memory_id=memory.pk, state__in=[HeadState.ACTIVE, HeadState.INACTIVE]
    )


def bare_pass(memory: Memory, job: str, limit: int) -> int:
    """The rows a pass examines, in its batches: the projection keys and each head's text."""
    from proposals.passes import base

    batch = base.NEIGHBOURHOOD_BATCH if job in NEIGHBOURHOOD_PASSES else base.BATCH
    n = 0
    for pks in keyset(pass_rows(memory, job), "entry_id", batch, limit):
        read_heads(pks)
        n += len(pks)
    return n


def read_heads(pks: list[int]) -> None:
    """The columns a pass reads of each head: ids, kind, state, version number and body."""
    list(
        Head.objects.filter(entry_id__in=pks).values_list(
            "entry_id", "entry__uid", "entry__kind", "state", "version__number", "version__body"
        )
    )


_NEIGHBOURS: dict[tuple[str, int], list[list[int]]] = {}


def neighbour_batches(memory: Memory, job: str, limit: int) -> list[list[int]]:
    """Per batch of a neighbourhood pass, the neighbours whose rows it reads first in that batch
    (the pass keeps the rows it read for later batches, so each is read once a run): found once,
    untimed, with the pass's own neighbourhood finder."""
    from proposals.passes import base
    from proposals.passes.candidates import Neighbourhoods, ScopedNeighbourhoods
    from proposals.passes.promotion import note_finder

    key = (job, limit)
    if key not in _NEIGHBOURS:
        if job == "promotion":
            finder = note_finder(memory)
        else:
            finder = Neighbourhoods(memory, limit=base.NEIGHBOURS)
        # A scoped finder has read its whole scope up front: those rows count in the first
        # batch (less the batch's own).
        read_first = set(finder.scope) if isinstance(finder, ScopedNeighbourhoods) else set()
        seen: set[int] = set()
        out = []
        rows = pass_rows(memory, job)
        for pks in keyset(rows, "entry_id", base.NEIGHBOURHOOD_BATCH, limit):
            seen.update(pks)
            near = base.neighbourhoods(finder, finder.neighbours(pks))
            fresh = ({n for ns in near.values() for n in ns} | read_first) - seen
            read_first = set()
            seen.update(fresh)
            out.append(sorted(fresh))
        _NEIGHBOURS[key] = out
    return _NEIGHBOURS[key]


def bare_pass_with_neighbours(memory: Memory, job: str, limit: int) -> int:
    """:func:`bare_pass` plus, per batch, the same columns of the neighbours the pass reads in
    that batch: every row the pass reads, none of its lookups or comparisons."""
    from proposals.passes import base

    extra = iter(neighbour_batches(memory, job, limit))
    n = 0
    for pks in keyset(pass_rows(memory, job), "entry_id", base.NEIGHBOURHOOD_BATCH, limit):
        read_heads(pks + next(extra, []))
        n += len(pks)
    return n


# --- Jobs ----------------------------------------------------------------------------------------


def set_policy(memory: Memory, **policy: Any) -> None:
    Memory.objects.filter(pk=memory.pk).update(policy=policy)


def tamper(memory: Memory, share: int = 10) -> int:
    with connection.cursor() as c:
        c.execute(
            "UPDATE memory_lifecycleprojection SET validity_reason = 'tampered', importance = 3 "
            f"WHERE memory_id = %s AND entry_id %% {share} = 0",
            [memory.pk],
        )
        return c.rowcount


def jobs(memory: Memory, args: argparse.Namespace) -> list[dict[str, Any]]:
    """(name, bound, bare read, job) for every measured job; each returns entries covered."""
    from proposals import passes

    entries = Entry.objects.filter(memory=memory, head__isnull=False).count()
    batch = args.batch
    out: list[dict[str, Any]] = []

    def rebuild(check: bool) -> Callable[[], int]:
        def run() -> int:
            report = maintenance.rebuild_projection(
                memory, actor=SYSTEM, check=check, batch_size=batch
            )
            if check:
                assert not report.differing and not report.head_mismatches, report.differing[:3]
            else:
                assert report.written == len(report.differing) > 0, report.written
            return report.entries

        return run

    out.append(
        {
            "job": "rebuild --check",
            "bound": f"whole Memory, batches of {batch}",
            "bare": lambda: bare_rebuild(memory, batch),
            "run": rebuild(True),
        }
    )
    out.append(
        {
            "job": "rebuild (write, 10% rows differ)",
            "bound": f"whole Memory, batches of {batch}",
            "bare": lambda: bare_rebuild(memory, batch),
            "run": rebuild(False),
            "setup": lambda: tamper(memory),
        }
    )
    for floor in (0, 2):

        def decay(floor: int = floor) -> int:
            set_policy(memory, importance_floor=floor)
            try:
                maintenance.run_decay_scan(memory, actor=SYSTEM, dry_run=True)
            finally:
                set_policy(memory)
            return entries

        out.append(
            {
                "job": f"decay scan, dry run, importance_floor={floor}",
                "bound": f"whole Memory, batches of {maintenance.SCAN_BATCH}; keeps 100",
                "bare": lambda: bare_decay(memory, maintenance.SCAN_BATCH),
                "run": decay,
            }
        )
    for job, runner in ((spec.name, spec.runner) for spec in passes.JOBS):
        per_entry = job in NEIGHBOURHOOD_PASSES
        bound = args.neighbourhood_scan if per_entry else args.pass_scan

        def run_pass(job: str = job, runner: Any = runner, bound: int = bound) -> int:
            set_policy(memory, jobs={job: {"max_scan": bound}}, capacity_low_entries=500)
            try:
                run = runner(memory, actor=SYSTEM, dry_run=True)
            finally:
                set_policy(memory)
            return int(run.counts.get("scanned", 0))

        out.append(
            {
                "job": f"{job}, dry run",
                "bound": f"max_scan {bound}",
                "bare": lambda job=job, bound=bound: bare_pass(memory, job, bound),
                "run": run_pass,
            }
        )
        if per_entry:
            out.append(
                {
                    "job": f"{job}, dry run (bare + neighbours)",
                    "bound": f"max_scan {bound}",
                    "bare": lambda job=job, bound=bound: bare_pass_with_neighbours(
                        memory, job, bound
                    ),
                    "run": run_pass,
                }
            )
    return out


def timed(fn: Callable[[], int]) -> tuple[int, float]:
    gc.collect()
    t0 = time.perf_counter()
    n = fn()
    return n, time.perf_counter() - t0


def traced(fn: Callable[[], int]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500, help="rebuild batch (the command's)")
    parser.add_argument("--reuse", action="store_true", help="keep the database (seed if missing)")
    parser.add_argument(
        "--pass-scan", type=int, default=20_000, help="max_scan of capacity and injection_scan"
    )
    parser.add_argument(
        "--neighbourhood-scan",
        type=int,
        default=20_000,
        help="max_scan of near_duplicates, contradictions and promotion",
    )
    parser.add_argument("--only", default="", help="comma-separated substrings of job names")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed rounds per job (bare, job alternating)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the traced runs")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()
    if args.reuse:
        call_command("migrate", verbosity=0)
    else:
        fresh_database()
    slug = f"maint-{args.entries}"
    memory = Memory.objects.filter(slug=slug).first()
    if memory is None:
        memory = seed(slug, args.entries, rng_seed=args.entries)
    else:
        print(f"reusing Memory {slug}")
        # Statistics as right after a seed, whatever ran against the database since.
        db_stats.analyze(db_stats.MEMORY_TABLES)
    entries = Entry.objects.filter(memory=memory).count()
    vendor = connection.vendor
    load = os.getloadavg()
    print(
        f"backend: {vendor} ({connection.settings_dict['NAME']}); entries: {entries}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    results = []
    header = (
        f"{'job':<44} {'bound':<42} {'entries':>8} {'s':>7} {'entries/s':>10} "
        f"{'bare/s':>10} {'ratio':>6} {'peak MiB':>9} {'bare MiB':>9}"
    )
    print(header)
    print("-" * len(header))
    only = [s for s in args.only.split(",") if s]
    for spec in jobs(memory, args):
        if only and not any(s in spec["job"] for s in only):
            continue
        setup = spec.get("setup") or (lambda: None)
        spec["bare"]()  # warm the cache the same way for both sides
        bare_runs, job_runs = [], []
        rounds = spec.get("repeat") or args.repeat
        for _ in range(max(1, rounds)):  # alternating; the best of each side counts
            bare_runs.append(timed(spec["bare"]))
            setup()
            job_runs.append(timed(spec["run"]))
        bare_n, bare_s = min(bare_runs, key=lambda r: r[1])
        job_n, job_s = min(job_runs, key=lambda r: r[1])
        peak = bare_peak = None
        if not args.no_memory:
            bare_peak = traced(spec["bare"])
            setup()
            peak = traced(spec["run"])
        row = {
            "job": spec["job"],
            "bound": spec["bound"],
            "entries": job_n,
            "seconds": round(job_s, 3),
            "all_seconds": [round(t, 3) for _, t in job_runs],
            "entries_per_s": round(job_n / job_s, 1) if job_s else None,
            "bare_entries": bare_n,
            "bare_seconds": round(bare_s, 3),
            "bare_all_seconds": [round(t, 3) for _, t in bare_runs],
            "bare_entries_per_s": round(bare_n / bare_s, 1) if bare_s else None,
            "ratio": round((job_n / job_s) / (bare_n / bare_s), 3) if job_s and bare_n else None,
            "peak_mib": round(peak, 2) if peak is not None else None,
            "bare_peak_mib": round(bare_peak, 2) if bare_peak is not None else None,
        }
        results.append(row)
        print(
            f"{row['job']:<44} {row['bound']:<42} {job_n:>8} {job_s:>7.2f} "
            f"{row['entries_per_s'] or 0:>10.0f} {row['bare_entries_per_s'] or 0:>10.0f} "
            f"{row['ratio'] or 0:>6.3f} {peak or 0:>9.1f} {bare_peak or 0:>9.1f}",
            flush=True,
        )
    check = maintenance.rebuild_projection(memory, actor=SYSTEM, check=True)
    assert check.clean, check.differing[:3]
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"backend": vendor, "entries": entries, "load": load, "results": results},
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
