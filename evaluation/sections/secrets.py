"""``secrets``: precision and recall of the stored-text scan on a labelled set.

The corpus is ``evaluation.secrets_corpus``: credentials of 45 token types, plain, disguised
(Unicode separators, marks, look-alikes, invisibles, fullwidth) and encoded (base64, hex,
percent-encoding, HTML references); national ids and cards of the US and the EU in many
groupings and scripts, and email addresses and phone numbers for a Memory that refuses them;
and ordinary technical memories as controls. Every other corpus of the project (recall,
near-duplicates, injection: 454 memories in a dozen languages) is added to the controls — none
of them holds a secret or a refused number.

Two measurements:

- *rules*: ``memory.admission.find_secrets`` and the personal-data finders on each text, what
  the admission of any stored field runs;
- *writes*: each text written as an entry body through ``memory.actions.add_entry`` into a
  Memory with the item's policy — refused (422) or stored — and the stored rows of the controls
  counted (none of them may be refused).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from memory import actions
from memory.admission import find_secrets, personal_data_form
from memory.exceptions import PersonalDataDetected, SecretDetected
from memory.personal_data import DEFAULT_REFUSED, KINDS, find_personal_data

from ..registry import SectionResult, section
from ..secrets_corpus import CONTROL, PERSONAL, SECRET, Item, items
from ..workbench import WRITER, Workbench
from .injection import confusion

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
POLICIES = {"default": None, "email_phone": {"personal_data": {"refuse": list(KINDS)}}}


def other_corpora_texts() -> list[str]:
    """Every memory text of the project's other corpora (recall, near-duplicates, injection)."""
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("body", "text") and isinstance(value, str):
                    texts.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for name in ("recall.json", "near_duplicates.json", "injection.json"):
        walk(json.loads((CORPORA / name).read_text(encoding="utf-8")))
    return texts


def flagged(item: Item) -> bool:
    refuse = KINDS if item.policy == "email_phone" else DEFAULT_REFUSED
    return bool(
        find_secrets(item.text) or find_personal_data(personal_data_form(item.text), refuse)
    )


def measure_rules(corpus: list[Item]) -> dict[str, Any]:
    found = [flagged(i) for i in corpus]
    out = confusion(found, [i.group != CONTROL for i in corpus])
    for group in (SECRET, PERSONAL):
        sub = [(f, i) for f, i in zip(found, corpus, strict=True) if i.group in (group, CONTROL)]
        out[group] = confusion([f for f, _ in sub], [i.group == group for _, i in sub])
    missed = Counter(
        i.kind for f, i in zip(found, corpus, strict=True) if not f and i.group != CONTROL
    )
    out["missed_by_kind"] = dict(sorted(missed.items()))
    out["false_alarms"] = [
        i.id for f, i in zip(found, corpus, strict=True) if f and i.group == CONTROL
    ]
    return out


def measure_writes(bench: Workbench, corpus: list[Item]) -> dict[str, Any]:
    memories = {name: bench.memory(f"secrets-{name}", policy=p) for name, p in POLICIES.items()}
    refused: list[bool] = []
    for item in corpus:
        try:
            actions.add_entry(
                memories[item.policy], actor=WRITER, body=item.text, kind="fact", dedupe=False
            )
        except (SecretDetected, PersonalDataDetected):
            refused.append(True)
        else:
            refused.append(False)
    out = confusion(refused, [i.group != CONTROL for i in corpus])
    out["stored_secrets"] = sum(
        1 for r, i in zip(refused, corpus, strict=True) if not r and i.group == SECRET
    )
    out["stored_personal"] = sum(
        1 for r, i in zip(refused, corpus, strict=True) if not r and i.group == PERSONAL
    )
    out["refused_controls"] = sum(
        1 for r, i in zip(refused, corpus, strict=True) if r and i.group == CONTROL
    )
    return out


@section(
    "secrets", title="Stored-text scan: secrets and personal data, precision and recall", order=75
)
def run(bench: Workbench) -> SectionResult:
    corpus = list(items())
    extra = [
        Item(f"c-corpus-{n}", CONTROL, "other_corpora", t)
        for n, t in enumerate(other_corpora_texts())
    ]
    full = corpus + extra
    counts = Counter(i.group for i in full)
    rules = measure_rules(full)
    writes = measure_writes(bench, corpus[::4] if bench.quick else corpus)
    report = {
        "secrets": {
            "corpus": {
                "secret": counts[SECRET],
                "personal": counts[PERSONAL],
                "control": counts[CONTROL],
                "of_which_other_corpora": len(extra),
                "token_types": len({i.kind for i in corpus if i.kind.startswith("type:")}),
            },
            "rules": rules,
            "writes": writes,
        }
    }
    rows: list[tuple[str, Any]] = [
        (
            "secrets corpus secret / personal / control",
            f"{counts[SECRET]} / {counts[PERSONAL]} / {counts[CONTROL]}",
        ),
        ("secrets rules precision", rules["precision"]),
        ("secrets rules recall", rules["recall"]),
        ("secrets rules recall (secrets)", rules[SECRET]["recall"]),
        ("secrets rules recall (personal data)", rules[PERSONAL]["recall"]),
        ("secrets rules false alarms on controls", len(rules["false_alarms"])),
        ("secrets writes stored secrets", writes["stored_secrets"]),
        ("secrets writes stored personal data", writes["stored_personal"]),
        ("secrets writes refused controls", writes["refused_controls"]),
    ]
    return SectionResult(report=report, rows=rows)
