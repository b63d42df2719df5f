"""``recall``: Recall@5, Recall@10, MRR and nDCG@10 on a labelled corpus (issue #15, part 5).

The corpus (``evaluation/corpora/recall.json``, described in docs/recall-evaluation.md) holds
statement-style memories in nine languages, distractors among them, and labelled queries of four
classes: ``question``, ``paraphrase``, ``keyword`` and ``multilingual``. It is written through
``add_entry`` into two throwaway Memories and every query runs under four configurations:

- ``lexical`` — Memory written and queried with the analyzer's stemming off
  (``STEWARD_ANALYZER={"STEM": False}``), no embedding provider: ``search()``;
- ``lexical+stemming`` — the default analyzer, no embedding provider: ``search()``;
- ``vector`` — the vector channel alone (``vector_channel``) with the packaged model (the
  configured one, else bge-small-en-v1.5, else all-MiniLM-L6-v2);
- ``hybrid`` — the full ``search()`` with that model: both channels fused by RRF.

The last two are reported as skipped when no packaged model is
installed. Relevance is binary, by entry; metrics are per query class and, for multilingual
queries, per language (``evaluation.metrics``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet
from django.test import override_settings

from memory import actions
from memory import vectors as vector_index
from memory.embeddings import (
    get_provider,
    other_scripts_path,
    packaged_model_path,
    provider_key,
)
from memory.models import EntryVersion, Head, Memory
from memory.search import search, vector_channel
from memory.search.abbreviations import spelled_out

from ..metrics import mean, ndcg_at_k, recall_at_k, reciprocal_rank
from ..registry import SectionResult, section
from ..workbench import WRITER, Workbench

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "recall.json"
CLASSES = ("question", "paraphrase", "keyword", "multilingual")
LANGUAGES = ("zh", "ja", "ar", "th", "hi", "ru", "el", "ko")
CONFIGURATIONS = ("lexical", "lexical+stemming", "vector", "hybrid")
LIMIT = 10
#: Queries per class (per language for multilingual) in ``--quick`` runs.
QUICK_PER_CLASS = 6
QUICK_PER_LANGUAGE = 2


@cache
def load_corpus(path: Path = CORPUS) -> dict[str, Any]:
    """The labelled corpus, as stored (read once per process)."""
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def selected_queries(corpus: dict[str, Any], quick: bool) -> list[dict[str, Any]]:
    """Every query, or in quick mode the first few of each class and language."""
    if not quick:
        return list(corpus["queries"])
    taken: dict[tuple[str, str], int] = {}
    out = []
    for q in corpus["queries"]:
        group = (q["class"], q["lang"] if q["class"] == "multilingual" else "")
        quota = QUICK_PER_LANGUAGE if q["class"] == "multilingual" else QUICK_PER_CLASS
        if taken.get(group, 0) < quota:
            taken[group] = taken.get(group, 0) + 1
            out.append(q)
    return out


def model() -> str:
    """The model the vector configurations run (``memory.embeddings.packaged_model_path``)."""
    path = packaged_model_path()
    if path is None:
        raise ImproperlyConfigured("No packaged embedding model is installed.")
    return path


def other_scripts_key() -> str | None:
    """The stored key of the model for text the main model does not read, if one is set."""
    path = other_scripts_path()
    return provider_key(path) if path else None


def model_unavailable() -> str | None:
    """Why the model configurations cannot run here, or None when they can."""
    if packaged_model_path() is None:
        return "skipped: no packaged embedding model is installed (make install)"
    return None


@contextmanager
def embeddings(provider: str | None) -> Iterator[None]:
    """Run with the embedding provider ``provider`` (a dotted path) or none; the model for
    other scripts stays as configured (``STEWARD_EMBEDDINGS["OTHER_SCRIPTS"]``)."""
    configured = getattr(settings, "STEWARD_EMBEDDINGS", {})
    with override_settings(STEWARD_EMBEDDINGS={**configured, "PROVIDER": provider}):
        yield


@contextmanager
def unstemmed() -> Iterator[None]:
    """Run with the analyzer's stemming off (a no-op for an analyzer that does not stem)."""
    with override_settings(STEWARD_ANALYZER={"STEM": False}):
        yield


def head_versions(memory: Memory) -> QuerySet[EntryVersion]:
    return EntryVersion.objects.filter(
        pk__in=Head.objects.filter(memory=memory).values("version_id")
    )


def ensure_memory_vectors(memory: Memory) -> int:
    """Index every head of ``memory``, each by the model that reads it (idempotent; the corpus
    was written with the model off, so the after-commit task made none); how many have a
    vector."""
    if get_provider() is None:
        return 0
    pks = list(head_versions(memory).order_by("pk").values_list("pk", flat=True))
    return vector_index.index_versions(pks)


def heads_with_vectors(memory: Memory) -> int:
    """Heads of ``memory`` that have a vector of a configured model. Vectors are keyed by
    content hash and shared between Memories, so this — not how many a run created — is the
    same on every database."""
    if get_provider() is None:
        return 0
    heads = head_versions(memory)
    return heads.count() - heads.filter(pk__in=vector_index.missing_versions()).count()


def write_corpus(bench: Workbench, label: str, corpus: dict[str, Any]) -> tuple[Memory, dict]:
    """A new Memory holding every corpus memory, added through ``add_entry``; the Memory and
    the entry pk of each corpus id."""
    memory = bench.memory(label)
    pks: dict[str, int] = {}
    for item in corpus["memories"]:
        result = actions.add_entry(memory, actor=WRITER, body=item["body"], kind=item["kind"])
        pks[item["id"]] = result.entry.pk
    return memory, pks


