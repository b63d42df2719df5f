"""``no_regression``: with every lifecycle option off, search order equals plain RRF.

Workload: one Memory (policy ``{}``) with a seeded mix of kinds, tiers, current-state flags and
evidence from an attested and an untrusted source, so the quality signals *would* move members
if they were on. For each query the hits of :func:`memory.search.search` are compared with a
plain RRF over the same channel candidates, computed by :func:`evaluation.metrics.plain_rrf`
(written independently of the search code) and cut at the same limit. The same workload with
``quality_ranking`` on shows the reorder keeps membership and moves nobody more than 2 ranks.
"""

from __future__ import annotations

from typing import Any

from memory import actions
from memory.models import Memory, sensitivities_up_to
from memory.search import channel_cap, query_terms, search
from memory.search.pipeline import run_channels

from ..metrics import plain_rrf
from ..registry import SectionResult, section
from ..workbench import ATTESTED, UNTRUSTED, WRITER, Vocabulary, Workbench

KINDS = ("fact", "preference", "decision", "constraint", "working_note")
LIMIT = 10


def build(bench: Workbench, policy: dict[str, Any]) -> tuple[Memory, list[str]]:
    """The workload Memory and its queries (same seed → same texts, same order of writes)."""
    rng = bench.rng("no_regression")
    vocab = Vocabulary(rng)
    topics = vocab.words(bench.size(12, 5))
    filler = vocab.words(bench.size(60, 25))
    memory = bench.memory("noreg" + ("-q" if policy else ""), policy)
    repo = bench.source("repo", ATTESTED)
    chat = bench.source("chat", UNTRUSTED)
    for i in range(bench.size(150, 40)):
        words = rng.sample(topics, 2) + rng.sample(filler, rng.randint(3, 8))
        rng.shuffle(words)
        evidence: list[actions.EvidenceItem] = []
        roll = rng.random()
        if roll < 0.4:
            evidence = [{"source": repo, "ref": f"commit/{i}"}]
        elif roll < 0.7:
            evidence = [{"source": chat, "ref": f"msg/{i}"}]
        actions.add_entry(
            memory,
            actor=WRITER,
            body=" ".join(words) + f" n{i}",
            kind=rng.choice(KINDS),
            current_state=rng.random() < 0.4,
            effective_at=(bench.now.replace(microsecond=0)).isoformat()
            if rng.random() < 0.5
            else None,
            evidence=evidence,
            dedupe=False,
        )
    queries = []
    for _ in range(bench.size(40, 12)):
        q = rng.sample(topics, rng.randint(1, 2)) + rng.sample(filler, rng.randint(0, 2))
        if rng.random() < 0.3:
            q.append("current")
        queries.append(" ".join(q))
    return memory, queries


@section(
    "no_regression", title="Quality off equals plain RRF; quality on keeps membership", order=5
)
def run(bench: Workbench) -> SectionResult:
    off, queries = build(bench, {})
    on, _ = build(bench, {"quality_ranking": True})
    clearance = sensitivities_up_to(WRITER.clearance)
    equal = 0
    membership_kept = 0
    reordered = 0
    max_shift = 0
    for q in queries:
        hits = search(off, actor=WRITER, query=q, limit=LIMIT, now=bench.now).hits
        ranked = run_channels(
            off.pk, q, query_terms(q), view="current", cap=channel_cap(LIMIT), clearance=clearance
        )
        if [h.key for h in hits] == plain_rrf(ranked)[:LIMIT]:
            equal += 1
        q_hits = search(on, actor=WRITER, query=q, limit=LIMIT, now=bench.now).hits
        q_ranked = run_channels(
            on.pk, q, query_terms(q), view="current", cap=channel_cap(LIMIT), clearance=clearance
        )
        if {h.key for h in q_hits} == set(plain_rrf(q_ranked)[:LIMIT]):
            membership_kept += 1
        baseline = sorted(q_hits, key=lambda h: h.baseline_rank)
        if [h.key for h in q_hits] != [h.key for h in baseline]:
            reordered += 1
        max_shift = max([max_shift, *(abs(h.rank - h.baseline_rank) for h in q_hits)])
    n = len(queries)
    report = {
        "no_regression": {
            "quality_off_equals_rrf": equal == n,
            "queries": n,
            "queries_equal_to_rrf": equal,
            "quality_on_membership_unchanged": membership_kept == n,
            "quality_on_reordered_queries": reordered,
            "quality_on_max_shift": max_shift,
        }
    }
    rows = [
        ("quality_off_equals_rrf", equal == n),
        ("queries equal to plain RRF", f"{equal}/{n}"),
        ("quality on: membership unchanged", membership_kept == n),
        ("quality on: queries reordered", reordered),
        ("quality on: largest rank move", max_shift),
    ]
    return SectionResult(report=report, rows=rows)
