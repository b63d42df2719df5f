"""``quality_guard``: what quality ranking does when the answer is the *weaker* entry.

The ``density`` workload is the case the quality votes are built for: the relevant entry is an
attested constraint among unverified notes. This section measures the opposite, the case that
can hurt: every memory of the labelled recall corpus (``evaluation/corpora/recall.json``) that
answers a query is written uncited, as a ``fact`` (no vote), and every other memory — the
distractors that share the topic and several words, and the background — is written as a
``decision`` citing an attested source (``importance_high`` and ``evidence_direct``: +2 each).
Every query then runs hybrid (lexical + vector, the packaged model) with quality off and on over
the very same entries.

Reported per mode: Recall@5, Recall@10 and MRR over every query, and with quality on how many
queries whose answer plain RRF ranked first lost that place (``answers_unseated``). Quality only
permutes the pool inside relevance tiers (``memory.ranking``, rules ``quality:v4``): an answer
both channels ranked near the top is not passed by a distractor only one channel found, while
inside a tier the votes still act. Skipped without the model package.
"""

from __future__ import annotations

from typing import Any

from memory import actions
from memory.models import Memory
from memory.ranking import RULES_VERSION
from memory.search import search

from ..metrics import mean, recall_at_k, reciprocal_rank
from ..registry import SectionResult, section
from ..workbench import ATTESTED, MODES, WRITER, Workbench, under_policy
from .recall import (
    embeddings,
    ensure_memory_vectors,
    load_corpus,
    model,
    model_unavailable,
    selected_queries,
)

LIMIT = 10


def write(bench: Workbench, corpus: dict[str, Any]) -> tuple[Memory, dict[str, int]]:
    """The corpus in one Memory: answers uncited facts, everything else attested decisions."""
    memory = bench.memory("quality-guard")
    repo = bench.source("repo", ATTESTED)
    answers = {r for q in corpus["queries"] for r in q["relevant"]}
    pks: dict[str, int] = {}
    for item in corpus["memories"]:
        if item["id"] in answers:
            result = actions.add_entry(memory, actor=WRITER, body=item["body"], kind="fact")
        else:
            result = actions.add_entry(
                memory,
                actor=WRITER,
                body=item["body"],
                kind="decision",
                evidence=[{"source": repo, "ref": f"adr/{item['id']}"}],
            )
        pks[item["id"]] = result.entry.pk
    return memory, pks


def measure(bench: Workbench) -> dict[str, Any]:
    corpus = load_corpus()
    queries = selected_queries(corpus, bench.quick)
    with embeddings(None):
        memory, pks = write(bench, corpus)
    out: dict[str, Any] = {"rules_version": RULES_VERSION, "queries": len(queries)}
    firsts: dict[str, list[int | None]] = {}
    with embeddings(model()):
        ensure_memory_vectors(memory)
        for mode, policy in MODES:
            view = under_policy(memory, policy)
            recall5, recall10, rrs, first = [], [], [], []
            for q in queries:
                relevant = {pks[r] for r in q["relevant"]}
                hits = search(view, actor=WRITER, query=q["text"], limit=LIMIT, now=bench.now)
                ranked = [h.entry_pk for h in hits.hits]
                recall5.append(recall_at_k(ranked, relevant, 5))
                recall10.append(recall_at_k(ranked, relevant, 10))
                rrs.append(reciprocal_rank(ranked, relevant))
                first.append(next((i for i, pk in enumerate(ranked, 1) if pk in relevant), None))
            firsts[mode] = first
            out[mode] = {
                "recall_at_5": round(mean(recall5), 4),
                "recall_at_10": round(mean(recall10), 4),
                "mrr": round(mean(rrs), 4),
            }
    pairs = list(zip(firsts["quality_off"], firsts["quality_on"], strict=True))
    out["answers_first_quality_off"] = sum(1 for off, _ in pairs if off == 1)
    out["answers_unseated"] = sum(1 for off, on in pairs if off == 1 and on != 1)
    out["largest_answer_drop"] = max(
        [on - off for off, on in pairs if off is not None and on is not None] or [0]
    )
    return out


@section("quality_guard", title="Quality ranking when the answer is the weaker entry", order=33)
def run(bench: Workbench) -> SectionResult:
    skipped = model_unavailable()
    if skipped:
        return SectionResult(report={"quality_guard": {"skipped": skipped}}, rows=[("", skipped)])
    report = measure(bench)
    rows: list[tuple[str, Any]] = [("rules", report["rules_version"])]
    for mode, _ in MODES:
        m = report[mode]
        rows.append(
            (
                f"{mode}: R@5, R@10, MRR (n={report['queries']})",
                f"{m['recall_at_5']:.3f}, {m['recall_at_10']:.3f}, {m['mrr']:.3f}",
            )
        )
    rows.append(
        (
            "answers ranked first without quality, unseated with it",
            f"{report['answers_unseated']} of {report['answers_first_quality_off']}",
        )
    )
    rows.append(("largest drop of an answer (ranks)", report["largest_answer_drop"]))
    return SectionResult(report={"quality_guard": report}, rows=rows)
