"""``near_duplicates``: the near-duplicate pass's pair rule on labelled pairs of agent memories.

``evaluation/restatement_corpus.py`` holds pairs labelled ``restatement`` (the only positive:
one fact in other words), ``different_value``, ``different_fact`` and ``unrelated``. Each pair
is scored by the similarity the pass uses (``memory.dedupe.Similarity``: lexical Jaccard
always, and cosine over the packaged model (bge-small-en-v1.5 by default) when installed —
for the pairs the model reads; the others lexically, as in the pass), then judged by the
pass's own rule,
``proposals.passes.near_duplicates.pair_edge``, at the pass's default parameters for the
similarity that scored the pair (``rules`` of a Memory with an empty policy). The sweep moves
the threshold of the section's method only; ``unread_pairs`` counts the pairs the model cannot
read, judged by the lexical rule.
With embeddings the pass also asks a pair below ``COSINE_NEAREST_BELOW`` to be mutually
nearest among the entries of a Memory; a pair alone always is, so that condition is measured
in context by ``bench/maintenance_eval.py``, not here.

Reported per similarity: precision, recall and F1 over all pairs, per half of the corpus
(``calibration``, on which the defaults were chosen, and ``held_out``) and per language; per
label the share of pairs the rule pairs (recall for ``restatement``, the false-pairing rate
for the others); and the sweep of the rule's threshold (the other checks unchanged) on both
halves. The section reads only; it writes nothing and touches no database.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evaluation.restatement_corpus import LABELS, PAIRS, RESTATEMENT, SPLITS, Pair, split
from memory.dedupe import Score
from memory.models import Memory
from proposals.passes.near_duplicates import Rule, pair_edge, rules

from ..registry import Figure, SectionResult, section
from ..workbench import Workbench
from .dedupe import Series, by_method, precision_recall_figures

#: The thresholds of the sweep: 0.30, 0.31, …, 0.95 (the table prints every 0.05 and the
#: default; the JSON report has them all).
SWEEP = [round(0.3 + i * 0.01, 2) for i in range(66)]
#: The precision the calibrated threshold must keep on the calibration half.
MIN_PRECISION = 0.9
QUICK_PER_GROUP = 2


def selected_pairs(quick: bool) -> list[Pair]:
    """Every pair, or with ``quick`` the first two of each language and label."""
    if not quick:
        return list(PAIRS)
    taken: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for p in PAIRS:
        if taken[(p.lang, p.label)] < QUICK_PER_GROUP:
            taken[(p.lang, p.label)] += 1
            out.append(p)
    return out


def prf(paired: list[bool], pairs: list[Pair]) -> dict[str, Any]:
    """Precision, recall and F1 of ``paired`` against the ``restatement`` label."""
    tp = sum(1 for x, p in zip(paired, pairs, strict=True) if x and p.label == RESTATEMENT)
    fp = sum(1 for x, p in zip(paired, pairs, strict=True) if x and p.label != RESTATEMENT)
    fn = sum(1 for x, p in zip(paired, pairs, strict=True) if not x and p.label == RESTATEMENT)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "pairs": len(pairs),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
    }


def judge(
    pairs: list[Pair],
    scores: list[Score],
    by_method: dict[str, Rule],
    swept: tuple[str, float] | None = None,
) -> list[bool]:
    """The pass's verdict on each pair: an edge or not, by the rule of the method that scored
    it; ``swept`` = (method, threshold) replaces that method's threshold."""
    out = []
    for p, s in zip(pairs, scores, strict=True):
        rule = by_method[s.method]
        threshold = swept[1] if swept and swept[0] == s.method else rule.threshold
        edge = pair_edge(p.a, p.b, s.value, threshold=threshold, min_subject=rule.min_subject)
        out.append(edge[0] is None)
    return out


def subset(pairs: list[Pair], paired: list[bool], keep: Any) -> tuple[list[bool], list[Pair]]:
    chosen = [(x, p) for x, p in zip(paired, pairs, strict=True) if keep(p)]
    return [x for x, _ in chosen], [p for _, p in chosen]


def by_half(pairs: list[Pair], paired: list[bool]) -> dict[str, Any]:
    return {half: prf(*subset(pairs, paired, lambda p, h=half: split(p) == h)) for half in SPLITS}


