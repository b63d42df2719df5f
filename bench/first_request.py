"""The first requests after a ``gunicorn --preload`` start against warm ones (issue: "the first
action after a start waits").

Builds a fresh SQLite database (migrated, a Memory with 200 entries, an agent key and a
reviewer), starts ``gunicorn config.wsgi --preload -c gunicorn.conf.py`` with the product's
default embedding model, waits for ``/readyz`` (that is what a load balancer does before it
sends traffic), then for each probe times its very first request and the median of
``--warm`` more, and prints the ratio. A probe is an API read, a recall, a write and pages a
reviewer opens (login, inbox, a proposal, the Memory home).

    python bench/first_request.py [--workers 1] [--warm 10] [--rounds 1] [--provider default|none]
                                  [--against OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent

SEED = """
from django.contrib.auth.models import Group, User
from memory import actions
from memory.actors import Actor
from memory.keys import issue_api_key
from proposals.requests import submit_request
staff = Actor.for_user(User.objects.create_user("root", password="x", is_staff=True))
mem = actions.create_memory(actor=staff, slug="bench", name="Bench")
rita = User.objects.create_user("rita", password="pw-rita-123")
rita.groups.add(Group.objects.get_or_create(name="reviewer")[0])
key, secret = issue_api_key(name="bench-agent", role="agent", memory_slugs=(), clearance="internal")
agent = Actor.for_key(key, None)
uids = []
for i in range(200):
    r = actions.add_entry(mem, actor=agent, kind="fact", dedupe=False,
        body=f"Service {i} deploys from branch release-{i} at {i % 24:02d}:00 UTC")
    uids.append(r.entry.uid)
p = submit_request(actor=agent, data={"memory": "bench", "kind": "cleanup",
    "rationale": "Old services", "entries": [{"entry_id": uids[0], "version": 1}]}).proposal
print("SECRET=" + secret)
print("PROPOSAL=" + str(p.pk))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def manage(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


def logged_in(base: str) -> requests.Session:
    s = requests.Session()
    page = s.get(f"{base}/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, page.text[:500]
    r = s.post(
        f"{base}/accounts/login/",
        {"username": "rita", "password": "pw-rita-123", "csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    r.raise_for_status()
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--warm", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1, help="starts of gunicorn, one by one")
    parser.add_argument("--provider", default="default", help="default (the model) or none")
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (e.g. the previous commit): the starts alternate between this "
        "tree and that one, on the same database, and each is summed up on its own",
    )
    args = parser.parse_args()
    trees = [ROOT] if args.against is None else [ROOT, args.against.resolve()]

    tmp = Path(tempfile.mkdtemp(prefix="steward-first-"))
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}"}
    env.pop("CELERY_BROKER_URL", None)
    if args.provider == "none":
        env["STEWARD_EMBEDDINGS_PROVIDER"] = "none"
    else:
        env.pop("STEWARD_EMBEDDINGS_PROVIDER", None)
    manage(env, "migrate", "--noinput")
    seeded = manage(env, "shell", "-c", SEED)
    secret = re.search(r"SECRET=(\S+)", seeded).group(1)  # type: ignore[union-attr]
    proposal = re.search(r"PROPOSAL=(\d+)", seeded).group(1)  # type: ignore[union-attr]

    results: dict[Path, dict[str, list[float]]] = {tree: {} for tree in trees}
    ready: list[float] = []
    for round_ in range(args.rounds * len(trees)):
        tree = trees[round_ % len(trees)]
        ready_after, rows = one_start(
            args, env, secret, proposal, shift=round_ // len(trees), root=tree
        )
        ready.append(ready_after)
        print(f"start {round_ + 1} ({tree}): ready after {ready_after:.1f} s")
        for row in rows:
            first_ms, warm_ms = float(row["first_ms"]), float(row["warm_ms"])
            results[tree].setdefault(str(row["probe"]), []).append(first_ms / warm_ms)
            print(f"  {row['probe']!s:24} {first_ms:9.1f} {warm_ms:9.1f} {first_ms / warm_ms:6.2f}")
    print(
        f"{args.rounds} start(s) per tree, {args.workers} worker(s), provider {args.provider}; "
        f"ready after {min(ready):.1f}-{max(ready):.1f} s"
    )
    for tree, by_probe in results.items():
        print(f"{tree}\n{'probe':24} {'median':>6} {'min':>6} {'max':>6}  first / warm per start")
        for name, ratios in by_probe.items():
            listed = " ".join(f"{r:.2f}" for r in ratios)
            print(
                f"{name:24} {statistics.median(ratios):6.2f} {min(ratios):6.2f} "
                f"{max(ratios):6.2f}  {listed}"
            )
    print(json.dumps({str(tree): by_probe for tree, by_probe in results.items()}))


def one_start(
    args: argparse.Namespace,
    env: dict[str, str],
    secret: str,
    proposal: str,
    *,
    shift: int,
    root: Path = ROOT,
) -> tuple[float, list[dict[str, float | str]]]:
    """Start gunicorn once, wait for ``/readyz``, time each probe's first request and the
    median of ``args.warm`` more, stop it. The probes' order turns by ``shift`` from one start
    to the next, so no probe is always the very first request after a start."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    started = time.perf_counter()
    server = subprocess.Popen(
        [
            str(gunicorn),
            "config.wsgi",
            "--preload",
            "-c",
            "gunicorn.conf.py",
            "-w",
            str(args.workers),
            "-b",
            f"127.0.0.1:{port}",
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if requests.get(f"{base}/readyz", timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.perf_counter() - started > 300:
                raise SystemExit("gunicorn did not become ready in 300 s")
            time.sleep(0.1)
        ready_after = time.perf_counter() - started
        api = requests.Session()
        api.headers["Authorization"] = f"Bearer {secret}"
        pages = logged_in(base)
        n = iter(range(10_000))
        probes = {
            "GET entries (API)": lambda: api.get(f"{base}/api/v1/memories/bench/entries"),
            "POST search (API)": lambda: api.post(
                f"{base}/api/v1/memories/bench/search",
                json={"query": f"which branch does service {next(n) % 200} deploy from"},
            ),
            "POST entry (API)": lambda: api.post(
                f"{base}/api/v1/memories/bench/entries",
                json={"body": f"Probe note {next(n)} for the first request", "kind": "fact"},
            ),
            "GET /review/ (page)": lambda: pages.get(f"{base}/review/"),
            "GET proposal page": lambda: pages.get(f"{base}/review/proposals/{proposal}/"),
            "GET Memory home": lambda: pages.get(f"{base}/memories/bench/"),
        }
        rows: list[dict[str, float | str]] = []
        order = list(probes.items())
        k = shift % len(order)
        for name, call in order[k:] + order[:k]:
            t = time.perf_counter()
            r = call()
            first = time.perf_counter() - t
            assert r.status_code < 400, (name, r.status_code, r.text[:300])
            warm = []
            for _ in range(args.warm):
                t = time.perf_counter()
                call().raise_for_status()
                warm.append(time.perf_counter() - t)
            median = statistics.median(warm)
            rows.append({"probe": name, "first_ms": first * 1000, "warm_ms": median * 1000})
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return ready_after, sorted(rows, key=lambda r: list(probes).index(str(r["probe"])))


if __name__ == "__main__":
    main()
