"""How long the detail extraction of a proposal's verification takes on hostile bodies (not a
test; nothing is written).

    .venv/bin/python bench/detail_worst_case.py [--repeat 3]

``proposals.verify.extract_details`` reads every member's body of a proposal (up to 8,000
characters each) with regular expressions. A pattern that may start anywhere inside a long run
of word characters and separators, and scans the rest of the run each time, is quadratic on
such a run. Each case is an 8,000-character body repeating one unit ("a-", "1.", "a_1." …),
alone and with a tail that lets a pattern begin ("x/y", "@x", an e-mail, "/"). Prints the
slowest cases (median of ``--repeat`` runs) and the time of the ordinary bodies of the
evaluation corpora for comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench_env import setup_django

setup_django(broker=False)

from proposals.verify import extract_details  # noqa: E402

UNITS = ["a.", "a-", "a+", "a:", "a#", "a*", "a_1.", "a1-", "ab.cd-", "a.b@", "a/", "./", "a<"]
UNITS += ["Ab", "aB.", "1.", "a.1", "-a", ".-", "v1.", "1,", "a@"]
TAILS = ["", " x/y", " @x", " a@b.c", "/"]
SIZE = 8000


def timed(body: str, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        extract_details(body)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = []
    for unit in UNITS:
        for tail in TAILS:
            body = ("s " + unit * (SIZE // len(unit)))[: SIZE - len(tail)] + tail
            cases.append((timed(body, args.repeat), unit, tail))
    cases.sort(reverse=True)
    print(
        f"{len(cases)} hostile bodies of {SIZE} characters; slowest first (median of {args.repeat}):"
    )
    for seconds, unit, tail in cases[:8]:
        print(f"  {seconds * 1000:8.1f} ms  unit {unit!r:10} tail {tail!r}")
    root = Path(__file__).resolve().parent.parent / "evaluation" / "corpora"
    bodies = [m["body"] for m in json.loads((root / "recall.json").read_text())["memories"]]
    start = time.perf_counter()
    for body in bodies:
        extract_details(body)
    each = (time.perf_counter() - start) / len(bodies)
    print(f"ordinary bodies: {len(bodies)} of the recall corpus, {each * 1e6:.0f} µs each")


if __name__ == "__main__":
    main()
