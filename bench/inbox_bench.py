"""Inbox render time against queue size (benchmark, not a test): 100, 10,000 and 100,000 pending
proposals.

    .venv/bin/python bench/inbox_bench.py                      # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_inbox .venv/bin/python bench/inbox_bench.py
    .venv/bin/python bench/inbox_bench.py --sizes 100,10000 --repeat 30

Each size runs in its own process and its own throwaway database (Django's test database for
the configured backend, created and destroyed here), so it never touches a real one. Entries are
written through the real actions; proposals and their targets are bulk-inserted directly (each a
distinct pair of entries, the four kinds in turn, every fifth with lost details). For each size
it renders — through the full Django stack, logged in as a reviewer — the inbox page
(pending, oldest first), the newest-first page, a page filtered by kind, the polled
"new items" badge, a text search (``q``), a search with every filter (submitter, lost
details, status, order), assigned to me (a third of the queue), claimed by me (one live claim),
both with a search, and one entry's proposals, and prints the median and best time in milliseconds, the queries per render,
and the ratios to the smallest queue. A keyset page, capped counts and a watermark badge should
keep every ratio near 1. (With 100 proposals the one-kind page shows 25 rows, not a full page of
50, so that ratio also counts the extra rows rendered.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from datetime import timedelta

from bench_env import setup_django

setup_django()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from memory import actions as memory_actions  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.keys import issue_api_key  # noqa: E402
from memory.models import Entry  # noqa: E402
from proposals.models import Proposal, ProposalTarget, affected_key  # noqa: E402
from review.models import ReviewClaim  # noqa: E402

ROLES = {
    "consolidation": ("target", "redundant"),
    "supersession": ("old", "successor"),
    "promotion": ("note", "note"),
    "cleanup": ("entry", "entry"),
}
KINDS = list(ROLES)


def seed_entries(n: int) -> tuple[int, list[Entry], Actor]:
    staff = Actor.for_user(User.objects.create_user("bench-admin", password="x", is_staff=True))
    memory = memory_actions.create_memory(actor=staff, slug="bench", name="Benchmark")
    key, _ = issue_api_key(name="bench-agent", role="agent")
    agent = Actor.for_key(key, None)
    for i in range(n):
        memory_actions.add_entry(
            memory,
            actor=agent,
            body=f"Service {i} deploys at {i % 24:02d}:00 UTC via scripts/deploy-{i}.sh",
            kind="fact",
            dedupe=False,
        )
    rita = User.objects.create_user("rita", password="x")
    rita.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    entries = list(
        Entry.objects.filter(memory=memory).select_related("head__version").order_by("pk")
    )
    return memory.pk, entries, agent


def grow(memory_pk: int, entries: list[Entry], pairs, agent: Actor, count: int) -> None:
    """Bulk-insert ``count`` pending proposals with their two targets each."""
    now = timezone.now()
    batch = 5000
    made = 0
    while made < count:
        chunk: list[tuple[int, int, str]] = []
        for _ in range(min(batch, count - made)):
            a, b = next(pairs)
            chunk.append((a, b, KINDS[(made + len(chunk)) % 4]))
        proposals = [
            Proposal(
                memory_id=memory_pk,
                kind=kind,
                affected_key=affected_key([entries[a].pk, entries[b].pk]),
                submitted_by=agent.id,
                submitted_by_type=agent.type,
                submitted_by_label=agent.label,
                submitted_by_key_id=agent.key_pk,
                rationale=f"Benchmark proposal over {entries[a].uid} and {entries[b].uid}",
                policy_version="p1-bench",
                payload={"body": f"Merged text of {a} and {b} at 02:00 UTC"},
                verification={
                    "similarity": 0.8,
                    "lost_details": ["deploy.sh"] if (a + b) % 5 == 0 else [],
                    "checks": [],
                },
                created_at=now,
                status_changed_at=now,
            )
            for a, b, kind in chunk
        ]
        with transaction.atomic():
            Proposal.objects.bulk_create(proposals)
            targets = []
            for p, (a, b, kind) in zip(proposals, chunk, strict=True):
                for position, (idx, role) in enumerate(zip((a, b), ROLES[kind], strict=True)):
                    head = entries[idx].head
                    targets.append(
                        ProposalTarget(
                            proposal=p,
                            memory_id=memory_pk,
                            position=position,
                            role=role,
                            entry=entries[idx],
                            version=head.version,
                            version_number=head.version.number,
                            state=head.state,
                            content_hash=head.version.content_hash,
                        )
                    )
            ProposalTarget.objects.bulk_create(targets)
        made += len(chunk)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed(client: Client, url: str, repeat: int) -> dict[str, float]:
    """Render ``url`` ``repeat`` times: median and best wall time, median CPU time of this
    process (ms), and the queries of one render. Best and CPU time are the figures least
    disturbed by other load on the machine (on PostgreSQL the CPU time excludes the server's)."""
    for _ in range(3):
        assert client.get(url).status_code == 200
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        r = client.get(url)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert r.status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        body = client.get(url).content
    return {
        "median": statistics.median(wall),
        "best": min(wall),
        "cpu": statistics.median(cpu),
        "queries": len(ctx.captured_queries),
        "rows": body.count(b'<li id="proposal-'),
    }


PAGES = {
    "inbox": "/review/",
    "newest first": "/review/?sort=newest",
    "one kind": "/review/?kind=cleanup",
    "new-items badge": "/review/new/?after=0",
    # Words of the rationale (every proposal has them): a full page of matches.
    "search": "/review/?q=benchmark+proposal",
    # Search with every filter the inbox offers: one fifth of the queue has lost details.
    "search + filters": (
        "/review/?q=merged+text&submitter=bench-agent&lost=yes&claimed=&assigned="
        "&status=pending&sort=newest&limit=50"
    ),
    # A third of the queue is assigned to the viewer, who also holds one claim.
    "assigned to me": "/review/?assigned=me",
    "claimed by me": "/review/?claimed=me",
    "assigned + claimed + search": "/review/?assigned=me&claimed=me&q=merged",
    # One entry's proposals (filled in per database: the entry of the second seeded entry).
    "one entry": "/review/?entry={entry}",
}


def assign_and_claim(memory_pk: int) -> None:
    """Every third proposal assigned to rita; rita's one live claim on the first of them."""
    rita = User.objects.get(username="rita")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE proposals_proposal SET assigned_to_id = %s WHERE memory_id = %s AND id %% 3 = 0",
            [rita.pk, memory_pk],
        )
    first = Proposal.objects.filter(memory_id=memory_pk, assigned_to=rita).order_by("pk").first()
    assert first is not None
    ReviewClaim.objects.create(
        proposal=first,
        actor_id=Actor.for_user(rita).id,
        actor_label="rita",
        expires_at=timezone.now() + timedelta(hours=1),
    )


