"""The contradiction pass (DESIGN §8): current-state entries about one subject with different
values.

A pair is a contradiction only when all hold:

- both are active ``current_state`` entries and one is within the other's bounded
  :func:`~proposals.passes.base.neighbourhood` (lexical channel ∪ vector index) — nothing
  outside it is ever compared, so unrelated facts never conflict;
- their similarity reaches the band floor (``jobs.contradictions.min_similarity``, default 0.2)
  and their *subjects* (content words without the values) overlap at least
  ``jobs.contradictions.min_subject`` (default 0.75, containment);
- they carry a different value for the same slot (numbers, times, dates, versions, names…).

For each: a ``conflicts_with`` observation from the newer to the older entry (validity becomes
``unresolved_conflict``, both are returned and labelled) through
``memory.actions.record_conflict``, and, where the times are comparable (both known and
different) and the newer entry is evidence-backed (its head version cites evidence), a
supersession proposal naming the newer entry successor, filed through the normal intake. The
pass never retires anything itself. Dry run: the findings, nothing written but the run.
Idempotent: a pair already observed is not observed again, a proposal already filed is reported.
"""

from __future__ import annotations

from typing import Any

from memory import actions as memory_actions
from memory.actors import Actor
from memory.dedupe import lexical_similarity, round_score
from memory.exceptions import DomainError
from memory.models import MaintenanceRun, Memory, Relation, RelationKind, Validity

from ..models import ProposalKind
from . import base

JOB = "contradictions"
DEFAULT_MIN_SIMILARITY = 0.2
DEFAULT_MIN_SUBJECT = 0.75


def is_contradiction(
    a: str, b: str, *, min_similarity: float, min_subject: float
) -> dict[str, Any] | None:
    """The receipt of a contradiction between two bodies, or None (pure)."""
    values = base.value_differences(a, b)
    if not values:
        return None
    similarity = lexical_similarity(a, b)
    if similarity < min_similarity:
        return None
    subject = base.subject_similarity(a, b, strict=True)
    if subject < min_subject:
        return None
    return {
        "similarity": round_score(similarity),
        "subject_similarity": round_score(subject),
        "values": values,
    }


def run_contradictions(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """The contradiction pass of one Memory (see the module docstring).

    Preconditions: a maintainer, not inside a transaction. A real run needs
    ``jobs.contradictions.enabled`` (409 ``maintenance_disabled``). Effects: ``conflicts_with``
    observations (each in its own transaction, under the Memory lock) and supersession proposals
    filed by the system actor; the run row. Heads never change.
    """
    run = base.start(memory, actor=actor, job=JOB, dry_run=dry_run)
    cfg = (run.memory.policy or {}).get("jobs", {}).get(JOB, {})
    min_similarity = float(cfg.get("min_similarity", DEFAULT_MIN_SIMILARITY))
    min_subject = float(cfg.get("min_subject", DEFAULT_MIN_SUBJECT))
    run.parameters.update(
        min_similarity=min_similarity, min_subject=min_subject, neighbours=base.NEIGHBOURS
    )
    memory = run.memory
    qs = base.active_projection(memory).filter(
        current_state=True, validity__in=[Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
    )
    seen: set[tuple[int, int]] = set()
    for pks in base.scan_pks(memory, qs, max_scan=run.parameters["max_scan"]):
        run.count("scanned", len(pks))
        heads = base.load_heads(memory, pks)
        near = {pk: base.neighbourhood(memory, pk, heads[pk].body) for pk in pks if pk in heads}
        heads.update(base.load_heads(memory, {n for ns in near.values() for n in ns} - set(heads)))
        pairs = [
            (min(pk, n), max(pk, n))
            for pk, ns in near.items()
            for n in ns
            if n in heads and heads[n].current_state and heads[n].state == "active"
        ]
        pairs = sorted(set(pairs) - seen)
        seen.update(pairs)
        if not pairs:
            continue
        involved = {x for p in pairs for x in p}
        observed = {
            (min(f, t), max(f, t))
            for f, t in Relation.objects.filter(
                memory_id=memory.pk,
                kind=RelationKind.CONFLICTS_WITH,
                retired_by__isnull=True,
                from_entry_id__in=involved,
                to_entry_id__in=involved,
            ).values_list("from_entry_id", "to_entry_id")
        }
        run.count("pairs_compared", len(pairs))
        for a_pk, b_pk in pairs:
            a, b = heads[a_pk], heads[b_pk]
            receipt = is_contradiction(
                a.body, b.body, min_similarity=min_similarity, min_subject=min_subject
            )
            if receipt is None:
                continue
            run.count("contradictions")
            _handle(run, a, b, receipt, already=(a_pk, b_pk) in observed)
    return run.finish()


def _order(a: base.HeadRow, b: base.HeadRow) -> tuple[base.HeadRow, base.HeadRow, bool]:
    """``(older, newer, comparable)``: comparable when both times are known and differ."""
    ta, tb = a.when, b.when
    if ta is None or tb is None or ta == tb:
        return (a, b, False) if a.entry_pk < b.entry_pk else (b, a, False)
    return (a, b, True) if ta < tb else (b, a, True)


def _handle(
    run: base.Pass, a: base.HeadRow, b: base.HeadRow, receipt: dict[str, Any], *, already: bool
) -> None:
    older, newer, comparable = _order(a, b)
    inputs = {
        **receipt,
        "older": {"entry_id": older.uid, "time": older.when.isoformat() if older.when else None},
        "newer": {"entry_id": newer.uid, "time": newer.when.isoformat() if newer.when else None},
        "times_comparable": comparable,
        "newer_evidence": newer.evidence,
    }
    item: dict[str, Any] = {
        "entry_id": newer.uid,
        "entries": [newer.uid, older.uid],
        "reason": "different_values",
        "inputs": inputs,
    }
    run.touched += [newer.uid, older.uid]
    if already:
        item["observation"] = "already_observed"
        run.count("already_observed")
    elif run.dry_run:
        item["observation"] = "would_observe"
        run.count("would_observe")
    else:
        try:
            relation = memory_actions.record_conflict(
                run.memory,
                actor=run.filer,
                from_entry=newer.uid,
                to_entry=older.uid,
            )
        except DomainError as exc:
            item["observation"] = f"refused:{exc.code}"
            run.count("observation_refused")
        else:
            item["observation"] = "observed"
            item["relation"] = relation.pk
            run.count("observed")
    if not comparable:
        item.update(action="observed_only", why="times not comparable")
        run.add_item(item)
        return
    if newer.evidence == 0:
        item.update(action="observed_only", why="the newer entry cites no evidence")
        run.add_item(item)
        return
    values = "; ".join(
        f"{kind}: {', '.join(old) or '—'} → {', '.join(new) or '—'}"
        for kind, (new, old) in (
            (k, v if newer is a else [v[1], v[0]]) for k, v in receipt["values"].items()
        )
    )
    run.propose(
        {
            "rationale": (
                f"Contradiction pass: {newer.uid} and {older.uid} describe the same subject "
                f"with different values ({values}); {newer.uid} is newer and cites evidence."
            ),
            "old": older.ref(),
            "successor": newer.ref(),
        },
        kind=ProposalKind.SUPERSESSION,
        entry_pks=[older.entry_pk, newer.entry_pk],
        item=item,
    )
