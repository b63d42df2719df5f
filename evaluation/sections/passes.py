"""``passes``: what the maintenance passes find in one Memory per language.

Each language of ``evaluation/passes_corpus.py`` (English, Japanese, Korean, Russian, mixed
Japanese/English) is written into a Memory of its own through ``add_entry`` (``dedupe=false``,
as a bulk import: the add-time check files nothing, so the passes have all the work), half the
note sessions ended as in ``bench/maintenance_eval.py``. Then the near-duplicate, contradiction
and promotion passes run for real on their code path as *dry runs* (nothing is filed or
observed; the run's items say what would be), lexically (no embedding provider) and, when the
packaged model (bge-small-en-v1.5 by default) is installed, with the model (the heads indexed
first; the model reads Latin script only, so the pairs it cannot read are scored by words,
as in production).

Scored per language and similarity:

- ``near_duplicates``: pairs inside each would-be consolidation against the pairs inside each
  labelled duplicate group (precision / recall); a merge touching a ``not_duplicates`` pair or
  a contradiction is a false pair.
- ``contradictions``: the would-be ``conflicts_with`` pairs against the labelled
  contradictions; ``false_conflicts`` counts pairs touching a control fact.
- ``promotion``: pairs inside each would-be promotion against the labelled themes;
  ``single_session`` counts would-be promotions touching a one-session note (must be 0).
- ``findings``: the labelled findings found whole (a group clustered with all its members, a
  contradiction observed, a theme promoted with all its notes) of ``expected``.
"""

from __future__ import annotations

import itertools
from typing import Any

from memory import actions, maintenance
from memory.dedupe import Score
from memory.models import MaintenanceRun, Memory
from proposals import bodies, verify
from proposals.passes.near_duplicates import pair_edge, rules

from .. import proposal_pairs_corpus as labelled
from ..passes_corpus import CORPORA, LANGUAGES, Corpus, expected_findings
from ..registry import SectionResult, section
from ..workbench import WRITER, Workbench
from .dedupe import by_method
from .recall import embeddings, ensure_memory_vectors, model, model_unavailable

Pair = frozenset[str]
JOBS = ("near_duplicates", "contradictions", "promotion")


def pairs_of(groups: list[list[str]]) -> set[Pair]:
    return {frozenset(p) for g in groups for p in itertools.combinations(sorted(set(g)), 2)}


def pr(predicted: set[Pair], truth: set[Pair]) -> dict[str, Any]:
    tp = len(predicted & truth)
    return {
        "predicted": len(predicted),
        "labelled": len(truth),
        "true_positives": tp,
        "precision": round(tp / len(predicted), 4) if predicted else 1.0,
        "recall": round(tp / len(truth), 4) if truth else 1.0,
    }


def write(bench: Workbench, lang: str, corpus: Corpus) -> tuple[Memory, dict[str, Any]]:
    """A Memory holding ``corpus``, and the entry ids of each labelled item."""
    memory = bench.memory(f"passes-{lang}")

    def add(body: str, **extra: Any) -> str:
        return actions.add_entry(memory, actor=WRITER, body=body, dedupe=False, **extra).entry.uid

    labels: dict[str, Any] = {
        "duplicates": [[add(b, kind="fact") for b in g] for g in corpus["duplicates"]],
        "not_duplicates": [[add(b, kind="fact") for b in p] for p in corpus["not_duplicates"]],
        "contradictions": [
            [add(b, kind="fact", current_state=True) for b in p] for p in corpus["contradictions"]
        ],
        "controls": [add(b, kind="fact", current_state=True) for b in corpus["controls"]],
        "themes": [
            [add(b, kind="working_note", tier="session", session_id=s) for s, b in t]
            for t in corpus["themes"]
        ],
        "singles": [
            [add(b, kind="working_note", tier="session", session_id=s) for s, b in t]
            for t in corpus["singles"]
        ],
    }
    for b in corpus["distractors"]:
        add(b, kind="fact")
    for session in sorted({s for t in corpus["themes"] for s, _ in t})[::2]:
        actions.end_session(memory, actor=WRITER, session_id=session)
    return memory, labels


