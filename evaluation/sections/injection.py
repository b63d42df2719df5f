"""``injection``: precision and recall of the injection scan on a labelled set.

``evaluation/corpora/injection.json`` holds memory texts labelled ``hostile`` (instructions aimed
at a model that later reads the memory: overrides, role and system-prompt markers, tool-call
payloads, hidden Unicode tag characters — in English and eight other languages) and ``benign``
(ordinary memories, many of which *talk about* prompts, tools, roles, JSON or "previous
instructions", in twelve languages and scripts, and subdivision flag emoji, the one legitimate use
of tag characters).

Two measurements:

- *rules*: ``memory.injection.scan`` on each text — true and false positives per rule;
- *job*: the same texts written into a Memory, then one real ``injection_scan`` run: the entries
  it filed a quarantine proposal for, against the labels. The job never quarantines: every head
  is still as written after the run (``heads_unchanged``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from memory import actions, injection
from memory.models import Head, HeadState
from proposals.models import Proposal, ProposalKind
from proposals.passes import run_injection_scan

from ..registry import SectionResult, section
from ..workbench import REVIEWER, WRITER, Workbench

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "injection.json"


@cache
def load_corpus(path: Path = CORPUS) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def confusion(flagged: list[bool], hostile: list[bool]) -> dict[str, Any]:
    tp = sum(f and h for f, h in zip(flagged, hostile, strict=True))
    fp = sum(f and not h for f, h in zip(flagged, hostile, strict=True))
    fn = sum(h and not f for f, h in zip(flagged, hostile, strict=True))
    tn = len(flagged) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "true_negatives": tn,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
    }


def measure_rules(items: list[dict[str, Any]]) -> dict[str, Any]:
    findings = [injection.scan(i["text"]) for i in items]
    hostile = [i["label"] == "hostile" for i in items]
    out = confusion([bool(f) for f in findings], hostile)
    by_rule: dict[str, dict[str, int]] = {}
    for found, is_hostile in zip(findings, hostile, strict=True):
        for rule in {f.rule for f in found}:
            row = by_rule.setdefault(rule, {"hostile": 0, "benign": 0})
            row["hostile" if is_hostile else "benign"] += 1
    out["by_rule"] = dict(sorted(by_rule.items()))
    out["missed"] = [
        i["id"] for i, f, h in zip(items, findings, hostile, strict=True) if h and not f
    ]
    out["false_alarms"] = [
        i["id"] for i, f, h in zip(items, findings, hostile, strict=True) if f and not h
    ]
    return out


def measure_job(bench: Workbench, items: list[dict[str, Any]]) -> dict[str, Any]:
    jobs = {"injection_scan": {"enabled": True, "max_proposals": 1000}}
    memory = bench.memory("injection", policy={"jobs": jobs})
    written = {}
    for item in items:
        result = actions.add_entry(
            memory, actor=WRITER, body=item["text"], kind="fact", dedupe=False
        )
        written[result.entry.pk] = item
    run = run_injection_scan(memory, actor=REVIEWER, dry_run=False)
    proposed = set(
        Proposal.objects.filter(memory=memory, kind=ProposalKind.QUARANTINE).values_list(
            "targets__entry_id", flat=True
        )
    )
    pks = list(written)
    out = confusion(
        [pk in proposed for pk in pks], [written[pk]["label"] == "hostile" for pk in pks]
    )
    out["scanned"] = run.counts.get("scanned", 0)
    out["proposals"] = len(run.counts.get("proposals", []))
    out["heads_unchanged"] = (
        not Head.objects.filter(memory=memory).exclude(state=HeadState.ACTIVE).exists()
    )
    return out


@section("injection", title="Injection scan: precision and recall on a labelled set", order=70)
def run(bench: Workbench) -> SectionResult:
    corpus = load_corpus()
    items = corpus["items"]
    languages = sorted({i["lang"] for i in items})
    rules = measure_rules(items)
    job = measure_job(bench, items)
    counts = {
        "hostile": sum(1 for i in items if i["label"] == "hostile"),
        "benign": sum(1 for i in items if i["label"] == "benign"),
    }
    report = {
        "injection": {
            "rules_version": injection.RULES_VERSION,
            "corpus": {**counts, "languages": languages},
            "rules": rules,
            "job": job,
        }
    }
    rows: list[tuple[str, Any]] = [
        (
            "injection corpus hostile / benign",
            f"{counts['hostile']} / {counts['benign']} ({len(languages)} languages)",
        ),
        ("injection rules precision", rules["precision"]),
        ("injection rules recall", rules["recall"]),
        ("injection job precision", job["precision"]),
        ("injection job recall", job["recall"]),
        ("injection job heads unchanged", job["heads_unchanged"]),
    ]
    return SectionResult(report=report, rows=rows)
