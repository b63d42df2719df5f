"""``density`` and ``context_pack``: candidate-density interference (RFC items 1, 3 and 6).

Workload: several clusters, each with one fixed *relevant* entry (a long, attested
constraint) and a query for it. Near-duplicate and low-value entries are injected into every
cluster in steps (0 … N per cluster) through ``add_entry`` with the ordinary near-duplicate
check: near-duplicates (working notes, untrusted or no evidence) repeat every query term, some
in fewer words than the relevant entry — so the lexical order puts them above it — and low-value
notes repeat only some terms. After each step every query runs with quality off and on over the
very same entries; the curve is Recall@10 and MRR (of the relevant entry) per step.

Quality only permutes the truncated pool (at most 2 ranks, DESIGN.md invariant 6), so it can
never bring back an entry the pool lost: Recall@10 with quality on equals off by construction,
while the rank inside the top 10 — MRR — is where it can help.

``context_pack``: at the densest step, the Context Pack of every query under one byte budget,
with quality off and on: bytes injected, items, and whether the relevant entry made it in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory import actions
from memory.context_pack import build_context_pack
from memory.search import search

from ..metrics import mean, reciprocal_rank
from ..registry import Figure, SectionResult, section
from ..workbench import ATTESTED, MODES, UNTRUSTED, WRITER, Vocabulary, Workbench, under_policy

LIMIT = 10
PACK_BUDGET = 1024


def steps(bench: Workbench) -> list[int]:
    return [0, 2, 6, 12] if bench.quick else [0, 4, 8, 12, 16, 24, 32]


def workload(bench: Workbench) -> dict[str, Any]:
    """Build the clusters, injecting step by step and measuring after each step (memoized
    per run: ``density`` and ``context_pack`` share it)."""
    cached = bench.cache.get("density")
    if cached is not None:
        return cached
    rng = bench.rng("density")
    vocab = Vocabulary(rng)
    memory = bench.memory("density")
    repo = bench.source("repo", ATTESTED)
    chat = bench.source("chat", UNTRUSTED)
    clusters: list[dict[str, Any]] = []
    for _ in range(bench.size(6, 2)):
        a, b = vocab.word(), vocab.word()
        body = f"{a} {b} rotation policy: rotate the signing keys every ninety days across " + (
            " ".join(vocab.words(6))
        )
        relevant = actions.add_entry(
            memory,
            actor=WRITER,
            body=body,
            kind="constraint",
            evidence=[{"source": repo, "ref": f"policy/{a}"}],
        )
        clusters.append(
            {
                "terms": (a, b),
                "query": f"{a} {b} rotation policy",
                "relevant": (relevant.entry.pk, relevant.version.pk),
                "uid": relevant.entry.uid,
            }
        )
    curve, packs = [], []
    injected = 0
    for target in steps(bench):
        while injected < target:
            for c in clusters:
                inject(memory, rng, vocab, c["terms"], chat)
            injected += 1
        curve.append(measure(memory, clusters, injected, bench))
        packs.append(measure_packs(memory, clusters, injected))
    result = {"memory": memory, "clusters": clusters, "curve": curve, "packs": packs}
    bench.cache["density"] = result
    return result


def inject(memory: Any, rng: Any, vocab: Vocabulary, terms: tuple[str, str], chat: str) -> None:
    """One near-duplicate or low-value note in a cluster."""
    a, b = terms
    if rng.random() < 0.6:
        words = [a, b, "rotation", "policy", *vocab.words(rng.randint(1, 14))]
    else:
        words = [a, rng.choice(("rotation", "policy")), *vocab.words(rng.randint(2, 6))]
    evidence: list[actions.EvidenceItem] | None = (
        [{"source": chat, "ref": f"msg/{vocab.word()}"}] if rng.random() < 0.5 else None
    )
    actions.add_entry(
        memory,
        actor=WRITER,
        body=" ".join(words),
        kind="working_note",
        tier="short",
        evidence=evidence,
    )


def per_mode(
    memory: Any, injected: int, figures: Callable[[Any], dict[str, Any]]
) -> dict[str, Any]:
    """One point of a curve: ``injected``, then for each quality mode the ``figures`` of the
    Memory under that mode's policy, each named with the mode as suffix."""
    point: dict[str, Any] = {"injected": injected}
    for mode, policy in MODES:
        point |= {f"{name}_{mode}": v for name, v in figures(under_policy(memory, policy)).items()}
    return point


