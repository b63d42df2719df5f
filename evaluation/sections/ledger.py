"""``ledger``: N revisions of a set of facts; "what is current?" and "what was true at
revision T?" (RFC item 9, Ledger-QA style).

Workload: F current-state facts, each revised R times in a seeded interleaved order through
``revise_entry``; after every revision the expected value of every fact is written down
(the ground truth, independent of the database). Then:

- *current*: for each fact, current-state recall (quality off and on) must return the head
  version — the latest value — and no earlier value;
- *at revision T*: for sampled revision numbers T (the first, the last and seeded ones in
  between), the exact historical read of each fact that existed at T (its version list, the
  version recorded at or before T) must give the value true at T, and the ``history`` view of
  recall must return that exact version.
"""

from __future__ import annotations

from typing import Any

from memory import actions
from memory.models import EntryVersion
from memory.search import search

from ..registry import SectionResult, section
from ..workbench import ATTESTED, MODES, WRITER, Vocabulary, Workbench, under_policy

LIMIT = 10


def build(bench: Workbench) -> tuple[Any, list[dict[str, Any]], list[dict[str, str]]]:
    rng = bench.rng("ledger")
    vocab = Vocabulary(rng)
    memory = bench.memory("ledger")
    repo = bench.source("repo", ATTESTED)
    facts: list[dict[str, Any]] = []
    truth: list[dict[str, str]] = [{}]  # truth[T] = {entry uid: value at revision T}
    n_facts, n_revisions = bench.size(10, 4), bench.size(8, 3)
    for _ in range(n_facts):
        a, b = vocab.word(), vocab.word()
        value = vocab.word()
        result = actions.add_entry(
            memory,
            actor=WRITER,
            body=f"{a} {b} setting value is {value}",
            kind="fact",
            current_state=True,
            evidence=[{"source": repo, "ref": f"config/{a}"}],
        )
        facts.append({"uid": result.entry.uid, "pk": result.entry.pk, "name": f"{a} {b}"})
        record(memory, truth, result.entry.uid, value)
    order = [f for f in facts for _ in range(n_revisions)]
    rng.shuffle(order)
    for fact in order:
        value = vocab.word()
        actions.revise_entry(
            memory,
            actor=WRITER,
            entry_uid=fact["uid"],
            body=f"{fact['name']} setting value is {value}",
        )
        record(memory, truth, fact["uid"], value)
    return memory, facts, truth


def record(memory: Any, truth: list[dict[str, str]], uid: str, value: str) -> None:
    memory.refresh_from_db(fields=["head"])
    while len(truth) <= memory.head:
        truth.append(dict(truth[-1]))
    truth[memory.head][uid] = value


@section("ledger", title="Ledger: what is current, what was true at revision T", order=40)
def run(bench: Workbench) -> SectionResult:
    memory, facts, truth = build(bench)
    head = len(truth) - 1
    latest = truth[head]

    current_ok = current_n = 0
    for _, policy in MODES:
        view = under_policy(memory, policy)
        for fact in facts:
            hits = search(
                view, actor=WRITER, query=f"current {fact['name']} setting", limit=LIMIT
            ).hits
            mine = [h for h in hits if h.entry_pk == fact["pk"]]
            current_n += 1
            current_ok += int(
                len(mine) == 1
                and mine[0].is_head
                and mine[0].body.endswith(f" is {latest[fact['uid']]}")
            )

    rng = bench.rng("ledger:sample")
    points = sorted({1, head, *rng.sample(range(1, head + 1), min(head, bench.size(12, 4)))})
    versions = {
        f["uid"]: list(
            EntryVersion.objects.filter(entry_id=f["pk"])
            .select_related("revision")
            .order_by("number")
        )
        for f in facts
    }
    at_ok = at_n = 0
    for t in points:
        for fact in facts:
            expected = truth[t].get(fact["uid"])
            if expected is None:
                continue  # the fact did not exist yet at revision t
            at_n += 1
            known = [v for v in versions[fact["uid"]] if v.revision.number <= t]
            version = known[-1] if known else None
            read_ok = version is not None and version.body.endswith(f" is {expected}")
            hits = search(
                memory, actor=WRITER, query=f"{fact['name']} setting", limit=LIMIT, view="history"
            ).hits
            in_history = version is not None and any(h.version_pk == version.pk for h in hits)
            at_ok += int(read_ok and in_history)
    report = {
        "ledger": {
            "facts": len(facts),
            "revisions": head,
            "current_queries": current_n,
            "current_accuracy": current_ok / current_n,
            "at_revision_points": len(points),
            "at_revision_queries": at_n,
            "at_revision_accuracy": at_ok / at_n,
        }
    }
    rows: list[tuple[str, Any]] = [
        ("facts / revisions", f"{len(facts)} / {head}"),
        ("current_accuracy", current_ok / current_n),
        ("at_revision_accuracy", at_ok / at_n),
    ]
    return SectionResult(report=report, rows=rows)