def found(run: MaintenanceRun, reason: str) -> list[list[str]]:
    """The entry sets of the run's items with ``reason`` that would be (or were) acted on."""
    return [
        list(item["entries"])
        for item in run.items
        if item.get("reason") == reason and item.get("action") != "skipped_single_session"
    ]


def score(memory: Memory, labels: dict[str, Any], corpus: Corpus) -> dict[str, Any]:
    runs = {job: maintenance.run_job(memory, actor=WRITER, job=job, dry_run=True) for job in JOBS}
    clusters = found(runs["near_duplicates"], "near_duplicate_cluster")
    conflicts = found(runs["contradictions"], "different_values")
    themes = found(runs["promotion"], "recurring_theme")
    controls = set(labels["controls"])
    singles = {u for t in labels["singles"] for u in t}
    predicted = {
        "near_duplicates": pairs_of(clusters),
        "contradictions": {frozenset(c) for c in conflicts},
        "promotion": pairs_of(themes),
    }
    truth = {
        "near_duplicates": pairs_of(labels["duplicates"]),
        "contradictions": {frozenset(c) for c in labels["contradictions"]},
        "promotion": pairs_of(labels["themes"]),
    }
    whole = (
        sum(1 for g in labels["duplicates"] if any(set(g) <= set(c) for c in clusters))
        + sum(1 for c in labels["contradictions"] if frozenset(c) in predicted["contradictions"])
        + sum(1 for t in labels["themes"] if any(set(t) <= set(x) for x in themes))
    )
    wrong = sum(
        len(predicted[job] - truth[job]) for job in ("near_duplicates", "contradictions")
    ) + sum(1 for x in themes if not any(set(x) <= set(t) for t in labels["themes"]))
    return {
        "near_duplicates": pr(predicted["near_duplicates"], truth["near_duplicates"]),
        "contradictions": {
            **pr(predicted["contradictions"], truth["contradictions"]),
            "false_conflicts": sum(1 for p in predicted["contradictions"] if p & controls),
        },
        "promotion": {
            **pr(predicted["promotion"], truth["promotion"]),
            "single_session": sum(1 for x in themes if set(x) & singles),
        },
        "findings": {"found": whole, "expected": expected_findings(corpus), "wrong": wrong},
        "lexical_queries": {job: runs[job].counts.get("lexical_queries", 0) for job in JOBS},
    }


# --- Labelled pairs: wrong merges and what verification names -------------------------------


def verification_flags(pair: labelled.Pair) -> dict[str, Any]:
    """What verification names for the change the pair stands for: ``a`` replaced by ``b`` (a
    supersession or an agent's consolidation: its lost details and clauses, and ``b``'s own
    conflicts), and the two merged as the near-duplicate pass merges (``bodies.merged_body``:
    the lost details and the glued conflicts of the merge)."""
    replaced = verify.lost_details([("a", pair.a)], pair.b)
    replaced_conflicts = bodies.glued_conflicts(pair.b, [pair.a])
    merged = bodies.merged_body([pair.a, pair.b])
    merged_lost = verify.lost_details([("a", pair.a), ("b", pair.b)], merged)
    merged_conflicts = bodies.glued_conflicts(merged, [pair.a, pair.b])
    return {
        "replaced": [f"{d.kind}: {d.text}" for d in replaced]
        + [f"conflict: {c.text}" for c in replaced_conflicts],
        "merged": [f"{d.kind}: {d.text}" for d in merged_lost]
        + [f"conflict: {c.text}" for c in merged_conflicts],
    }


def verification_verdict(pair: labelled.Pair, flags: dict[str, Any]) -> bool:
    """Whether verification flagged the change the label is about: a dropped clause when ``a``
    is replaced by ``b``, a contradiction when the two are merged; a restatement is flagged
    (a false alarm) by either."""
    if pair.label == labelled.DROPPED_CLAUSE:
        return bool(flags["replaced"])
    if pair.label == labelled.CONTRADICTION:
        return bool(flags["merged"])
    return bool(flags["replaced"] or flags["merged"])