def evaluate_method(pairs: list[Pair], method: str, scores: list[Score]) -> dict[str, Any]:
    by_method = rules(Memory(policy={}), method)
    threshold, min_subject, nearest_below = by_method[method]
    paired = judge(pairs, scores, by_method)
    languages = sorted({p.lang for p in pairs}, key=lambda lang: (lang != "en", lang))
    by_label = {}
    for label in LABELS:
        got, of = subset(pairs, paired, lambda p, lab=label: p.label == lab)
        if of:
            by_label[label] = {
                "pairs": len(of),
                "paired": sum(got),
                "paired_rate": round(sum(got) / len(of), 4),
            }
    sweep = []
    for tau in SWEEP:
        at = judge(pairs, scores, by_method, (method, tau))
        sweep.append({"threshold": tau, **by_half(pairs, at), "all": prf(at, pairs)})
    precise = [s for s in sweep if s["calibration"]["precision"] >= MIN_PRECISION]
    calibrated = (
        max(precise, key=lambda s: (s["calibration"]["f1"], s["threshold"])) if precise else None
    )
    return {
        "threshold": threshold,
        "min_subject": min_subject,
        "nearest_below": nearest_below,
        "unread_pairs": sum(1 for s in scores if s.method != method),
        "scores": [s.value for s in scores],
        "paired": paired,
        "all": prf(paired, pairs),
        "by_split": by_half(pairs, paired),
        "by_language": {
            lang: prf(*subset(pairs, paired, lambda p, lg=lang: p.lang == lg)) for lang in languages
        },
        "by_label": by_label,
        "sweep": sweep,
        "best_on_calibration": calibrated,
    }


def measure(bench: Workbench) -> dict[str, Any]:
    pairs = selected_pairs(bench.quick)
    methods = by_method(
        [p._asdict() for p in pairs],
        lambda method, scores: evaluate_method(pairs, method, scores),
    )
    return {
        "pairs": len(pairs),
        "ids": [p.id for p in pairs],
        "by_label": {label: sum(1 for p in pairs if p.label == label) for label in LABELS},
        "by_split": {half: sum(1 for p in pairs if split(p) == half) for half in SPLITS},
        "min_precision": MIN_PRECISION,
        "methods": methods,
    }


def describe(c: dict[str, Any]) -> str:
    return (
        f"P {c['precision']:.3f}  R {c['recall']:.3f}  F1 {c['f1']:.3f}  "
        f"(TP {c['true_positives']} FP {c['false_positives']} FN {c['false_negatives']})"
    )


def table_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    counts, halves = report["by_label"], report["by_split"]
    rows: list[tuple[str, Any]] = [
        ("pairs", report["pairs"]),
        ("pairs per label", " / ".join(f"{k} {v}" for k, v in counts.items())),
        ("pairs calibration / held out", f"{halves['calibration']} / {halves['held_out']}"),
    ]
    for method, r in report["methods"].items():
        if "skipped" in r:
            rows.append((method, r["skipped"]))
            continue
        name = f"{method:<7}"
        nearest = r["nearest_below"]
        rows.append(
            (
                f"{name} rule",
                f"threshold {r['threshold']}, min_subject {r['min_subject']}"
                + (
                    f"; mutually nearest below {nearest} (a Memory's, not a pair's)"
                    if nearest
                    else ""
                ),
            )
        )
        if r["unread_pairs"]:
            rows.append(
                (f"{name} unread pairs", f"{r['unread_pairs']} scored and judged lexically")
            )
        rows.append((f"{name} all", describe(r["all"])))
        for half, c in r["by_split"].items():
            rows.append((f"{name} {half}", describe(c)))
        for lang, c in r["by_language"].items():
            rows.append((f"{name} language {lang}", describe(c)))
        for label, c in r["by_label"].items():
            rows.append(
                (
                    f"{name} label {label}",
                    f"{c['paired']} of {c['pairs']} paired ({c['paired_rate']:.3f})",
                )
            )
        for s in r["sweep"]:
            if round(s["threshold"] * 100) % 5 and s["threshold"] != r["threshold"]:
                continue
            cal, held = s["calibration"], s["held_out"]
            rows.append(
                (
                    f"{name} sweep threshold {s['threshold']:.2f}",
                    f"calibration P {cal['precision']:.3f} R {cal['recall']:.3f} "
                    f"F1 {cal['f1']:.3f} | held out P {held['precision']:.3f} "
                    f"R {held['recall']:.3f} F1 {held['f1']:.3f}",
                )
            )
        best = r["best_on_calibration"]
        rows.append(
            (
                f"{name} best F1 on calibration, P≥{MIN_PRECISION}",
                "none"
                if best is None
                else f"threshold {best['threshold']:.2f}: held out {describe(best['held_out'])}",
            )
        )
    return rows


def sweeps(r: dict[str, Any]) -> Series:
    """Precision and recall on each half of the corpus over the swept threshold."""
    series = {}
    for half in SPLITS:
        series[f"{half} precision"] = [(s["threshold"], s[half]["precision"]) for s in r["sweep"]]
        series[f"{half} recall"] = [(s["threshold"], s[half]["recall"]) for s in r["sweep"]]
    return series


def figures(report: dict[str, Any]) -> list[Figure]:
    return precision_recall_figures(
        report, "Near-duplicate pass rule", "threshold (other checks unchanged)", sweeps
    )


@section(
    "near_duplicates",
    title="Near-duplicate pass: restatements against same-subject pairs",
    order=16,
)
def run(bench: Workbench) -> SectionResult:
    report = measure(bench)
    return SectionResult(
        report={"near_duplicates": report}, rows=table_rows(report), figures=figures(report)
    )
