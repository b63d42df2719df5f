"""``freshness``: stale current state, durable constraints and historical facts (RFC item 2).

Workload, per topic ``t`` (one Memory, written through the actions):

- a *stale* current-state fact and its current replacement, made stale one of three ways in
  turn: revised in place (version 1 is replaced by version 2), superseded by a newer entry
  through an approved supersession proposal, or forgotten and re-added with the new value;
- an old durable *constraint* on the same subject (not current state, attested evidence);
- an old *historical* fact about the subject (not current state, untrusted evidence — so a
  generic newer-wins rule would push it down);
- an *aging* current-state fact with no successor and untrusted evidence (it may decline);
- unrelated filler.

Each topic is asked with current intent ("current … deploy target") under quality off and on.
``stale_recall_rate`` is the share of those searches whose top 10 (or Context Pack) contains
a stale version: it must be 0. The current value, the constraint and the historical fact must
all be recalled; historical facts and constraints never carry the ``stale`` rule, while aging
current-state material without attestation does (it "declines appropriately").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory import actions
from memory.context_pack import build_context_pack, label_of
from memory.search import search
from proposals.requests import submit_request
from review.actions import approve_proposal

from ..metrics import mean
from ..registry import SectionResult, section
from ..workbench import (
    ATTESTED,
    MODES,
    REVIEWER,
    UNTRUSTED,
    WRITER,
    Vocabulary,
    Workbench,
    days_ago,
    under_policy,
)

LIMIT = 10
STALE_MODES = ("revised", "superseded", "forgotten")


def _make_stale(
    memory: Any,
    mode: str,
    stale: Any,
    topic: str,
    new_value: str,
    *,
    add: Callable[..., Any],
    vocab: Vocabulary,
    repo: str,
) -> Any:
    """The current replacement of the ``stale`` fact, made stale the ``mode`` way: revised in
    place, superseded through an approved proposal, or forgotten and added again."""
    text = f"{topic} deploy target is {new_value}"
    if mode == "revised":
        return actions.revise_entry(
            memory,
            actor=WRITER,
            entry_uid=stale.entry.uid,
            body=text,
            evidence=[{"source": repo, "ref": f"ref/{vocab.word()}"}],
        )
    current = add(text, "fact", current=True, days=3, src=repo)
    if mode == "superseded":
        proposal = submit_request(
            actor=WRITER,
            data={
                "memory": memory.slug,
                "kind": "supersession",
                "rationale": f"{topic} moved to {new_value}",
                "old": {"entry_id": stale.entry.uid, "version": stale.version.number},
                "successor": {"entry_id": current.entry.uid, "version": current.version.number},
                "evidence": [{"source": repo, "ref": f"ref/{vocab.word()}"}],
            },
        ).proposal
        approve_proposal(proposal.pk, actor=REVIEWER, comment="evaluation")
    else:
        actions.forget_entry(
            memory, actor=WRITER, entry_uid=stale.entry.uid, reason=f"moved:{new_value}"
        )
    return current


def build(bench: Workbench) -> tuple[Any, list[dict[str, Any]]]:
    rng = bench.rng("freshness")
    vocab = Vocabulary(rng)
    memory = bench.memory("freshness")
    repo = bench.source("repo", ATTESTED)
    chat = bench.source("chat", UNTRUSTED)

    def add(body: str, kind: str, *, current: bool, days: float | None, src: str | None) -> Any:
        return actions.add_entry(
            memory,
            actor=WRITER,
            body=body,
            kind=kind,
            current_state=current,
            effective_at=days_ago(bench, days) if days is not None else None,
            evidence=[{"source": src, "ref": f"ref/{vocab.word()}"}] if src else None,
        )

    topics: list[dict[str, Any]] = []
    for i in range(bench.size(18, 6)):
        t = vocab.word()
        old_value, new_value = vocab.word(), vocab.word()
        mode = STALE_MODES[i % len(STALE_MODES)]
        stale = add(f"{t} deploy target is {old_value}", "fact", current=True, days=200, src=repo)
        current = _make_stale(memory, mode, stale, t, new_value, add=add, vocab=vocab, repo=repo)
        region = " ".join(vocab.words(2))
        constraint = add(
            f"{t} deploy target must stay inside the {region} region",
            "constraint",
            current=False,
            days=400,
            src=repo,
        )
        historical = add(
            f"{t} deploy target was {vocab.word()} during the first migration",
            "fact",
            current=False,
            days=700,
            src=chat,
        )
        aging = add(
            f"{t} deploy target window closes at {vocab.word()} {vocab.word()}",
            "fact",
            current=True,
            days=300,
            src=chat,
        )
        for _ in range(2):
            add(" ".join(vocab.words(5)), "fact", current=False, days=None, src=None)
        topics.append(
            {
                "topic": t,
                "mode": mode,
                "query": f"current {t} deploy target",
                "stale": (stale.entry.pk, stale.version.pk),
                "stale_ref": (stale.entry.uid, stale.version.number),
                "current": (current.entry.pk, current.version.pk),
                "constraint": (constraint.entry.pk, constraint.version.pk),
                "historical": (historical.entry.pk, historical.version.pk),
                "aging": (aging.entry.pk, aging.version.pk),
            }
        )
    return memory, topics


@section("freshness", title="Freshness safety: stale state, constraints, history", order=20)
def run(bench: Workbench) -> SectionResult:
    memory, topics = build(bench)
    per_mode: dict[str, dict[str, Any]] = {}
    searches = stale_returns = 0
    for mode, policy in MODES:
        view = under_policy(memory, policy)
        stale = current = constraint = historical = 0
        historical_penalized = constraint_penalized = declined = 0
        for t in topics:
            hits = search(view, actor=WRITER, query=t["query"], limit=LIMIT, now=bench.now).hits
            pack = build_context_pack(view, actor=WRITER, query=t["query"], byte_budget=4000)
            keys = {h.key for h in hits}
            by_key = {h.key: h for h in hits}
            packed_current = {(i.entry_id, i.version) for i in pack.items if i.label == "current"}
            stale_hit = t["stale"] in keys or t["stale_ref"] in packed_current
            searches += 1
            stale += int(stale_hit)
            stale_returns += int(stale_hit)
            current += int(t["current"] in keys and label_of(by_key[t["current"]]) == "current")
            constraint += int(t["constraint"] in keys)
            historical += int(t["historical"] in keys)
            if t["historical"] in keys and "stale" in by_key[t["historical"]].rules:
                historical_penalized += 1
            if t["constraint"] in keys and "stale" in by_key[t["constraint"]].rules:
                constraint_penalized += 1
            if t["aging"] in keys and "stale" in by_key[t["aging"]].rules:
                declined += 1
        n = len(topics)
        per_mode[mode] = {
            "stale_recall_rate": stale / n,
            "current_recall_at_10": current / n,
            "constraint_recall_at_10": constraint / n,
            "historical_recall_at_10": historical / n,
            "historical_newer_wins_penalties": historical_penalized,
            "constraint_newer_wins_penalties": constraint_penalized,
            "aging_current_state_declined": declined,
        }
    history = history_view(memory, topics, bench)
    report = {
        "stale_recall_rate": stale_returns / searches,
        "freshness": {
            "topics": len(topics),
            "stale_by": {m: sum(1 for t in topics if t["mode"] == m) for m in STALE_MODES},
            "searches": searches,
            **per_mode,
            "history_view_stale_labelled": history,
        },
    }
    rows: list[tuple[str, Any]] = [("stale_recall_rate", report["stale_recall_rate"])]
    for mode, values in per_mode.items():
        for key in (
            "current_recall_at_10",
            "constraint_recall_at_10",
            "historical_recall_at_10",
            "historical_newer_wins_penalties",
            "aging_current_state_declined",
        ):
            rows.append((f"{key} ({mode})", values[key]))
    rows.append(("history view returns the stale version, labelled", history))
    return SectionResult(report=report, rows=rows)


def history_view(memory: Any, topics: list[dict[str, Any]], bench: Workbench) -> float:
    """Share of topics whose ``history`` view still returns the stale version, not labelled
    current (history is kept; only the current view drops it)."""
    found = []
    for t in topics:
        hits = search(
            memory, actor=WRITER, query=t["query"], limit=LIMIT, view="history", now=bench.now
        ).hits
        stale = [h for h in hits if h.key == t["stale"]]
        found.append(1.0 if stale and label_of(stale[0]) != "current" else 0.0)
    return mean(found)
