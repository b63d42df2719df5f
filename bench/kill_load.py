"""Bounded load with crashes: agents write and propose, reviewers approve, a reviewer runs
maintenance — while the web (gunicorn) and worker (Celery on Redis) processes are killed with
SIGKILL and restarted. Afterwards every acknowledged write must be there and
``verify_integrity`` must pass.

    .venv/bin/python bench/kill_load.py --seconds 60 --kill-every 15

Everything runs on this machine: PostgreSQL (a database of its own, dropped and re-created;
``--database-url``), Redis (``--broker``, one db number), gunicorn on 127.0.0.1:``--port``. The
load is bounded by ``--seconds`` and ``--max-requests`` and stops by itself.

What counts:
* acknowledged = a 2xx answer: an entry (201 → entry id), a proposal (201 → id), an approval
  (200 → revision); after the run each must be in the database (lost = 0);
* errors = any 5xx or status outside what the operation documents (409/422 are answers);
  requests refused while the web process is down are counted apart (they were never
  acknowledged) and retried by the clients;
* latency p50/p95 over answered requests; requests/s over the whole run, downtime included.
Prints a summary and exits 1 on any lost write, error or integrity finding.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import requests
from bench_env import CELERY_WORKER, ROOT, setup_django, staff_with_memories

EXPECTED = {
    "write": {200, 201, 409, 422, 429},
    "propose": {201, 409, 422, 429},
    "list": {200, 429},
    "approve": {200, 403, 409, 422, 429},
    "maintenance": {202, 409, 429},
}


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    refused: int = 0
    errors: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    proposals: list[int] = field(default_factory=list)
    approvals: dict[int, int] = field(default_factory=dict)
    runs_accepted: int = 0
    requests: int = 0

    def record(self, op: str, status: int, seconds: float, text: str) -> None:
        with self.lock:
            self.requests += 1
            self.statuses[f"{op} {status}"] += 1
            self.latencies.append(seconds)
            if status not in EXPECTED[op]:
                self.errors.append(f"{op} {status}: {text[:200]}")


class Load:
    def __init__(self, args: argparse.Namespace, keys: dict[str, list[str]]):
        self.args = args
        self.base = f"http://127.0.0.1:{args.port}/api/v1"
        self.keys = keys
        self.tally = Tally()
        self.stop = threading.Event()
        self.deadline = time.monotonic() + args.seconds

    def running(self) -> bool:
        return (
            not self.stop.is_set()
            and time.monotonic() < self.deadline
            and self.tally.requests < self.args.max_requests
        )

    def call(
        self, session: requests.Session, op: str, method: str, path: str, body=None, headers=None
    ):
        started = time.monotonic()
        try:
            r = session.request(method, self.base + path, json=body, headers=headers, timeout=30)
        except requests.RequestException:
            with self.tally.lock:
                self.tally.refused += 1
            time.sleep(0.2)
            return None
        self.tally.record(op, r.status_code, time.monotonic() - started, r.text)
        if r.status_code == 429:
            time.sleep(float(r.headers.get("Retry-After", "1")))
        return r

    def agent(self, n: int, secret: str) -> None:
        s = requests.Session()
        s.headers["Authorization"] = f"Bearer {secret}"
        mine: list[tuple[str, str]] = []
        i = 0
        while self.running():
            i += 1
            body = f"Agent {n} note {i}: service s{n}x{i} listens on port {10000 + n * 1000 + i}"
            r = self.call(
                s,
                "write",
                "POST",
                "/memories/load/entries",
                {
                    "body": body,
                    "kind": "fact",
                    "evidence": [{"source": "repo", "ref": f"a{n}/{i}"}],
                },
            )
            if r is not None and r.status_code == 201:
                uid = r.json()["entry_id"]
                with self.tally.lock:
                    self.tally.entries.append(uid)
                mine.append((uid, body))
            if len(mine) >= 2 and i % 3 == 0:
                (a, body_a), (b, body_b) = mine[-2], mine[-1]
                mine.clear()
                r = self.call(
                    s,
                    "propose",
                    "POST",
                    "/proposals",
                    {
                        "memory": "load",
                        "kind": "consolidation",
                        "rationale": "Two notes, one inventory",
                        "target": {"entry_id": a, "version": 1},
                        "redundant": [{"entry_id": b, "version": 1}],
                        "body": f"{body_a}; {body_b}",
                    },
                    headers={"Idempotency-Key": str(uuid.uuid4())},
                )
                if r is not None and r.status_code == 201:
                    with self.tally.lock:
                        self.tally.proposals.append(r.json()["id"])

    def reviewer(self, secret: str) -> None:
        s = requests.Session()
        s.headers["Authorization"] = f"Bearer {secret}"
        while self.running():
            r = self.call(s, "list", "GET", "/proposals?status=pending&memory=load")
            if r is None or r.status_code != 200:
                continue
            items = r.json().get("results") or r.json().get("items") or []
            if not items:
                time.sleep(0.3)
            random.shuffle(items)
            for item in items[:3]:
                lost = (item.get("verification") or {}).get("lost_details") or []
                r = self.call(
                    s,
                    "approve",
                    "POST",
                    f"/proposals/{item['id']}/approve",
                    {"comment": "ok", "acknowledge_lost_details": lost},
                )
                if r is not None and r.status_code == 200:
                    with self.tally.lock:
                        self.tally.approvals[item["id"]] = r.json()["revision"]

    def maintainer(self, secret: str) -> None:
        s = requests.Session()
        s.headers["Authorization"] = f"Bearer {secret}"
        jobs = ["rebuild", "near_duplicates"]
        k = 0
        while self.running():
            r = self.call(
                s,
                "maintenance",
                "POST",
                f"/memories/load/maintenance/{jobs[k % 2]}",
                {"dry_run": False},
            )
            k += 1
            if r is not None and r.status_code == 202:
                with self.tally.lock:
                    self.tally.runs_accepted += 1
            self.stop.wait(self.args.maintenance_every)


class Processes:
    """The web and worker processes, each in its own process group (killed as a whole)."""

    def __init__(self, args: argparse.Namespace, env: dict[str, str]):
        self.args, self.env = args, env
        self.web: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None
        self.kills = 0

    def _start(self, command: list[str]) -> subprocess.Popen[bytes]:
        """``command`` from the repository root, in its own process group."""
        return subprocess.Popen(
            command, cwd=ROOT, env=self.env, start_new_session=True, stdout=subprocess.DEVNULL
        )

    def start_web(self) -> None:
        self.web = self._start(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.args.port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--timeout",
                "30",
                "--log-level",
                "warning",
            ]
        )

    def start_worker(self) -> None:
        self.worker = self._start(
            [
                *CELERY_WORKER,
                "--loglevel",
                "warning",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ]
        )

    def wait_web(self, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                requests.get(f"http://127.0.0.1:{self.args.port}/api/v1/memories/load", timeout=2)
                return
            except requests.RequestException:
                time.sleep(0.2)
        raise SystemExit("the web process did not come up")

    def kill_all(self) -> None:
        for proc in (self.web, self.worker):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self.kills += 1

    def stop_all(self) -> None:
        for proc in (self.web, self.worker):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()

    def killer(self, load: Load) -> None:
        while not load.stop.wait(self.args.kill_every) and load.running():
            self.kill_all()
            time.sleep(self.args.down_seconds)
            self.start_web()
            self.start_worker()
            self.wait_web()


def setup(args: argparse.Namespace) -> dict[str, list[str]]:
    import psycopg

    admin_url = args.database_url.rsplit("/", 1)[0] + "/postgres"
    name = args.database_url.rsplit("/", 1)[1]
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    setup_django()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from memory.keys import issue_api_key

    call_command("migrate", verbosity=0)
    _, group = staff_with_memories("load-admin", ("load", "Load test"))
    keys: dict[str, list[str]] = {"agent": [], "reviewer": []}
    for i in range(args.agents):
        keys["agent"].append(issue_api_key(name=f"load-agent-{i}", role="agent")[1])
    for i in range(args.reviewers + 1):
        User.objects.create_user(f"load-reviewer-{i}").groups.add(group)
        keys["reviewer"].append(
            issue_api_key(
                name=f"load-reviewer-{i}", role="reviewer", owner_username=f"load-reviewer-{i}"
            )[1]
        )
    return keys


def verify(tally: Tally) -> dict[str, Any]:
    import io

    from django.core.management import call_command
    from django.db import close_old_connections

    from memory.models import Entry, MaintenanceRun, Revision
    from proposals.models import Proposal

    close_old_connections()
    present = set(Entry.objects.filter(uid__in=tally.entries).values_list("uid", flat=True))
    missing_entries = [u for u in tally.entries if u not in present]
    found = set(Proposal.objects.filter(pk__in=tally.proposals).values_list("pk", flat=True))
    missing_proposals = [p for p in tally.proposals if p not in found]
    statuses = dict(
        Proposal.objects.filter(pk__in=list(tally.approvals)).values_list("pk", "status")
    )
    revisions = dict(
        Revision.objects.filter(proposal_id__in=list(tally.approvals))
        .exclude(kind="compensate")
        .values_list("proposal_id", "number")
    )
    missing_approvals = [
        p
        for p, number in tally.approvals.items()
        if statuses.get(p) not in ("approved", "compensated") or revisions.get(p) != number
    ]
    out = io.StringIO()
    try:
        call_command("verify_integrity", stdout=out, stderr=out)
        integrity = 0
    except SystemExit as exc:
        integrity = int(exc.code or 0)
    return {
        "lost_entries": missing_entries,
        "lost_proposals": missing_proposals,
        "lost_approvals": missing_approvals,
        "integrity_exit": integrity,
        "integrity_report": out.getvalue().strip().splitlines()[-3:],
        "runs_recorded": MaintenanceRun.objects.count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=20_000)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--reviewers", type=int, default=2)
    parser.add_argument("--kill-every", type=float, default=15)
    parser.add_argument("--down-seconds", type=float, default=1.0)
    parser.add_argument("--maintenance-every", type=float, default=3.0)
    parser.add_argument("--drain-seconds", type=float, default=30)
    parser.add_argument("--port", type=int, default=8710)
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "LOAD_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steward_harden2_load"
        ),
    )
    parser.add_argument(
        "--broker", default=os.environ.get("LOAD_BROKER_URL", "redis://127.0.0.1:6379/8")
    )
    parser.add_argument("--json", action="store_true", help="Print the summary as JSON only.")
    args = parser.parse_args()

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": args.database_url,
        "CELERY_BROKER_URL": args.broker,
        # A task whose worker was killed is redelivered after this many seconds.
        "CELERY_VISIBILITY_TIMEOUT": "5",
    }
    os.environ.update(
        {k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "CELERY_BROKER_URL")}
    )
    subprocess.run(["redis-cli", "-u", args.broker, "flushdb"], check=False, capture_output=True)
    keys = setup(args)
    procs = Processes(args, env)
    procs.start_web()
    procs.start_worker()
    procs.wait_web()
    load = Load(args, keys)
    threads = [
        threading.Thread(target=load.agent, args=(i, k)) for i, k in enumerate(keys["agent"])
    ]
    threads += [threading.Thread(target=load.reviewer, args=(k,)) for k in keys["reviewer"][:-1]]
    threads.append(threading.Thread(target=load.maintainer, args=(keys["reviewer"][-1],)))
    killer = threading.Thread(target=procs.killer, args=(load,))
    started = time.monotonic()
    for t in [*threads, killer]:
        t.start()
    try:
        for t in threads:
            t.join()
    finally:
        load.stop.set()
        killer.join()
    elapsed = time.monotonic() - started
    # Let the worker finish (or be redelivered) what it accepted, then stop cleanly.
    from memory.models import MaintenanceRun

    end = time.monotonic() + args.drain_seconds
    while time.monotonic() < end and MaintenanceRun.objects.count() < load.tally.runs_accepted:
        time.sleep(0.5)
    procs.stop_all()

    tally = load.tally
    result = verify(tally)
    lat = sorted(tally.latencies)
    summary = {
        "seconds": round(elapsed, 1),
        "requests_answered": tally.requests,
        "requests_per_second": round(tally.requests / elapsed, 1),
        "p50_ms": round(statistics.median(lat) * 1000, 1) if lat else None,
        "p95_ms": round(lat[int(0.95 * (len(lat) - 1))] * 1000, 1) if lat else None,
        "errors": len(tally.errors),
        "refused_while_down": tally.refused,
        "processes_killed": procs.kills,
        "acknowledged": {
            "entries": len(tally.entries),
            "proposals": len(tally.proposals),
            "approvals": len(tally.approvals),
            "maintenance_runs": tally.runs_accepted,
        },
        "lost": {k: len(result[k]) for k in ("lost_entries", "lost_proposals", "lost_approvals")},
        "maintenance_runs_recorded": result["runs_recorded"],
        "integrity_exit": result["integrity_exit"],
        "integrity": result["integrity_report"],
        "statuses": dict(sorted(tally.statuses.items())),
        "error_samples": tally.errors[:5],
    }
    print(json.dumps(summary, indent=None if args.json else 2))
    bad = tally.errors or any(summary["lost"].values()) or result["integrity_exit"]  # type: ignore[attr-defined]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
