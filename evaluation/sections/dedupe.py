"""``dedupe``: calibrating the near-duplicate thresholds on labelled pairs (issue #15, part 4).

``evaluation/corpora/near_duplicates.json`` holds pairs labelled ``same`` (a restatement of one
fact), ``similar`` (same topic, overlapping words, a different fact) and ``different``. Each
pair is scored by the admission check's own similarity (``memory.dedupe.Similarity``): lexical
Jaccard always, and cosine over the configured packaged model (bge-small-en-v1.5 by default;
``memory.embeddings.packaged_model_path``) when it is installed (a pair the
model cannot read, ``memory.embeddings.model_reads``, is scored lexically there too, as on an
add; ``unread_pairs`` counts them). The
sweep over tau in [0, 1] gives precision and recall of ``score ≥ tau`` for two decisions:

- ``tau_same``: "same" pairs are positive (a ``duplicate_of`` observation should fire);
- ``tau_similar``: "same" or "similar" pairs are positive (``near_duplicate_of`` or above).

For each: the value at the method's default (``memory.dedupe.DEFAULT_THRESHOLDS``), the
threshold of best F1 (the highest such tau), and the lowest threshold whose precision is at
least 0.9 (best recall at that precision). The section reads only; it writes nothing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from memory.dedupe import DEFAULT_THRESHOLDS, Score, round_score, similarity
from memory.embeddings import get_provider, provider_calibration, provider_key

from ..metrics import mean, precision_recall_f1
from ..registry import Figure, SectionResult, section
from ..workbench import Workbench
from .recall import embeddings, model, model_unavailable

PAIRS = Path(__file__).resolve().parent.parent / "corpora" / "near_duplicates.json"
LABELS = ("same", "similar", "different")
#: Each decision: the labels it should accept, and its index in DEFAULT_THRESHOLDS[method].
DECISIONS = {"tau_same": ({"same"}, 0), "tau_similar": ({"same", "similar"}, 1)}
TAUS = [i / 100 for i in range(101)]
MIN_PRECISION = 0.9
QUICK_PER_LABEL = 8


@cache
def load_pairs(path: Path = PAIRS) -> dict[str, Any]:
    """The labelled pair set, as stored (read once per process)."""
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def selected_pairs(pairs: list[dict[str, Any]], quick: bool) -> list[dict[str, Any]]:
    if not quick:
        return list(pairs)
    taken: dict[str, int] = defaultdict(int)
    out = []
    for p in pairs:
        if taken[p["label"]] < QUICK_PER_LABEL:
            taken[p["label"]] += 1
            out.append(p)
    return out


def score_pairs(pairs: list[dict[str, Any]]) -> tuple[str, list[Score]]:
    """The configured similarity method's name and the score of each pair (with the method
    that gave it), computed as the admission check computes them (one call per distinct first
    text, like one add)."""
    sim = similarity()
    by_first: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by_first[p["a"]].append(i)
    scores = [Score(sim.method, 0.0)] * len(pairs)
    for first, indexes in by_first.items():
        found = sim.scores(first, [pairs[i]["b"] for i in indexes])
        for i, s in zip(indexes, found, strict=True):
            scores[i] = Score(s.method, round_score(s.value))
    return sim.method, scores


def point(scores: list[float], positive: list[bool], tau: float) -> dict[str, float]:
    p, r, f1 = precision_recall_f1(scores, positive, tau)
    return {"tau": tau, "precision": round(p, 4), "recall": round(r, 4), "f1": round(f1, 4)}


def method_defaults(method: str) -> tuple[float, float]:
    """``(tau_same, tau_similar)`` by default for ``method``: the measured model's own for
    cosine (``memory.embeddings.Calibration``), else the method's."""
    if method == "cosine" and not model_unavailable():
        cal = provider_calibration(model())
        return cal.tau_same, cal.tau_similar
    return DEFAULT_THRESHOLDS[method]


def calibrate(scores: list[float], labels: list[str], method: str) -> dict[str, Any]:
    """The sweep of both decisions over ``TAUS``, and the point at ``method``'s defaults."""
    out: dict[str, Any] = {}
    for decision, (positives, index) in DECISIONS.items():
        default = method_defaults(method)[index]
        positive = [label in positives for label in labels]
        curve = [point(scores, positive, tau) for tau in TAUS]
        # Highest tau among the best F1: the most conservative of equally good thresholds.
        best = max(curve, key=lambda c: (c["f1"], c["tau"]))
        precise = [c for c in curve if c["precision"] >= MIN_PRECISION and c["recall"] > 0]
        out[decision] = {
            "default": point(scores, positive, default),
            "best_f1": best,
            f"precision_at_least_{MIN_PRECISION}": (
                max(precise, key=lambda c: (c["recall"], c["tau"])) if precise else None
            ),
            "curve": curve,
        }
    out["score_by_label"] = {
        label: {
            "mean": round(
                mean([s for s, lab in zip(scores, labels, strict=True) if lab == label]), 4
            ),
            "min": min(s for s, lab in zip(scores, labels, strict=True) if lab == label),
            "max": max(s for s, lab in zip(scores, labels, strict=True) if lab == label),
        }
        for label in LABELS
        if label in labels
    }
    return out


