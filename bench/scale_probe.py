"""Every request path against a large Memory (benchmark, not a test): REST, MCP and browser pages
timed through the full Django stack, side by side for a small and a large Memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_scale STEWARD_EMBEDDINGS_PROVIDER=none \\
        .venv/bin/python bench/search_bench.py --sizes 10000,1000000 --queries 20
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_scale STEWARD_EMBEDDINGS_PROVIDER=none \\
        .venv/bin/python bench/scale_probe.py --memories bench-10000,bench-1000000

The Memories are the ones ``bench/search_bench.py`` builds (its bulk builder writes the rows the
actions would). The first run adds what the builder does not write, once per Memory: one
``entry.added`` audit event per ``add`` revision (inserted in SQL from the revisions, as the add
action would have recorded them), a reviewer, an auditor and their API keys, and
``--proposals`` cleanup and quarantine proposals filed through ``POST /api/v1/proposals`` by an
agent key, a third of them approved and a sixth rejected through the API.

Then each path is requested ``--repeat`` times (after one warm-up request) with Django's test
client — the full middleware, authentication, view and template stack, no network — and the
median wall time, the number of SQL statements and the slowest statement's time are printed per
Memory, with the ratio of the large to the small. ``--explain`` prints, for each path slower than
``--slow`` ms on the large Memory, its slowest statement with ``EXPLAIN (ANALYZE, BUFFERS)``
(PostgreSQL). ``--only`` limits the run to paths whose label contains one of the given words.
``--maintenance`` also runs every maintenance job as a dry run on each Memory and prints its
time, the entries it read and the peak Python memory it allocated (``tracemalloc``).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("THROTTLE_KEY_RATE", "1000000/min")
os.environ.setdefault("THROTTLE_ANON_RATE", "1000000/min")

from bench_env import setup_django

setup_django(broker=False)

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import connection, reset_queries  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from lib.pagination import encode_cursor  # noqa: E402
from memory import maintenance  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.keys import issue_api_key  # noqa: E402
from memory.models import (  # noqa: E402
    AuditEvent,
    Entry,
    HeadState,
    MaintenanceRun,
    Memory,
    Revision,
    RevisionKind,
)
from proposals.models import Proposal  # noqa: E402
from review.models import MaintenanceOperation  # noqa: E402

PROBE = "scale-probe"
#: What an MCP client accepts (the transport answers 406 otherwise).
ACCEPT = "application/json, text/event-stream"
QUERIES = ["deploy database migration", "api rate limit", "cache", "release checklist staging"]


@dataclass
class Fixture:
    """What one Memory's paths name: the Memory, an entry with history, revisions, a proposal,
    an operation, a run, the keys and the logged-in browser clients."""

    memory: Memory
    entry: str
    deep_cursor: str
    revision_add: int
    revision_bulk: int
    proposal: int
    operation: int | None
    run: int | None
    word: str


def ensure_people() -> dict[str, Any]:
    """The probe's reviewer and auditor users and its agent, reviewer and auditor keys (secrets
    are shown once, so keys are issued afresh each run)."""
    people: dict[str, Any] = {}
    for name, group in (("reviewer", "reviewer"), ("auditor", "auditor")):
        user, _ = User.objects.get_or_create(username=f"{PROBE}-{name}")
        user.groups.add(Group.objects.get_or_create(name=group)[0])
        people[f"user_{name}"] = user
    for role in ("agent", "reviewer", "auditor"):
        _, secret = issue_api_key(
            name=f"{PROBE}-{role}",
            role=role,
            clearance="restricted" if role != "agent" else "internal",
            owner_username=f"{PROBE}-{role}" if role != "agent" else None,
        )
        people[role] = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    return people


def seed_audit(memory: Memory) -> int:
    """One ``entry.added`` event per ``add`` revision of ``memory`` that has none (what the add
    action records), inserted in one SQL statement."""
    if AuditEvent.objects.filter(memory_id=memory.pk, action="entry.added").exists():
        return 0
    table = AuditEvent._meta.db_table
    with connection.cursor() as c:
        c.execute(
            f"""
            INSERT INTO {table} (action, recorded_at, actor_type, actor_id, actor_label,
                on_behalf_of, correlation_id, memory_id, memory_label, label, revision_number,
                entry_ids, payload)
            SELECT 'entry.added', r.recorded_at, r.actor_type, r.actor_id, r.actor_label, '',
                md5(r.id::text), r.memory_id, %s, left(v.body, 80), r.number,
                jsonb_build_array(e.uid),
                jsonb_build_object('kind', e.kind, 'tier', e.tier, 'version', 1,
                                   'content_hash', v.content_hash)
            FROM memory_revision r
            JOIN memory_revisionchange rc ON rc.revision_id = r.id
            JOIN memory_entry e ON e.id = rc.entry_id
            JOIN memory_entryversion v ON v.id = rc.to_version_id
            WHERE r.memory_id = %s AND r.kind = %s
            ORDER BY r.number
            """,
            [memory.slug, memory.pk, RevisionKind.ADD],
        )
        inserted = c.rowcount
        c.execute(f"ANALYZE {table}")
    return inserted


def seed_proposals(memory: Memory, people: dict[str, Any], n: int, client: Client) -> None:
    """``n`` cleanup and quarantine proposals through the API (an agent files, a reviewer
    approves a third and rejects a sixth), unless the Memory has some already."""
    if Proposal.objects.filter(memory=memory).exists() or not n:
        return
    rng = random.Random(memory.pk)
    top = Entry.objects.filter(memory=memory).order_by("-pk").values_list("pk", flat=True)[:1][0]
    low = Entry.objects.filter(memory=memory).order_by("pk").values_list("pk", flat=True)[:1][0]
    active: list[tuple[str, int]] = []
    while len(active) < 2 * n:
        pks = [rng.randint(low, top) for _ in range(4 * n)]
        active += list(
            Entry.objects.filter(pk__in=pks, head__state=HeadState.ACTIVE).values_list(
                "uid", "head__version__number"
            )
        )
    active = list(dict.fromkeys(active))
    started = time.monotonic()
    filed = []
    for i in range(n):
        if i % 2:
            body = {
                "memory": memory.slug,
                "kind": "quarantine",
                "rationale": "Reads as an instruction to the model.",
                "entries": [{"entry_id": active[2 * i][0], "version": active[2 * i][1]}],
                "reason": "possible injection",
            }
        else:
            body = {
                "memory": memory.slug,
                "kind": "cleanup",
                "rationale": "Low-value leftovers.",
                "entries": [
                    {"entry_id": uid, "version": v} for uid, v in active[2 * i : 2 * i + 2]
                ],
            }
        r = client.post(
            "/api/v1/proposals", body, content_type="application/json", **people["agent"]
        )
        if r.status_code == 201:
            filed.append(r.json()["id"])
    for i, pk in enumerate(filed):
        if i % 3 == 0:
            client.post(
                f"/api/v1/proposals/{pk}/approve",
                {},
                content_type="application/json",
                **people["reviewer"],
            )
        elif i % 6 == 1:
            client.post(
                f"/api/v1/proposals/{pk}/reject",
                {"reason": "wrong", "comment": "Still used."},
                content_type="application/json",
                **people["reviewer"],
            )
    print(f"  {memory.slug}: {len(filed)} proposals filed in {time.monotonic() - started:.0f}s")


def fixture(memory: Memory) -> Fixture:
    bulk = (
        Revision.objects.filter(memory=memory, kind=RevisionKind.FORGET).order_by("number").first()
    )
    add = Revision.objects.filter(memory=memory, kind=RevisionKind.ADD).order_by("-number").first()
    assert bulk is not None and add is not None, "build the Memory with bench/search_bench.py"
    # An entry with a few revisions: one a proposal touched, else one the builder retired.
    proposal = Proposal.objects.filter(memory=memory).order_by("pk").first()
    assert proposal is not None
    uid = str(proposal.targets.values_list("entry__uid", flat=True).first())
    pks = Entry.objects.filter(memory=memory).order_by("pk").values_list("pk", flat=True)
    low, high = pks.first() or 0, pks.last() or 0
    deep = low + int((high - low) * 0.9)  # 90 % into the Memory, without an OFFSET
    op = MaintenanceOperation.objects.filter(memory=memory).order_by("pk").first()
    run = MaintenanceRun.objects.filter(memory=memory).order_by("-pk").first()
    body = Entry.objects.get(memory=memory, uid=uid).head.version.body
    return Fixture(
        memory=memory,
        entry=uid,
        deep_cursor=encode_cursor(deep),
        revision_add=add.number,
        revision_bulk=bulk.number,
        proposal=proposal.pk,
        operation=op.pk if op else None,
        run=run.pk if run else None,
        word=body.split()[1].strip(".,").lower(),
    )


Path = tuple[str, str, str, Any, str]  # label, method, url, body, who


def paths(f: Fixture) -> list[Path]:
    m = f"/api/v1/memories/{f.memory.slug}"
    e = f"{m}/entries/{f.entry}"
    web = f"/memories/{f.memory.slug}"
    q = QUERIES[0]
    out: list[Path] = [
        ("api memory", "get", m, None, "agent"),
        ("api entries p1", "get", f"{m}/entries", None, "agent"),
        ("api entries deep", "get", f"{m}/entries?cursor={f.deep_cursor}", None, "agent"),
        ("api entries state=quarantined", "get", f"{m}/entries?state=quarantined", None, "agent"),
        ("api entries state=inactive", "get", f"{m}/entries?state=inactive", None, "agent"),
        (
            "api entries validity=unresolved_conflict",
            "get",
            f"{m}/entries?validity=unresolved_conflict",
            None,
            "agent",
        ),
        ("api entries kind=decision", "get", f"{m}/entries?kind=decision", None, "agent"),
        ("api entry", "get", e, None, "agent"),
        ("api entry versions", "get", f"{e}/versions", None, "agent"),
        ("api entry version 1", "get", f"{e}/versions/1", None, "agent"),
        ("api revisions p1", "get", f"{m}/revisions", None, "agent"),
        (
            "api revisions tail",
            "get",
            f"{m}/revisions?since_revision={f.memory.head - 50}",
            None,
            "agent",
        ),
        ("api revision (add)", "get", f"{m}/revisions/{f.revision_add}", None, "agent"),
        ("api revision (500 changes)", "get", f"{m}/revisions/{f.revision_bulk}", None, "agent"),
        ("api search", "post", f"{m}/search", {"query": q}, "agent"),
        ("api search history", "post", f"{m}/search", {"query": q, "view": "history"}, "agent"),
        (
            "api search candidates",
            "post",
            f"{m}/search",
            {"query": q, "view": "candidates"},
            "reviewer",
        ),
        ("api context-pack", "post", f"{m}/context-pack", {"query": q}, "agent"),
        ("api inventory", "get", f"{m}/inventory", None, "reviewer"),
        ("api proposals", "get", f"/api/v1/proposals?memory={f.memory.slug}", None, "reviewer"),
        (
            "api proposals q",
            "get",
            f"/api/v1/proposals?memory={f.memory.slug}&q={f.word}",
            None,
            "reviewer",
        ),
        ("api proposals entry", "get", f"/api/v1/proposals?entry={f.entry}", None, "reviewer"),
        ("api proposal", "get", f"/api/v1/proposals/{f.proposal}", None, "reviewer"),
        (
            "api audit events",
            "get",
            f"/api/v1/audit/events?memory={f.memory.slug}",
            None,
            "auditor",
        ),
        ("api audit events entry", "get", f"/api/v1/audit/events?entry={f.entry}", None, "auditor"),
        (
            "api audit events q",
            "get",
            f"/api/v1/audit/events?memory={f.memory.slug}&q={f.word}",
            None,
            "auditor",
        ),
        (
            "api audit export (first chunk)",
            "export",
            f"/api/v1/audit/export?format=jsonl&memory={f.memory.slug}",
            None,
            "auditor",
        ),
        ("api maintenance runs", "get", f"{m}/maintenance/runs", None, "reviewer"),
        (
            "mcp recall",
            "post",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"memory": f.memory.slug, "query": q}},
            },
            "agent",
        ),
        (
            "mcp entry_history",
            "post",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "entry_history",
                    "arguments": {"memory": f.memory.slug, "entry_id": f.entry},
                },
            },
            "agent",
        ),
        ("page dashboard", "get", "/", None, "web_reviewer"),
        ("page inbox", "get", f"/review/?memory={f.memory.slug}", None, "web_reviewer"),
        ("page inbox all", "get", "/review/?status=all", None, "web_reviewer"),
        ("page inbox q", "get", f"/review/?q={f.word}", None, "web_reviewer"),
        ("page proposal", "get", f"/review/proposals/{f.proposal}/", None, "web_reviewer"),
        ("page memory home", "get", f"{web}/", None, "web_reviewer"),
        ("page entries", "get", f"{web}/entries/", None, "web_reviewer"),
        ("page entries q", "get", f"{web}/entries/?q={f.word}", None, "web_reviewer"),
        ("page entry timeline", "get", f"{web}/entries/{f.entry}/", None, "web_auditor"),
        ("page revision (add)", "get", f"{web}/revisions/{f.revision_add}/", None, "web_auditor"),
        (
            "page revision (500 changes)",
            "get",
            f"{web}/revisions/{f.revision_bulk}/",
            None,
            "web_auditor",
        ),
        ("page audit log", "get", f"/audit/?memory={f.memory.slug}", None, "web_auditor"),
        ("page audit log entry", "get", f"/audit/?entry={f.entry}", None, "web_auditor"),
        (
            "page audit log q",
            "get",
            f"/audit/?memory={f.memory.slug}&q={f.word}",
            None,
            "web_auditor",
        ),
        ("page maintenance", "get", f"{web}/maintenance/", None, "web_reviewer"),
        (
            "page search playground",
            "get",
            f"{web}/search/?q={q.replace(' ', '+')}",
            None,
            "web_reviewer",
        ),
        ("page replay", "get", f"{web}/replay/", None, "web_reviewer"),
        ("page notifications", "get", "/notifications/", None, "web_reviewer"),
    ]
    if f.operation:
        out.append(("api operation", "get", f"/api/v1/operations/{f.operation}", None, "reviewer"))
        out.append(("page operation", "get", f"/operations/{f.operation}/", None, "web_reviewer"))
    if f.run:
        out.append(
            ("api maintenance run", "get", f"/api/v1/maintenance/runs/{f.run}", None, "reviewer")
        )
        out.append(
            ("page maintenance run", "get", f"{web}/maintenance/{f.run}/", None, "web_reviewer")
        )
    return out


def request(clients: dict[str, Any], people: dict[str, Any], path: Path) -> int:
    _label, method, url, body, who = path
    if who.startswith("web_"):
        client, extra = clients[who], {}
    else:
        client, extra = clients["api"], people[who]
    if method == "export":
        r = client.get(url, **extra)
        next(iter(r.streaming_content))  # the first chunk: what the reader waits for
        r.close()
        return r.status_code
    if method == "post":
        r = client.post(url, body, content_type="application/json", HTTP_ACCEPT=ACCEPT, **extra)
    else:
        r = client.get(url, **extra)
    return r.status_code


def measure(run: Callable[[], int], repeat: int) -> tuple[float, int, float, str, int]:
    """Median ms, statements, slowest statement (ms and SQL), status."""
    status = run()  # warm-up
    times, counts = [], []
    slowest: tuple[float, str] = (0.0, "")
    for _ in range(repeat):
        reset_queries()
        t0 = time.perf_counter()
        status = run()
        times.append((time.perf_counter() - t0) * 1000)
        counts.append(len(connection.queries))
        for query in connection.queries:
            if float(query["time"]) * 1000 > slowest[0]:
                slowest = (float(query["time"]) * 1000, query["sql"])
    return statistics.median(times), max(counts), slowest[0], slowest[1], status


def explain(sql: str) -> None:
    if connection.vendor != "postgresql" or not sql.lstrip().upper().startswith("SELECT"):
        return
    with connection.cursor() as c:
        c.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        for (line,) in c.fetchall():
            print("      " + line)


def run_maintenance(memory: Memory) -> None:
    for job in maintenance.job_names():
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            run = maintenance.run_job(
                memory, actor=Actor.system(f"{PROBE} {job}"), job=job, dry_run=True
            )
            counts: dict[str, Any] = {
                k: v for k, v in run.counts.items() if isinstance(v, int | float)
            }
        except Exception as exc:  # a job the policy refuses still prints a line
            counts = {"error": f"{type(exc).__name__}: {exc}"}
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        shown = ", ".join(f"{k}={v}" for k, v in list(counts.items())[:6])
        print(f"  {memory.slug:>16} {job:<16} {elapsed:7.1f} s  peak {peak:6.1f} MiB  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", default="bench-10000,bench-1000000")
    parser.add_argument("--proposals", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated words of path labels")
    parser.add_argument("--slow", type=float, default=300.0)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--maintenance", action="store_true")
    args = parser.parse_args()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    settings.DEBUG = True  # connection.queries
    settings.ALLOWED_HOSTS = ["*"]
    setup_test_environment()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)  # statuses are printed
    print(f"backend: {connection.vendor} ({connection.settings_dict['NAME']})")
    people = ensure_people()
    clients: dict[str, Any] = {"api": Client()}
    for who in ("reviewer", "auditor"):
        clients[f"web_{who}"] = Client()
        clients[f"web_{who}"].force_login(people[f"user_{who}"])
    memories = [Memory.objects.get(slug=s) for s in args.memories.split(",")]
    for memory in memories:
        added = seed_audit(memory)
        if added:
            print(f"  {memory.slug}: {added} audit events")
        seed_proposals(memory, people, args.proposals, clients["api"])
    if args.maintenance:
        print("maintenance dry runs:")
        for memory in memories:
            run_maintenance(memory)
    fixtures = [fixture(m) for m in memories]
    only = [w for w in args.only.split(",") if w]
    table = [p for p in paths(fixtures[0]) if not only or any(w in p[0] for w in only)]
    heads = " | ".join(f"{m.slug:>24}" for m in memories)
    print(f"{'path':<34} | {heads} | ratio")
    for template in table:
        cells, results = [], []
        for f in fixtures:
            path = next(p for p in paths(f) if p[0] == template[0])

            def call(path: Path = path) -> int:
                return request(clients, people, path)

            ms, n, slow_ms, slow_sql, status = measure(call, args.repeat)
            results.append((ms, slow_sql))
            mark = "" if status < 400 else f" !{status}"
            cells.append(f"{ms:8.1f} ms {n:3d} q {slow_ms:6.1f}{mark}")
        ratio = results[-1][0] / results[0][0] if results[0][0] else 0.0
        flag = " <-" if results[-1][0] > args.slow else ""
        print(f"{template[0]:<34} | {' | '.join(f'{c:>24}' for c in cells)} | {ratio:5.1f}x{flag}")
        if args.explain and results[-1][0] > args.slow:
            print("    " + results[-1][1][:600])
            explain(results[-1][1])


if __name__ == "__main__":
    main()