def measure(size: int, repeat: int) -> dict[str, dict[str, float]]:
    """A fresh throwaway database with ``size`` pending proposals; the timings of every page."""
    n_entries = 2
    while n_entries * (n_entries - 1) // 2 < size:
        n_entries += 1
    setup_test_environment()
    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = (
        "steward_inbox_bench" if connection.vendor == "postgresql" else None
    )
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        memory_pk, entries, agent = seed_entries(n_entries)
        pairs = itertools.combinations(range(n_entries), 2)
        grow(memory_pk, entries, pairs, agent, size)
        assign_and_claim(memory_pk)
        client = Client()
        client.force_login(User.objects.get(username="rita"))
        urls = {name: url.format(entry=entries[1].uid) for name, url in PAGES.items()}
        return {name: timed(client, url, repeat) for name, url in urls.items()}
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,10000,100000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.repeat)))
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"backend: {connection.vendor}; {args.repeat} renders per page and size", flush=True)
    rows: list[tuple[int, dict[str, dict[str, float]]]] = []
    for size in sizes:
        # Each size in its own process and database, so one size's heap never slows another.
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--repeat", str(args.repeat)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append((size, json.loads(out.strip().splitlines()[-1])))
        print(f"  {size:>7,} pending: seeded and measured in {time.perf_counter() - start:.0f}s")
    print()
    print(
        "render time in ms: median / best wall clock, median CPU of the Django process;"
        " (queries, rows shown)"
    )
    header = f"{'pending':>9} | " + " | ".join(f"{n:>30}" for n in PAGES)
    print(header)
    print("-" * len(header))
    for size, result in rows:
        cells = [
            f"{r['median']:6.1f} / {r['best']:5.1f} / {r['cpu']:5.1f} "
            f"({r['queries']:.0f}, {r['rows']:.0f})"
            for r in (result[n] for n in PAGES)
        ]
        print(f"{size:>9,} | " + " | ".join(f"{c:>30}" for c in cells))
    base = rows[0][1]
    print()
    for size, result in rows[1:]:
        label = f"ratio {size:,} / {rows[0][0]:,}"
        for key in ("median", "best", "cpu"):
            ratios = ", ".join(f"{n} {result[n][key] / base[n][key]:.2f}" for n in PAGES)
            print(f"{label:>24} {key:>6}: {ratios}")
            label = ""


if __name__ == "__main__":
    main()
