"""Write-path throughput benchmark (not a test): ``POST /entries`` against a trivial GET.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_write_bench \\
        .venv/bin/python bench/write_bench.py --port 8200
    .venv/bin/python bench/write_bench.py --profile 200     # where an add's time goes

Builds (once per database) a Memory of 10,000 entries with the bulk builder of
``bench/search_bench.py``, issues an agent key scoped to it, and starts gunicorn on 127.0.0.1
(``--workers`` sync workers) over the same database. Then, in the same run and against the same
server, ``--clients`` concurrent clients (threads, one keep-alive session each) do, in
``--rounds`` alternating rounds totalling ``--seconds`` per side:

1. ``GET /api/v1/memories/<slug>`` — a trivial authenticated read (key lookup, scope, one row);
2. ``POST /api/v1/memories/<slug>/entries`` — a fresh body each time drawn from the Memory's own
   vocabulary, so the near-duplicate check has real lexical candidates to score.

Prints requests/s and p50/p95 latency of each and the write/read throughput ratio, and (on
Linux) the machine's CPU time per request of each side, split into the gunicorn workers, the
client threads and the rest (PostgreSQL's backends and the kernel): with 2 cores shared by all
three, that split says where an add's extra cost lies.

``--admission-review`` adds a third side to every round: the same ``POST`` with the Memory's
``policy.admission_review`` on (``below_authority: repository_attested``; the bodies cite
nothing, so every write lands as a candidate and files its ``admission`` proposal in the same
transaction), and prints the p95 ratio of admission-reviewed to direct writes. The policy is
switched between sides by the driver, so both sides write into the same Memory.
``--profile N`` instead runs N adds in-process through the same API view under cProfile and
prints the functions by cumulative time (no server).
``--statements N`` (PostgreSQL on Linux) runs N GETs and N adds in-process, each on a new
database connection as a server with ``CONN_MAX_AGE=0`` does, and prints per request the
Python CPU time, the backend's CPU time (``/proc/<pid>/schedstat``, its start-up included) and
each SQL statement's share of it: where an add's cost over a GET lies, statement by statement.
``--proposals N`` runs N ``POST /api/v1/proposals`` in-process (a consolidation of two entries
added for it beforehand, each a fresh pair) and prints the SQL statements one submission runs,
and its throughput against a trivial GET and against the same three INSERTs (the proposal, its
targets, its audit event) in one transaction: what intake costs over the rows it writes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_env import ROOT, setup_django

DATABASE_URL = os.environ.get(
    "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steward_write_bench"
)


def ensure_database(url: str) -> None:
    """Create the PostgreSQL database named in ``url`` when it does not exist yet."""
    if not url.startswith("postgres"):
        return
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True, connect_timeout=5) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')


ensure_database(DATABASE_URL)
setup_django(database_url=DATABASE_URL)

import requests  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from search_bench import build, vocabulary, zipf_words  # noqa: E402

from memory.keys import issue_api_key  # noqa: E402
from memory.models import Entry, Memory  # noqa: E402

SIZE = 10_000
SLUG = f"bench-{SIZE}"


#: The Memory's policy on each side of the admission-review comparison.
DIRECT: dict[str, Any] = {}
REVIEWED: dict[str, Any] = {"admission_review": {"below_authority": "repository_attested"}}


def set_policy(memory_pk: int, section: dict[str, Any]) -> None:
    """Switch admission review on or off for the next side (read fresh by every request)."""
    memory = Memory.objects.get(pk=memory_pk)
    policy = {k: v for k, v in memory.policy.items() if k != "admission_review"}
    Memory.objects.filter(pk=memory_pk).update(policy={**policy, **section})
    connection.close()


def body_maker(seed: int) -> Callable[[], dict[str, str]]:
    rng = random.Random(seed)
    vocab = vocabulary(random.Random(SIZE))

    def make() -> dict[str, str]:
        words = zipf_words(rng, vocab, rng.randint(8, 25))
        text = " ".join(words).capitalize() + f". Note {rng.getrandbits(48):x}."
        return {"body": text, "kind": "fact"}

    return make


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent outside idle and I/O wait (None off Linux)."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    return (sum(values) - values[3] - values[4]) / CLOCK_TICKS


def process_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` (processes that have exited count 0)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def children_of(parent: int) -> list[int]:
    """The pids whose parent is ``parent`` (gunicorn's workers)."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def cpu_snapshot(workers: list[int]) -> tuple[float, float, float] | None:
    """(machine busy, gunicorn workers, this process) CPU seconds, or None off Linux."""
    busy = busy_cpu_seconds()
    if busy is None:
        return None
    return busy, process_cpu_seconds(workers), sum(os.times()[:2])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def wait_ready(url: str, headers: dict[str, str], proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("gunicorn exited before it was ready")
        try:
            if requests.get(url, headers=headers, timeout=10).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise SystemExit("gunicorn did not answer within 60 s")


def drive(
    clients: int, seconds: float, call: Callable[[requests.Session, int], int]
) -> tuple[float, list[float], dict[int, int]]:
    """``clients`` threads call ``call(session, i)`` for ``seconds``; (rps, latencies, codes)."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    codes: dict[int, int] = {}
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def worker(i: int) -> None:
        session = requests.Session()
        start.wait()
        while time.monotonic() < stop_at[0]:
            t0 = time.perf_counter()
            status = call(session, i)
            latencies[i].append((time.perf_counter() - t0) * 1000.0)
            with lock:
                codes[status] = codes.get(status, 0) + 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    stop_at[0] = time.monotonic() + seconds
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    flat = [x for per in latencies for x in per]
    return len(flat) / elapsed, flat, codes


def profile(n: int, secret: str) -> None:
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_HOST="127.0.0.1")
    make = body_maker(seed=int(time.time()))
    url = f"/api/v1/memories/{SLUG}/entries"
    for _ in range(5):
        client.post(url, make(), content_type="application/json")
    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    for _ in range(n):
        r = client.post(url, make(), content_type="application/json")
        assert r.status_code == 201, r.content
    profiler.disable()
    per = (time.perf_counter() - t0) * 1000.0 / n
    print(f"{n} adds in-process: {per:.1f} ms per add (wall, under the profiler)")
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(
        os.environ.get("PROFILE_SORT", "cumulative")
    ).print_stats(os.environ.get("PROFILE_FILTER", ""), int(os.environ.get("PROFILE_ROWS", "45")))
    print(out.getvalue())


def backend_cpu_ms() -> float:
    """CPU time the current connection's PostgreSQL backend has used since it started."""
    pid = connection.connection.info.backend_pid
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e6


def statements(n: int, secret: str) -> None:
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_HOST="127.0.0.1")
    make = body_maker(seed=int(time.time()))
    url = f"/api/v1/memories/{SLUG}"
    sides: dict[str, Callable[[], Any]] = {
        "GET memory": lambda: client.get(url),
        "POST entries": lambda: client.post(
            f"{url}/entries", make(), content_type="application/json"
        ),
    }
    for call in sides.values():
        call()
    for name, call in sides.items():
        statement_costs(name, call, n)


def statement_costs(name: str, call: Callable[[], Any], n: int) -> None:
    """``call`` ``n`` times, each on a new connection: its CPU split and each statement's."""
    spent: dict[str, list[float]] = {}

    def timed(execute: Callable[..., Any], sql: str, *rest: Any) -> Any:
        before = backend_cpu_ms()
        try:
            return execute(sql, *rest)
        finally:
            label = " ".join(sql.split()[:3])[:60]
            spent.setdefault(label, []).append(backend_cpu_ms() - before)

    python, backend, startup = [], [], []
    for _ in range(n):
        connection.close()
        connection.ensure_connection()
        startup.append(backend_cpu_ms())
        t0 = time.process_time()
        with connection.execute_wrapper(timed):
            call()
        python.append((time.process_time() - t0) * 1000.0)
        backend.append(backend_cpu_ms())
    py, pg, up = statistics.mean(python), statistics.mean(backend), statistics.mean(startup)
    in_statements = sum(sum(times) for times in spent.values()) / n
    print(
        f"{name}: {py + pg:.1f} ms CPU per request = Python {py:.1f} + PostgreSQL backend "
        f"{pg:.1f} (start-up {up:.1f}, statements {in_statements:.1f}, commit and the rest "
        f"{pg - up - in_statements:.1f})"
    )
    for label, times in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {sum(times) / n:5.2f} ms  x{len(times) / n:.2f}  {label}")


def submissions(n: int, secret: str, memory: Memory) -> None:
    """``n`` consolidations through ``POST /api/v1/proposals`` (each over a fresh pair of
    entries, added beforehand): statements per submission and throughput ratios."""
    from django.db import transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from memory import actions, audit
    from memory.actors import Actor
    from proposals.models import Proposal, ProposalStatus, ProposalTarget

    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_HOST="127.0.0.1")
    actor = Actor.system("write-bench")
    make = body_maker(seed=int(time.time()))

    def pair() -> dict[str, Any]:
        body = make()["body"]
        made = [
            actions.add_entry(memory, actor=actor, body=text, kind="fact", dedupe=False).entry
            for text in (body, body + " Again.")
        ]
        return {
            "memory": SLUG,
            "kind": "consolidation",
            "rationale": "The second restates the first.",
            "target": {"entry_id": made[0].uid, "version": 1},
            "redundant": [{"entry_id": made[1].uid, "version": 1}],
            "body": body + " Again.",
        }

    requests_ = [pair() for _ in range(n + 1)]
    url = "/api/v1/proposals"
    first = client.post(url, requests_.pop(), content_type="application/json")  # warm
    assert first.status_code == 201, first.content
    counts: list[int] = []
    data: list[int] = []  # without transaction control (BEGIN, COMMIT, savepoints)
    labels: dict[str, int] = {}
    post_ms: list[float] = []
    for body in requests_:
        with CaptureQueriesContext(connection) as ctx:
            t0 = time.perf_counter()
            r = client.post(url, body, content_type="application/json")
            post_ms.append((time.perf_counter() - t0) * 1000.0)
        assert r.status_code == 201, r.content
        counts.append(len(ctx.captured_queries))
        control = 0
        for q in ctx.captured_queries:
            words = q["sql"].split()
            if words[0] in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK"):
                control += 1
                words = words[:2] if words[0] == "RELEASE" else words[:1]
            label = " ".join(words[:4])[:70]
            labels[label] = labels.get(label, 0) + 1
        data.append(len(ctx.captured_queries) - control)
    get_ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        client.get(f"/api/v1/memories/{SLUG}")
        get_ms.append((time.perf_counter() - t0) * 1000.0)
    target = Proposal.objects.latest("pk")
    targets = list(ProposalTarget.objects.filter(proposal=target).order_by("position"))
    insert_ms = []
    for i in range(n):
        t0 = time.perf_counter()
        with transaction.atomic(durable=True):
            now = timezone.now()
            proposal = Proposal(
                memory=memory,
                kind=target.kind,
                status=ProposalStatus.WITHDRAWN,
                affected_key=f"bench-{time.time_ns()}-{i}",
                submitted_by=actor.id,
                submitted_by_type=actor.type,
                submitted_by_label=actor.label,
                rationale=target.rationale,
                evidence=target.evidence,
                policy_version=target.policy_version,
                payload=target.payload,
                verification=target.verification,
                created_at=now,
                status_changed_at=now,
            )
            proposal.save(force_insert=True)
            ProposalTarget.objects.bulk_create(
                [
                    ProposalTarget(
                        proposal=proposal,
                        memory=memory,
                        position=t.position,
                        role=t.role,
                        entry_id=t.entry_id,
                        version_id=t.version_id,
                        version_number=t.version_number,
                        state=t.state,
                        content_hash=t.content_hash,
                    )
                    for t in targets
                ]
            )
            audit.record(
                "proposal.submitted",
                actor=actor,
                memory=memory,
                label=target.rationale,
                proposal_id=proposal.pk,
                payload={"kind": target.kind},
            )
        insert_ms.append((time.perf_counter() - t0) * 1000.0)
    post, get, insert = (statistics.median(x) for x in (post_ms, get_ms, insert_ms))
    print(
        f"POST proposals: {statistics.median(counts):.0f} statements, "
        f"{statistics.median(data):.0f} without transaction control (min {min(data)}, max "
        f"{max(data)}), p50 {post:.1f} ms"
    )
    for label, count in sorted(labels.items(), key=lambda kv: -kv[1]):
        print(f"  x{count / len(counts):.2f}  {label}")
    print(
        f"GET memory: p50 {get:.1f} ms; the three INSERTs in one transaction: p50 {insert:.1f} ms"
    )
    print(
        f"throughput ratio POST proposals / three INSERTs: {insert / post:.3f}; "
        f"POST proposals / GET memory: {get / post:.3f}  (n={n}, {connection.vendor}, "
        f"load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8200)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0, help="per side, all rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--statements", type=int, default=0, metavar="N")
    parser.add_argument("--proposals", type=int, default=0, metavar="N")
    parser.add_argument(
        "--admission-review",
        action="store_true",
        help="also time writes under admission review (every write a candidate)",
    )
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    print(f"backend: {connection.vendor} ({connection.settings_dict['NAME']})")
    memory = build(SLUG, SIZE, seed=SIZE)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum would have after a bulk load
    _, secret = issue_api_key(name="write-bench", role="agent", memory_slugs=[SLUG])
    print(f"memory {SLUG}: {Entry.objects.filter(memory=memory).count()} entries")
    if args.profile:
        profile(args.profile, secret)
        return
    if args.statements:
        statements(args.statements, secret)
        return
    if args.proposals:
        submissions(args.proposals, secret, memory)
        return
    connection.close()

    headers = {"Authorization": f"Bearer {secret}"}
    base = f"http://127.0.0.1:{args.port}/api/v1/memories/{SLUG}"
    cmd = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--workers",
        str(args.workers),
        "--log-level",
        "warning",
    ]
    env = os.environ.copy()
    # The API's per-key rate limit would answer 429 long before the machine is saturated.
    env.setdefault("THROTTLE_KEY_RATE", "1000000/min")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        wait_ready(base, headers, proc)
        makers = [body_maker(seed=1000 * i + int(time.time())) for i in range(args.clients)]

        def read(session: requests.Session, i: int) -> int:
            return session.get(base, headers=headers, timeout=30).status_code

        def write(session: requests.Session, i: int) -> int:
            r = session.post(f"{base}/entries", json=makers[i](), headers=headers, timeout=30)
            return r.status_code

        drive(args.clients, 2.0, read)  # warm every worker
        workers = children_of(proc.pid)
        cpu: dict[str, list[float]] = {}
        sides: list[tuple[str, Callable[[requests.Session, int], int], dict[str, Any]]] = [
            ("GET memory", read, DIRECT),
            ("POST entries", write, DIRECT),
        ]
        if args.admission_review:
            sides.append(("POST reviewed", write, REVIEWED))
        # Alternating rounds, so a change in the machine's load weighs on both sides alike.
        totals: dict[str, tuple[int, float, list[float], dict[int, int]]] = {}
        for _ in range(args.rounds):
            for name, call, policy in sides:
                set_policy(memory.pk, policy)
                before = cpu_snapshot(workers)
                rps, lat, codes = drive(args.clients, args.seconds / args.rounds, call)
                after = cpu_snapshot(workers)
                if before is not None and after is not None:
                    used = cpu.setdefault(name, [0.0, 0.0, 0.0])
                    for i in range(3):
                        used[i] += after[i] - before[i]
                n, secs, all_lat, all_codes = totals.get(name, (0, 0.0, [], {}))
                for code, count in codes.items():
                    all_codes[code] = all_codes.get(code, 0) + count
                totals[name] = (n + len(lat), secs + len(lat) / rps, all_lat + lat, all_codes)
        results: dict[str, float] = {}
        for name, (n, secs, lat, codes) in totals.items():
            results[name] = n / secs
            print(
                f"{name:13s} {n / secs:7.1f} req/s  p50 {statistics.median(lat):6.1f} ms  "
                f"p95 {pct(lat, 0.95):6.1f} ms  n={n}  status={dict(sorted(codes.items()))}"
            )
        for name, (busy, in_workers, in_client) in cpu.items():
            per = 1000.0 / totals[name][0]
            print(
                f"{name:13s} CPU per request {busy * per:5.1f} ms = gunicorn workers "
                f"{in_workers * per:4.1f} + client {in_client * per:4.1f} + PostgreSQL and "
                f"kernel {(busy - in_workers - in_client) * per:4.1f}"
            )
        if args.admission_review:
            p95 = {name: pct(lat, 0.95) for name, (_, _, lat, _) in totals.items()}
            print(
                f"p95 ratio POST reviewed / POST entries: "
                f"{p95['POST reviewed'] / p95['POST entries']:.3f}"
            )
        set_policy(memory.pk, DIRECT)
        ratio = results["POST entries"] / results["GET memory"]
        print(
            f"ratio POST/GET: {ratio:.3f}  ({args.clients} clients, {args.workers} gunicorn "
            f"workers, {args.rounds} alternating rounds, {args.seconds:.0f} s each side, "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