def ranked_by_search(memory: Memory, query: str, bench: Workbench) -> list[int]:
    hits = search(memory, actor=WRITER, query=query, limit=LIMIT, now=bench.now).hits
    return [h.entry_pk for h in hits]


def ranked_by_vector(memory: Memory, query: str) -> list[int]:
    # As the search reads it (``memory.search.pipeline``): its shorthand spelled out.
    found = vector_channel(
        memory.pk, spelled_out(query), view="current", limit=LIMIT, sensitivities=None
    )
    return [c.entry_pk for c in found]


def scores(ranked: list[int], relevant: set[int]) -> dict[str, float]:
    return {
        "recall_at_5": recall_at_k(ranked, relevant, 5),
        "recall_at_10": recall_at_k(ranked, relevant, 10),
        "mrr": reciprocal_rank(ranked, relevant),
        "ndcg_at_10": ndcg_at_k(ranked, relevant, 10),
    }


def summarize(per_query: list[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {"queries": len(per_query)}
    for metric in ("recall_at_5", "recall_at_10", "mrr", "ndcg_at_10"):
        out[metric] = round(mean([s[metric] for s in per_query]), 4)
    return out


def first_rank(ranked: list[int], relevant: set[int]) -> int | None:
    return next((i for i, pk in enumerate(ranked, start=1) if pk in relevant), None)


def run_configuration(
    queries: list[dict[str, Any]], pks: dict[str, int], rank: Any
) -> tuple[dict[str, Any], list[int | None]]:
    """Every query ranked by ``rank(text)``: the summary per class and per multilingual
    language, and the first relevant rank of each query."""
    by_class: dict[str, list[dict[str, float]]] = {c: [] for c in CLASSES}
    by_language: dict[str, list[dict[str, float]]] = {lang: [] for lang in LANGUAGES}
    firsts: list[int | None] = []
    for q in queries:
        relevant = {pks[r] for r in q["relevant"]}
        ranked = rank(q["text"])
        s = scores(ranked, relevant)
        by_class[q["class"]].append(s)
        if q["class"] == "multilingual":
            by_language[q["lang"]].append(s)
        firsts.append(first_rank(ranked, relevant))
    everything = [s for group in by_class.values() for s in group]
    summary = {
        "by_class": {c: summarize(v) for c, v in by_class.items() if v},
        "by_language": {lang: summarize(v) for lang, v in by_language.items() if v},
        "all": summarize(everything),
    }
    return summary, firsts


def measure(bench: Workbench) -> dict[str, Any]:
    """Write the corpus, run every query under each configuration; the ``recall`` report."""
    corpus = load_corpus()
    queries = selected_queries(corpus, bench.quick)
    results: dict[str, Any] = {}
    firsts: dict[str, list[int | None]] = {}
    with embeddings(None):
        with unstemmed():
            plain, plain_pks = write_corpus(bench, "recall-unstemmed", corpus)
            results["lexical"], firsts["lexical"] = run_configuration(
                queries, plain_pks, lambda text: ranked_by_search(plain, text, bench)
            )
        stemmed, pks = write_corpus(bench, "recall", corpus)
        results["lexical+stemming"], firsts["lexical+stemming"] = run_configuration(
            queries, pks, lambda text: ranked_by_search(stemmed, text, bench)
        )
    skipped = model_unavailable()
    vectors = 0
    if skipped:
        results["vector"] = results["hybrid"] = {"skipped": skipped}
    else:
        with embeddings(model()):
            ensure_memory_vectors(stemmed)
            vectors = heads_with_vectors(stemmed)
            results["vector"], firsts["vector"] = run_configuration(
                queries, pks, lambda text: ranked_by_vector(stemmed, text)
            )
            results["hybrid"], firsts["hybrid"] = run_configuration(
                queries, pks, lambda text: ranked_by_search(stemmed, text, bench)
            )
    return {
        "backend": bench.backend,
        "model": None if skipped else provider_key(model()),
        "other_scripts_model": None if skipped else other_scripts_key(),
        "limit": LIMIT,
        "corpus": {
            "version": corpus["version"],
            "memories": len(corpus["memories"]),
            "queries": len(queries),
            "quick": bench.quick,
        },
        "heads_with_vectors": vectors,
        "configurations": results,
        # The first relevant rank per query and configuration (None: not in the top 10).
        "ranks": [
            {
                "id": q["id"],
                "class": q["class"],
                "lang": q["lang"],
                **{name: firsts[name][i] for name in CONFIGURATIONS if name in firsts},
            }
            for i, q in enumerate(queries)
        ],
    }


def cells(summary: dict[str, Any]) -> str:
    return (
        f"R@5 {summary['recall_at_5']:.3f}  R@10 {summary['recall_at_10']:.3f}  "
        f"MRR {summary['mrr']:.3f}  nDCG@10 {summary['ndcg_at_10']:.3f}"
    )


def table_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        ("backend", report["backend"]),
        ("model", report["model"] or "none"),
        ("model for other scripts", report["other_scripts_model"] or "none"),
        ("memories / queries", f"{report['corpus']['memories']} / {report['corpus']['queries']}"),
    ]
    for name in CONFIGURATIONS:
        result = report["configurations"][name]
        if "skipped" in result:
            rows.append((f"{name}", result["skipped"]))
            continue
        groups = [(c, s) for c, s in result["by_class"].items()]
        groups += [(f"multilingual/{lang}", s) for lang, s in result["by_language"].items()]
        groups.append(("all", result["all"]))
        for group, summary in groups:
            rows.append((f"{name:<16} {group:<16} n={summary['queries']:<3}", cells(summary)))
    return rows


@section("recall", title="Recall@k, MRR, nDCG@10 per query class and channel", order=10)
def run(bench: Workbench) -> SectionResult:
    report = measure(bench)
    return SectionResult(report={"recall": report}, rows=table_rows(report))