def measure(memory: Any, clusters: list[dict[str, Any]], injected: int, bench: Workbench) -> dict:
    def figures(view: Any) -> dict[str, Any]:
        recalls, rrs = [], []
        for c in clusters:
            hits = search(view, actor=WRITER, query=c["query"], limit=LIMIT, now=bench.now).hits
            ranked = [h.key for h in hits]
            recalls.append(1.0 if c["relevant"] in ranked[:LIMIT] else 0.0)
            rrs.append(reciprocal_rank(ranked, {c["relevant"]}))
        return {"recall_at_10": round(mean(recalls), 6), "mrr": round(mean(rrs), 6)}

    return per_mode(memory, injected, figures)


@section("density", title="Candidate-density interference curve", order=30)
def run(bench: Workbench) -> SectionResult:
    built = workload(bench)
    curve = built["curve"]
    never_below = all(
        p["recall_at_10_quality_on"] >= p["recall_at_10_quality_off"]
        and p["mrr_quality_on"] >= p["mrr_quality_off"]
        for p in curve
    )
    helps = any(p["mrr_quality_on"] > p["mrr_quality_off"] for p in curve) or any(
        p["recall_at_10_quality_on"] > p["recall_at_10_quality_off"] for p in curve
    )
    report = {
        "density": {
            "clusters": len(built["clusters"]),
            "limit": LIMIT,
            "curve": curve,
            "quality_on_never_below_off": never_below,
            "quality_on_helps": helps,
        }
    }
    rows: list[tuple[str, Any]] = []
    for p in curve:
        rows.append(
            (
                f"injected {p['injected']:>3}: recall@10 off/on, MRR off/on",
                f"{p['recall_at_10_quality_off']:.3f} / {p['recall_at_10_quality_on']:.3f}, "
                f"{p['mrr_quality_off']:.3f} / {p['mrr_quality_on']:.3f}",
            )
        )
    rows.append(("quality on never below off", never_below))
    rows.append(("quality on helps somewhere", helps))
    figure = Figure(
        title=f"Candidate density ({len(built['clusters'])} clusters, k={LIMIT})",
        x_label="near-duplicate / low-value entries injected per cluster",
        y_label="score",
        series={
            "Recall@10, quality off": [
                (p["injected"], p["recall_at_10_quality_off"]) for p in curve
            ],
            "Recall@10, quality on": [(p["injected"], p["recall_at_10_quality_on"]) for p in curve],
            "MRR, quality off": [(p["injected"], p["mrr_quality_off"]) for p in curve],
            "MRR, quality on": [(p["injected"], p["mrr_quality_on"]) for p in curve],
        },
    )
    return SectionResult(report=report, rows=rows, figures=[figure])


def measure_packs(memory: Any, clusters: list[dict[str, Any]], injected: int) -> dict:
    """The Context Pack of every query under one budget, quality off and on."""

    def figures(view: Any) -> dict[str, Any]:
        sizes, items, included = [], [], []
        for c in clusters:
            pack = build_context_pack(view, actor=WRITER, query=c["query"], byte_budget=PACK_BUDGET)
            sizes.append(pack.bytes)
            items.append(len(pack.items))
            included.append(1.0 if any(i.entry_id == c["uid"] for i in pack.items) else 0.0)
        return {
            "bytes": round(mean(sizes), 2),
            "max_bytes": max(sizes),
            "items": round(mean(items), 3),
            "relevant_included": round(mean(included), 6),
        }

    return per_mode(memory, injected, figures)


@section("context_pack", title="Context Pack bytes under one budget, quality off and on", order=35)
def run_context_pack(bench: Workbench) -> SectionResult:
    built = workload(bench)
    packs = built["packs"]
    out: dict[str, Any] = {"budget": PACK_BUDGET, "queries": len(built["clusters"]), "steps": packs}
    rows: list[tuple[str, Any]] = []
    for mode, _ in MODES:
        out[f"bytes_per_query_{mode}"] = round(mean([p[f"bytes_{mode}"] for p in packs]), 2)
        out[f"relevant_included_{mode}"] = round(
            mean([p[f"relevant_included_{mode}"] for p in packs]), 6
        )
    out["within_budget"] = all(p[f"max_bytes_{m}"] <= PACK_BUDGET for p in packs for m, _ in MODES)
    for p in packs:
        rows.append(
            (
                f"injected {p['injected']:>3}: bytes off/on, relevant in pack off/on",
                f"{p['bytes_quality_off']:.0f} / {p['bytes_quality_on']:.0f}, "
                f"{p['relevant_included_quality_off']:.3f} / "
                f"{p['relevant_included_quality_on']:.3f}",
            )
        )
    rows.append((f"every pack within {PACK_BUDGET} bytes", out["within_budget"]))
    return SectionResult(report={"context_pack": out}, rows=rows)