def by_method(
    pairs: list[dict[str, Any]], evaluate: Callable[[str, list[Score]], dict[str, Any]]
) -> dict[str, Any]:
    """``evaluate(method, scores)`` of ``pairs`` scored lexically, then with the packaged model
    (the model's key first), by method; without the model's package, why it was skipped."""
    methods: dict[str, Any] = {}
    with embeddings(None):
        method, scores = score_pairs(pairs)
        methods[method] = evaluate(method, scores)
    skipped = model_unavailable()
    if skipped:
        methods["cosine"] = {"skipped": skipped}
    else:
        with embeddings(model()):
            method, scores = score_pairs(pairs)
            methods[method] = {"model": provider_key(model()), **evaluate(method, scores)}
    return methods


def measure(bench: Workbench) -> dict[str, Any]:
    pairs = selected_pairs(load_pairs()["pairs"], bench.quick)
    labels = [p["label"] for p in pairs]
    configured = similarity().method

    def evaluate(method: str, scored: list[Score]) -> dict[str, Any]:
        scores = [s.value for s in scored]
        out: dict[str, Any] = {"scores": scores}
        if method != "lexical":  # the lexical similarity reads every pair, the model may not
            out["unread_pairs"] = sum(1 for s in scored if s.method != method)
        return {**out, **calibrate(scores, labels, method)}

    methods = by_method(pairs, evaluate)
    provider = get_provider()
    return {
        "pairs": len(pairs),
        "by_label": {label: labels.count(label) for label in LABELS},
        "configured_method": configured,
        "configured_provider": provider.key if provider is not None else None,
        "defaults": {
            m: {"tau_same": same, "tau_similar": similar}
            for m, (same, similar) in ((m, method_defaults(m)) for m in DEFAULT_THRESHOLDS)
        },
        "min_precision": MIN_PRECISION,
        "methods": methods,
    }


def describe(c: dict[str, float] | None) -> str:
    if c is None:
        return "none"
    return f"tau {c['tau']:.2f}: P {c['precision']:.3f}  R {c['recall']:.3f}  F1 {c['f1']:.3f}"


def table_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    counts = report["by_label"]
    rows: list[tuple[str, Any]] = [
        (
            "pairs same / similar / different",
            f"{counts['same']} / {counts['similar']} / {counts['different']}",
        ),
        ("configured method", report["configured_method"]),
    ]
    for method, result in report["methods"].items():
        if "skipped" in result:
            rows.append((method, result["skipped"]))
            continue
        if result.get("unread_pairs"):
            rows.append((f"{method:<8} unread pairs", f"{result['unread_pairs']} scored lexically"))
        means = result["score_by_label"]
        rows.append(
            (
                f"{method:<8} mean score same / similar / different",
                " / ".join(f"{means[label]['mean']:.3f}" for label in LABELS if label in means),
            )
        )
        for decision in DECISIONS:
            d = result[decision]
            rows.append((f"{method:<8} {decision:<11} at default", describe(d["default"])))
            rows.append((f"{method:<8} {decision:<11} best F1", describe(d["best_f1"])))
            rows.append(
                (
                    f"{method:<8} {decision:<11} P≥{MIN_PRECISION} best recall",
                    describe(d[f"precision_at_least_{MIN_PRECISION}"]),
                )
            )
    return rows


Series = dict[str, list[tuple[float, float]]]


def precision_recall_figures(
    report: dict[str, Any], title: str, x_label: str, series: Callable[[dict[str, Any]], Series]
) -> list[Figure]:
    """One figure of precision and recall per method that ran: ``series`` of its result."""
    return [
        Figure(
            title=f"{title}, {method} ({report['pairs']} pairs)",
            x_label=x_label,
            y_label="precision / recall",
            series=series(result),
        )
        for method, result in report["methods"].items()
        if "skipped" not in result
    ]


def curves(result: dict[str, Any]) -> Series:
    """Precision and recall of each decision over tau."""
    series = {}
    for decision in DECISIONS:
        curve = result[decision]["curve"]
        series[f"{decision} precision"] = [(c["tau"], c["precision"]) for c in curve]
        series[f"{decision} recall"] = [(c["tau"], c["recall"]) for c in curve]
    return series


def figures(report: dict[str, Any]) -> list[Figure]:
    return precision_recall_figures(
        report, "Near-duplicate thresholds", "tau (score ≥ tau)", curves
    )


@section("dedupe", title="Near-duplicate threshold calibration (tau_same, tau_similar)", order=15)
def run(bench: Workbench) -> SectionResult:
    report = measure(bench)
    return SectionResult(
        report={"dedupe": report}, rows=table_rows(report), figures=figures(report)
    )
