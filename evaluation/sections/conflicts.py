"""``conflicts``: unresolved conflicts come back with both sides labelled (RFC item 8).

Workload: pairs of current-state entries that contradict each other on one subject, recorded
with ``record_conflict`` (an observation: no authoritative edge, so both stay current and
are marked ``unresolved_conflict``). Half the pairs have known, comparable times, half have
unknown time (which must never count as older or newer). Each subject also has related
entries that are not in conflict. ``conflict_exposure`` is the share of (pair, quality mode)
searches where both sides are in the top 10 *and* both are labelled ``conflict`` in the Context
Pack; it must be 1.0.
"""

from __future__ import annotations

from typing import Any

from memory import actions
from memory.context_pack import build_context_pack
from memory.models import Validity
from memory.search import search

from ..registry import SectionResult, section
from ..workbench import MODES, UNTRUSTED, WRITER, Vocabulary, Workbench, days_ago, under_policy

LIMIT = 10


def build(bench: Workbench) -> tuple[Any, list[dict[str, Any]]]:
    rng = bench.rng("conflicts")
    vocab = Vocabulary(rng)
    memory = bench.memory("conflicts")
    chat = bench.source("chat", UNTRUSTED)
    pairs = []
    for i in range(bench.size(12, 4)):
        t = vocab.word()
        timed = i % 2 == 0
        sides = []
        for days in (40, 2):
            result = actions.add_entry(
                memory,
                actor=WRITER,
                body=f"{t} cache size is {vocab.word()} units",
                kind="fact",
                current_state=True,
                effective_at=days_ago(bench, days) if timed else None,
                evidence=[{"source": chat, "ref": f"msg/{vocab.word()}"}],
            )
            sides.append(result)
        for _ in range(rng.randint(2, 4)):
            actions.add_entry(
                memory,
                actor=WRITER,
                body=f"{t} cache eviction uses {' '.join(vocab.words(3))}",
                kind="fact",
            )
        actions.record_conflict(
            memory, actor=WRITER, from_entry=sides[1].entry.uid, to_entry=sides[0].entry.uid
        )
        pairs.append(
            {
                "query": f"{t} cache size",
                "timed": timed,
                "sides": [(s.entry.pk, s.version.pk) for s in sides],
                "uids": [s.entry.uid for s in sides],
            }
        )
    return memory, pairs


@section("conflicts", title="Conflict exposure: both sides returned and labelled", order=50)
def run(bench: Workbench) -> SectionResult:
    memory, pairs = build(bench)
    exposed = total = 0
    per_mode: dict[str, float] = {}
    for mode, policy in MODES:
        view = under_policy(memory, policy)
        ok = 0
        for p in pairs:
            hits = search(view, actor=WRITER, query=p["query"], limit=LIMIT).hits
            by_key = {h.key: h for h in hits}
            pack = build_context_pack(view, actor=WRITER, query=p["query"], byte_budget=4000)
            labels = {i.entry_id: i.label for i in pack.items}
            both = all(
                k in by_key and by_key[k].validity == Validity.UNRESOLVED_CONFLICT
                for k in p["sides"]
            ) and all(labels.get(uid) == "conflict" for uid in p["uids"])
            ok += int(both)
        per_mode[mode] = ok / len(pairs)
        exposed += ok
        total += len(pairs)
    report = {
        "conflict_exposure": exposed / total,
        "conflicts": {
            "pairs": len(pairs),
            "time_unknown_pairs": sum(1 for p in pairs if not p["timed"]),
            **{f"exposure_{m}": v for m, v in per_mode.items()},
        },
    }
    rows: list[tuple[str, Any]] = [("conflict_exposure", exposed / total)]
    rows += [(f"exposure ({m})", v) for m, v in per_mode.items()]
    return SectionResult(report=report, rows=rows)