def rate(hits: int, of: int) -> dict[str, Any]:
    return {"flagged": hits, "pairs": of, "rate": round(hits / of, 4) if of else 0.0}


def judge_labelled(method: str, scores: list[Score], pairs: list[labelled.Pair]) -> dict[str, Any]:
    """The near-duplicate pass's rule (``pair_edge`` at the defaults of the method that scored
    each pair) on the labelled pairs: precision against the non-restatements (any filed
    consolidation of one is a wrong merge), recall on the restatements, per language."""
    by = rules(Memory(policy={}), method)
    filed: list[bool] = []
    refusals: dict[str, int] = {}
    for p, sc in zip(pairs, scores, strict=True):
        rule = by[sc.method]
        reason, _ = pair_edge(
            p.a, p.b, sc.value, threshold=rule.threshold, min_subject=rule.min_subject
        )
        filed.append(reason is None)
        if p.label != labelled.RESTATEMENT:
            refusals[reason or "filed"] = refusals.get(reason or "filed", 0) + 1

    def score_of(keep: Any) -> dict[str, Any]:
        chosen = [(f, p) for f, p in zip(filed, pairs, strict=True) if keep(p)]
        tp = sum(1 for f, p in chosen if f and p.label == labelled.RESTATEMENT)
        fp = sum(1 for f, p in chosen if f and p.label != labelled.RESTATEMENT)
        positives = sum(1 for _, p in chosen if p.label == labelled.RESTATEMENT)
        return {
            "pairs": len(chosen),
            "filed": tp + fp,
            "wrong_merges": fp,
            "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
            "recall": round(tp / positives, 4) if positives else 1.0,
        }

    return {
        "all": score_of(lambda p: True),
        "by_language": {
            lang: score_of(lambda p, lg=lang: p.lang == lg) for lang in labelled.LANGUAGES
        },
        "non_restatements_by_reason": refusals,
        "wrong_merges": [
            p.id for f, p in zip(filed, pairs, strict=True) if f and p.label != labelled.RESTATEMENT
        ],
        "missed_restatements": [
            p.id
            for f, p in zip(filed, pairs, strict=True)
            if not f and p.label == labelled.RESTATEMENT
        ],
    }


def measure_labelled() -> dict[str, Any]:
    pairs = labelled.PAIRS
    flags = [verification_flags(p) for p in pairs]
    flagged = [verification_verdict(p, f) for p, f in zip(pairs, flags, strict=True)]

    def verification_of(keep: Any) -> dict[str, Any]:
        chosen = [(x, p) for x, p in zip(flagged, pairs, strict=True) if keep(p)]
        losing = [
            x for x, p in chosen if p.label in (labelled.CONTRADICTION, labelled.DROPPED_CLAUSE)
        ]
        restating = [x for x, p in chosen if p.label == labelled.RESTATEMENT]
        return {
            "names_loss_or_conflict": rate(sum(losing), len(losing)),
            "false_alarms_on_restatements": rate(sum(restating), len(restating)),
            **{
                label: rate(
                    sum(x for x, p in chosen if p.label == label),
                    sum(1 for _, p in chosen if p.label == label),
                )
                for label in (labelled.CONTRADICTION, labelled.DROPPED_CLAUSE)
            },
        }

    methods = by_method(
        [p._asdict() for p in pairs], lambda method, scores: judge_labelled(method, scores, pairs)
    )
    return {
        "pairs": len(pairs),
        "by_label": {label: sum(1 for p in pairs if p.label == label) for label in labelled.LABELS},
        "by_language": {
            lang: sum(1 for p in pairs if p.lang == lang) for lang in labelled.LANGUAGES
        },
        "near_duplicate_pass": methods,
        "verification": {
            "all": verification_of(lambda p: True),
            "by_language": {
                lang: verification_of(lambda p, lg=lang: p.lang == lg)
                for lang in labelled.LANGUAGES
            },
            "missed": [
                p.id
                for x, p in zip(flagged, pairs, strict=True)
                if not x and p.label in (labelled.CONTRADICTION, labelled.DROPPED_CLAUSE)
            ],
            "false_alarms": {
                p.id: f
                for x, p, f in zip(flagged, pairs, flags, strict=True)
                if x and p.label == labelled.RESTATEMENT
            },
        },
    }


