"""The contradiction pass (DESIGN §8): current-state entries about one subject with different
values.

A pair is a contradiction only when all hold:

- both are active ``current_state`` entries and one is within the other's bounded
  neighbourhood (:func:`~proposals.passes.base.neighbourhoods`: lexical neighbours found per
  keyset batch in a fixed number of queries, ∪ the vector index) — nothing outside it is ever
  compared, so unrelated facts never conflict;
- their similarity reaches the band floor (``jobs.contradictions.min_similarity``, default 0.2)
  and their *subjects* (content words without the values) overlap at least
  ``jobs.contradictions.min_subject`` (default 0.75, containment);
- they carry a different value for the same slot (numbers, times, dates, versions, names…).

For each: a ``conflicts_with`` observation from the newer to the older entry (validity becomes
``unresolved_conflict``, both are returned and labelled) through
``memory.actions.record_conflict``, and, where the times are comparable (both known and
different) and the newer entry is evidence-backed (its head version cites evidence), a
supersession proposal naming the newer entry successor, filed through the normal intake. The
pass never retires anything itself. A real run resumes after the entry where the last one
stopped (``base.resumed_scan``) and wraps around at the end. Dry run: the findings, nothing
written but the run. Idempotent: a pair already observed is not observed again, a proposal
already filed is reported.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memory import actions as memory_actions
from memory.actors import Actor
from memory.dedupe import jaccard, lexical_similarity, round_score
from memory.exceptions import DomainError
from memory.jobs import Number
from memory.models import MaintenanceRun, Memory, Relation, RelationKind, Validity

from .. import bodies
from ..models import ProposalKind
from . import base
from .candidates import Neighbour, Neighbourhoods

NAME = "contradictions"
DEFAULT_MIN_SIMILARITY = 0.2
DEFAULT_MIN_SUBJECT = 0.75


def is_contradiction(
    a: str,
    b: str,
    *,
    min_similarity: float,
    min_subject: float,
    similarity: float | None = None,
) -> dict[str, Any] | None:
    """The receipt of a contradiction between two bodies, or None (pure). ``similarity``: their
    lexical similarity when the caller has it already (from the stored tokens: the same
    Jaccard), else it is computed."""
    values = bodies.value_differences(a, b)
    if not values:
        return None
    if similarity is None:
        similarity = lexical_similarity(a, b)
    if similarity < min_similarity:
        return None
    subject = bodies.subject_similarity(a, b, strict=True)
    if subject < min_subject:
        return None
    return {
        "similarity": round_score(similarity),
        "subject_similarity": round_score(subject),
        "values": values,
    }


def run_contradictions(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """The contradiction pass of one Memory (see the module docstring).

    Preconditions: a maintainer, not inside a transaction. A real run needs no
    ``jobs.contradictions.enabled`` (the beat schedule's switch). Effects: ``conflicts_with``
    observations (each in its own transaction, under the Memory lock) and supersession proposals
    filed by the system actor; the run row. Heads never change.
    """
    run = base.start(memory, actor=actor, job=NAME, dry_run=dry_run)
    cfg = (run.memory.policy or {}).get("jobs", {}).get(NAME, {})
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
    finder = Neighbourhoods(memory, limit=base.NEIGHBOURS)
    for _pks, _batch, near, light in base.neighbourhood_scan(run, qs, finder):
        found, heads = _contradictions_in(
            run, near, light, seen, min_similarity=min_similarity, min_subject=min_subject
        )
        if not found:
            continue
        involved = {x for a_pk, b_pk, _ in found for x in (a_pk, b_pk)}
        cited = base.evidence_counts(involved)
        observed = _observed_conflicts(memory, involved)
        for a_pk, b_pk, receipt in found:
            a, b = (replace(heads[x], evidence=int(cited.get(x, 0))) for x in (a_pk, b_pk))
            run.count("contradictions")
            _handle(run, a, b, receipt, already=(a_pk, b_pk) in observed)
    run.counts["lexical_queries"] = finder.queries
    return run.finish()


def _contradictions_in(
    run: base.Pass,
    near: dict[int, list[int]],
    light: dict[int, base.HeadRow | Neighbour],
    seen: set[tuple[int, int]],
    *,
    min_similarity: float,
    min_subject: float,
) -> tuple[list[tuple[int, int, dict[str, Any]]], dict[int, base.HeadRow]]:
    """The contradictions between one batch's entries and their active current-state
    neighbours, as ``(a_pk, b_pk, receipt)`` with ``a_pk < b_pk``, and the head rows read for
    them. Pairs in ``seen`` are skipped and the new ones added to it. The similarity floor is
    checked first on the stored tokens (cheap); full rows and the pure rules only for the pairs
    above it."""
    pairs = [
        (min(pk, n), max(pk, n))
        for pk, ns in near.items()
        for n in ns
        if n in light and light[n].current_state and light[n].state == "active"
    ]
    pairs = sorted(set(pairs) - seen)
    seen.update(pairs)
    if not pairs:
        return [], {}
    similarity = {p: jaccard(light[p[0]].tokens, light[p[1]].tokens) for p in pairs}
    run.count("pairs_compared", len(pairs))
    pairs = [p for p in pairs if similarity[p] >= min_similarity]
    if not pairs:
        return [], {}
    heads = base.load_heads(run.memory, {x for p in pairs for x in p}, evidence=False)
    found = []
    for a_pk, b_pk in pairs:
        receipt = is_contradiction(
            heads[a_pk].body,
            heads[b_pk].body,
            min_similarity=min_similarity,
            min_subject=min_subject,
            similarity=similarity[(a_pk, b_pk)],
        )
        if receipt is not None:
            found.append((a_pk, b_pk, receipt))
    return found, heads


def _observed_conflicts(memory: Memory, involved: set[int]) -> set[tuple[int, int]]:
    """The live ``conflicts_with`` observations between the ``involved`` entries, each as its
    ordered pair of entry pks (lower first)."""
    return {
        (min(f, t), max(f, t))
        for f, t in Relation.objects.filter(
            memory_id=memory.pk,
            kind=RelationKind.CONFLICTS_WITH,
            retired_by__isnull=True,
            from_entry_id__in=involved,
            to_entry_id__in=involved,
        ).values_list("from_entry_id", "to_entry_id")
    }


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
    _observe(run, newer, older, item, already=already)
    if not comparable:
        item.update(action="observed_only", why="times not comparable")
        run.add_item(item)
        return
    if newer.evidence == 0:
        item.update(action="observed_only", why="the newer entry cites no evidence")
        run.add_item(item)
        return
    values = _value_changes(receipt, newer_first=newer is a)
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


def _observe(
    run: base.Pass,
    newer: base.HeadRow,
    older: base.HeadRow,
    item: dict[str, Any],
    *,
    already: bool,
) -> None:
    """Records the ``conflicts_with`` observation from ``newer`` to ``older`` (unless already
    observed; a dry run only reports it) and says in ``item`` what became of it."""
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


def _value_changes(receipt: dict[str, Any], *, newer_first: bool) -> str:
    """The differing values of a receipt as "slot: old → new" phrases. ``newer_first``: the
    receipt lists the newer entry's values first."""
    return "; ".join(
        f"{kind}: {', '.join(old) or '—'} → {', '.join(new) or '—'}"
        for kind, (new, old) in (
            (k, v if newer_first else [v[1], v[0]]) for k, v in receipt["values"].items()
        )
    )


JOB = base.pass_job(
    name=NAME,
    runner=run_contradictions,
    description="Finds entries that contradict each other and records the conflict for a reviewer.",
    settings={"min_similarity": Number(0, 1), "min_subject": Number(0, 1)},
)
