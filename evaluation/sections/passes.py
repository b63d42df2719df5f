"""``passes``: what the maintenance passes find in one Memory per language.

Each language of ``evaluation/passes_corpus.py`` (English, Japanese, Korean, Russian, mixed
Japanese/English) is written into a Memory of its own through ``add_entry`` (``dedupe=false``,
as a bulk import: the add-time check files nothing, so the passes have all the work), half the
note sessions ended as in ``bench/maintenance_eval.py``. Then the near-duplicate, contradiction
and promotion passes run for real on their code path as *dry runs* (nothing is filed or
observed; the run's items say what would be), lexically (no embedding provider) and, when the
all-MiniLM-L6-v2 package is installed, with the model (the heads indexed first; the model reads
Latin script only, so the pairs it cannot read are scored by words, as in production).

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
from memory.models import MaintenanceRun, Memory

from ..passes_corpus import CORPORA, LANGUAGES, Corpus, expected_findings
from ..registry import SectionResult, section
from ..workbench import WRITER, Workbench
from .recall import MINILM, embeddings, ensure_memory_vectors, model_unavailable

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
        with embeddings(MINILM):
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
    return SectionResult(report={"passes": report}, rows=table_rows(report))