def labelled_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        (
            "labelled pairs",
            f"{report['pairs']}: "
            + " / ".join(f"{k} {v}" for k, v in report["by_label"].items())
            + "; "
            + " / ".join(f"{k} {v}" for k, v in report["by_language"].items()),
        )
    ]
    for method, r in report["near_duplicate_pass"].items():
        if "skipped" in r:
            rows.append((f"pairs {method}", r["skipped"]))
            continue
        for name, c in [("all", r["all"]), *r["by_language"].items()]:
            rows.append(
                (
                    f"pairs {method:<7} near_duplicates {name}",
                    f"P {c['precision']:.3f} R {c['recall']:.3f} "
                    f"({c['filed']} filed, {c['wrong_merges']} wrong merges, {c['pairs']} pairs)",
                )
            )
    v = report["verification"]
    for name, c in [("all", v["all"]), *v["by_language"].items()]:
        n, f = c["names_loss_or_conflict"], c["false_alarms_on_restatements"]
        rows.append(
            (
                f"pairs verification {name}",
                f"names loss or conflict {n['rate']:.3f} ({n['flagged']}/{n['pairs']}); "
                f"false alarms on restatements {f['rate']:.3f} ({f['flagged']}/{f['pairs']})",
            )
        )
    return rows


def measure(bench: Workbench) -> dict[str, Any]:
    written = {}
    with embeddings(None):
        for lang in LANGUAGES:
            written[lang] = write(bench, lang, CORPORA[lang])
        methods: dict[str, Any] = {
            "lexical": {lang: score(m, lab, CORPORA[lang]) for lang, (m, lab) in written.items()}
        }
    skipped = "skipped: --quick" if bench.quick else model_unavailable()
    if skipped:
        methods["model"] = {"skipped": skipped}
    else:
        with embeddings(model()):
            for memory, _ in written.values():
                ensure_memory_vectors(memory)
            methods["model"] = {
                lang: score(m, lab, CORPORA[lang]) for lang, (m, lab) in written.items()
            }
    return {"languages": list(LANGUAGES), "methods": methods}


def table_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for method, by_lang in report["methods"].items():
        if "skipped" in by_lang:
            rows.append((method, by_lang["skipped"]))
            continue
        for lang, r in by_lang.items():
            name = f"{method:<7} {lang:<5}"
            f = r["findings"]
            rows.append(
                (f"{name} findings", f"{f['found']} of {f['expected']}, wrong {f['wrong']}")
            )
            for job in JOBS:
                c = r[job]
                extra = ""
                if job == "contradictions":
                    extra = f", false conflicts on controls {c['false_conflicts']}"
                if job == "promotion":
                    extra = f", one-session {c['single_session']}"
                rows.append(
                    (
                        f"{name} {job}",
                        f"P {c['precision']:.3f} R {c['recall']:.3f} "
                        f"({c['true_positives']}/{c['labelled']} pairs, {c['predicted']} "
                        f"predicted{extra})",
                    )
                )
    return rows


@section(
    "passes",
    title="Maintenance passes per language: duplicates, contradictions, recurring notes",
    order=17,
)
def run(bench: Workbench) -> SectionResult:
    report = measure(bench)
    pairs = measure_labelled()
    return SectionResult(
        report={"passes": report, "passes_labelled_pairs": pairs},
        rows=table_rows(report) + labelled_rows(pairs),
    )
