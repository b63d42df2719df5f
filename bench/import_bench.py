"""Import throughput (not a test): conversation turns through ``POST …/entries/batch`` against
one-at-a-time ``POST …/entries``, in the same run, against the same live server.

    .venv/bin/python bench/import_bench.py --turns 5000 --singles 200 --port 8531
    DATABASE_URL=postgres://… .venv/bin/python bench/import_bench.py

Starts gunicorn (one sync worker) on a fresh SQLite file (or ``DATABASE_URL``) in the embedded
mode — no broker, so every task runs in the request — with the product's default embedding model
(bge-small-en-v1.5; ``STEWARD_EMBEDDINGS_PROVIDER`` overrides it): vectors are included on both
sides. Two empty Memories, one per side. ``--rounds`` alternating rounds, each: a share of
``--singles`` adds one POST at a time (the single add, near-duplicate check and vector included),
then a share of ``--turns`` in batches of ``--batch`` (1000). Prints each side's turns per
second and the ratio. One-at-a-time adds are measured on a sample (``--singles``): at a few adds
per second, 5,000 of them would take the shared machine half an hour; the rate does not depend on
how many are made.

Last, it checks the batch is recallable by meaning as soon as the import returned: a turn
planted in the last batch is asked for in other words (no word in common but the name) through
``search``, and the vector channel's rank of it is printed.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_env import ROOT, setup_django

NAMES = ["Mel", "Caroline", "Jon", "Gina", "Andrew", "Audrey", "John", "Maria", "Tim", "Nate"]
PLACES = ["the lake", "Lisbon", "the climbing gym", "her parents' farm", "the museum", "Kyoto"]
THINGS = [
    "a pottery class",
    "the charity run",
    "a new painting",
    "the book club",
    "a road trip",
    "the concert",
    "a job interview",
    "the garden",
]
TEMPLATES = [
    "{a}: I went to {p} with {b} last weekend and we talked about {t}.",
    "{a}: Did you finish {t}? I remember you started it in {m}.",
    "{b}: Yes! It took me {n} weeks, and {a} helped with the hard parts.",
    "{a}: That's amazing, {b}. How did {t} go in the end?",
    "{b}: Honestly better than I hoped; next time I'll bring {c} along to {p}.",
    "{a}: We're planning {t} for {m}, you should come.",
]
MONTHS = ["January", "March", "May", "July", "September", "November"]
PLANTED = "Jon: My sister adopted a grey kitten called Pepper from the shelter this spring."
QUESTION = "What pet did Jon's sibling get?"


def turns(rng: random.Random, n: int, tag: str) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        a, b, c = rng.sample(NAMES, 3)
        text = rng.choice(TEMPLATES).format(
            a=a,
            b=b,
            c=c,
            p=rng.choice(PLACES),
            t=rng.choice(THINGS),
            m=rng.choice(MONTHS),
            n=rng.randint(2, 9),
        )
        out.append(
            {"body": f"{text} ({tag} {i})", "kind": "fact", "tier": "long", "session_id": tag}
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=5000, help="Turns through the batch.")
    parser.add_argument("--singles", type=int, default=200, help="One-at-a-time adds.")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--port", type=int, default=8531)
    args = parser.parse_args()

    database = Path(tempfile.gettempdir()) / f"steward-import-bench-{os.getpid()}.sqlite3"
    os.environ.pop("CELERY_BROKER_URL", None)
    setup_django(fresh_sqlite=database, broker=False)

    import requests
    from bench_env import staff_with_memories
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from memory.keys import issue_api_key

    call_command("migrate", verbosity=0)
    staff_with_memories("import-bench", ("singles", "One at a time"), ("batched", "Batched"))
    _, secret = issue_api_key(name="import-bench", role="agent")
    provider = settings.STEWARD_EMBEDDINGS["PROVIDER"]
    print(f"database {connection.vendor}, embeddings {provider or 'none'}")
    connection.close()

    env = os.environ.copy()
    env["THROTTLE_KEY_RATE"] = "1000000/min"
    env["DATABASE_URL"] = os.environ["DATABASE_URL"]
    cmd = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--workers",
        "1",
        "--timeout",
        "600",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{args.port}/api/v1/memories"
    headers = {"Authorization": f"Bearer {secret}"}
    session = requests.Session()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if session.get(f"{base}/singles", headers=headers, timeout=30).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.5)
        # Warm the model in the worker (its first use loads it), on neither side's clock.
        session.post(f"{base}/singles/search", json={"query": "warm up"}, headers=headers)

        rng = random.Random(34)
        batch_turns = turns(rng, args.turns, "batched")
        batch_turns[-1] = {**batch_turns[-1], "body": PLANTED}
        single_turns = turns(rng, args.singles, "single")
        single_s = batch_s = 0.0
        singles_done = batched_done = 0
        per_round_single = -(-args.singles // args.rounds)
        per_round_batch = -(-args.turns // args.rounds)
        for r in range(args.rounds):
            chunk = single_turns[r * per_round_single : (r + 1) * per_round_single]
            started = time.perf_counter()
            for item in chunk:
                resp = session.post(f"{base}/singles/entries", json=item, headers=headers)
                assert resp.status_code in (200, 201), resp.text
            single_s += time.perf_counter() - started
            singles_done += len(chunk)
            part = batch_turns[r * per_round_batch : (r + 1) * per_round_batch]
            started = time.perf_counter()
            for i in range(0, len(part), args.batch):
                resp = session.post(
                    f"{base}/batched/entries/batch",
                    json={"entries": part[i : i + args.batch]},
                    headers=headers,
                    timeout=600,
                )
                assert resp.status_code == 200, resp.text[:500]
            batch_s += time.perf_counter() - started
            batched_done += len(part)
            print(
                f"round {r + 1}: one at a time {singles_done / single_s:.1f} turns/s, "
                f"batch {batched_done / batch_s:.1f} turns/s"
            )
        single_rate = singles_done / single_s
        batch_rate = batched_done / batch_s
        print(
            f"one at a time: {singles_done} turns in {single_s:.1f} s = {single_rate:.1f}/s; "
            f"batch: {batched_done} turns in {batch_s:.1f} s = {batch_rate:.1f}/s; "
            f"ratio {batch_rate / single_rate:.1f}x"
        )
        found = session.post(
            f"{base}/batched/search", json={"query": QUESTION, "limit": 10}, headers=headers
        ).json()["hits"]
        ranks = [(i + 1, h["channels"]) for i, h in enumerate(found) if h["body"] == PLANTED]
        print(f"recall by meaning right after the import: {QUESTION!r} -> {ranks or 'not found'}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        database.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
