"""The near-duplicate health pass (DESIGN §8; for bulk imports, which skip the add-time check,
and for drift).

1. Candidate pairs: each active entry (keyset batches, at most ``max_scan``, resuming where
   the last real run stopped) against its neighbourhood (:func:`~proposals.passes.base.
   neighbourhoods`: the batch's lexical neighbours in a fixed number of queries, ∪ the vector
   index), same kind only, scored with the similarity the admission check uses
   (``memory.dedupe.Similarity``: lexical Jaccard, or cosine with embeddings — for the pairs
   whose two texts the model reads; the others lexically, judged by the lexical rule).
2. An edge when the score reaches the threshold of the method that scored it
   (``jobs.near_duplicates.threshold``: a number is the configured similarity's, an object sets each
   method; default the Memory's ``tau_similar``; with embeddings at least ``COSINE_THRESHOLD``, at
   most ``tau_same``), the two bodies give no slot different values (``bodies.slot_differences``:
   "standup at 9:30" and "standup at 10:00", "prefers dark mode" and "prefers light mode", "allowed"
   and "not allowed" are a contradiction for the contradiction pass, never a merge) and, with the
   lexical similarity, the subjects (content words without values) overlap at least
   ``jobs.near_duplicates.min_subject`` (default 0.6: "the office closes at 18:00" is not "the
   hotline closes at 18:00"; with embeddings 0, as a paraphrase may share no word; per method
   as the threshold is).
   :func:`pair_edge` is that rule, scored on labelled pairs by ``manage.py evaluate
   near_duplicates``. With embeddings, a pair below ``COSINE_NEAREST_BELOW`` is an edge only
   when each entry is the other's nearest in the run.
3. Clusters: connected components of the threshold graph (``scipy.sparse.csgraph``), at most
   ``MAX_AFFECTED_ENTRIES`` members each.
4. One consolidation proposal per cluster through the normal intake: the target is the most
   complete member, the merged body is extractive (the target's text plus every sentence of the
   others carrying a detail it misses), so the intake's lost-details check finds nothing lost.
   A cluster with a member already under a pending proposal is left to that proposal.

Dry run: the clusters and their would-be proposals, nothing filed. Idempotent: a cluster that
already has a proposal (any status but stale) is reported, not filed again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from memory import hooks
from memory.actors import Actor
from memory.dedupe import (
    THRESHOLD,
    Similarity,
    jaccard,
    policy_threshold,
    round_score,
    similarity,
    thresholds,
)
from memory.embeddings import MINILM_CALIBRATION, calibration
from memory.models import Kind, MaintenanceRun, Memory, Validity

from .. import bodies
from ..models import ProposalKind
from . import base
from .candidates import Neighbour, Neighbourhoods

NAME = "near_duplicates"
#: The validities of the entries a consolidation may take in: current ones (an unresolved
#: conflict included), never one a supersession replaced.
MERGEABLE = (Validity.CURRENT, Validity.UNRESOLVED_CONFLICT)


DEFAULT_MIN_SUBJECT = 0.6
#: The least cosine an edge needs by default. The add-time check's ``tau_similar`` (0.35 with
#: embeddings) only flags a related entry to the writer; a merge proposal needs a restatement,
#: and restatements in other words score 0.6–0.8 ("The deploy pipeline runs on GitHub
#: Actions" / "We ship through GitHub Actions workflows": 0.67). What scores as high without
#: being one — the same sentence with another value — is refused by the slot check
#: (``bodies.slot_differences``), not by the threshold. On the calibration half of
#: ``evaluation/restatement_corpus.py`` the best F1 with precision ≥ 0.9 is at 0.62
#: (``manage.py evaluate near_duplicates``); 0.66 is the lowest that files no wrong merge in
#: ``bench/maintenance_eval.py``, where one person in two roles, mutually nearest, scores 0.658
#: ("The billing service is owned by Ken Adebayo" / "The payments team lead is now Ken
#: Adebayo"). docs/maintenance.md gives the sweep.
COSINE_THRESHOLD = MINILM_CALIBRATION.near_duplicate  # 0.66; another model's is its own
#: Below this cosine an edge also needs the two entries to be each other's nearest: one value
#: in two roles ("The payments service is owned by Mara Okafor" / "The payments team lead is
#: Mara Okafor") scores 0.74–0.78, as high as a restatement in other words, and no check of
#: the texts tells them apart — but such an entry has a closer neighbour (its own restatement,
#: or the other value of its slot).
COSINE_NEAREST_BELOW = MINILM_CALIBRATION.nearest_below  # 0.8
#: With embeddings the model judges the meaning: a restatement may share no content word
#: ("Errors are tracked in Sentry" / "Exceptions get reported to Sentry"), so no subject
#: overlap is asked by default (``jobs.near_duplicates.min_subject`` sets one).
COSINE_MIN_SUBJECT = 0.0


class Rule(NamedTuple):
    """The edge rule of one similarity method (:func:`pair_edge`'s parameters): a pair scoring
    below ``nearest_below`` must also be mutually nearest (cosine only)."""

    threshold: float
    min_subject: float
    nearest_below: float | None


def rules(memory: Memory, method: str) -> dict[str, Rule]:
    """The rule of each method a run under the configured ``method`` may score a pair with:
    lexical always (also the pairs the model cannot read), and cosine with embeddings."""
    out = {"lexical": Rule(*default_parameters(memory, "lexical"), None)}
    if method != "lexical":
        out[method] = Rule(*default_parameters(memory, method), calibration().nearest_below)
    return out


def candidate_edges(
    memory: Memory, run: base.Pass, sim: Similarity, by_method: dict[str, Rule]
) -> tuple[dict[tuple[int, int], dict[str, Any]], dict[int, base.HeadRow]]:
    """Scored pairs that make an edge under the rule of the method that scored them
    (:func:`pair_edge`: at or above its ``threshold``, no slot with different values, subjects
    overlapping at least its ``min_subject``), and the heads of their entries. A cosine pair
    scoring below ``nearest_below`` is an edge only when each entry is the other's nearest: no
    pair scored by cosine in the run (whatever its verdict) scores higher for either
    (``pairs_not_nearest`` counts the others).

    Keyset batches of ``base.NEIGHBOURHOOD_BATCH`` entries (resuming where the last real run
    stopped, :func:`base.resumed_scan`), each with its neighbourhoods found in a fixed number
    of queries (:func:`base.neighbourhoods`). With the lexical similarity a pair is first
    scored on the stored tokens (the same Jaccard), and only the pairs reaching the threshold
    are scored again with ``memory.dedupe``'s function, whose score is recorded."""
    qs = base.active_projection(memory).filter(validity__in=MERGEABLE)
    qs = qs.exclude(kind=Kind.WORKING_NOTE)  # recurring notes are the promotion pass's
    finder = Neighbourhoods(memory, limit=base.NEIGHBOURS)
    edges: dict[tuple[int, int], dict[str, Any]] = {}
    kept: dict[int, base.HeadRow] = {}
    nearest: dict[int, float] = {}  # the best score each entry had in the run
    unsure: dict[tuple[int, int], tuple[dict[str, Any], base.HeadRow, base.HeadRow]] = {}
    for pks, batch, near, light in base.neighbourhood_scan(run, qs, finder):
        pools = _candidate_pools(
            run,
            pks,
            batch,
            near,
            light,
            edges,
            threshold=by_method["lexical"].threshold,
            lexical=sim.method == "lexical",
        )
        wanted = {n for ns in pools.values() for n in ns} | set(pools)
        heads = base.load_heads(memory, wanted, evidence=False)
        for pk, pool_pks in pools.items():
            row = heads[pk]
            # A superseded neighbour (still an active head) is history, never merged.
            others = [
                heads[n]
                for n in pool_pks
                if (min(pk, n), max(pk, n)) not in edges and heads[n].validity in MERGEABLE
            ]
            if not others:
                continue
            scores = sim.scores(row.body, [o.body for o in others])
            for other, scored in zip(others, scores, strict=True):
                rule, score = by_method[scored.method], scored.value
                if rule.nearest_below is not None:
                    for x in (pk, other.entry_pk):
                        nearest[x] = max(nearest.get(x, 0.0), score)
                if score < rule.threshold:
                    continue
                refused, edge = pair_edge(
                    row.body,
                    other.body,
                    score,
                    threshold=rule.threshold,
                    min_subject=rule.min_subject,
                )
                if refused:
                    run.count(refused, 1)
                    continue
                edge["method"] = scored.method
                pair = (min(pk, other.entry_pk), max(pk, other.entry_pk))
                if rule.nearest_below is not None and score < rule.nearest_below:
                    unsure[pair] = (edge, row, other)
                    continue
                edges[pair] = edge
                kept[pk], kept[other.entry_pk] = row, other
    for (a, b), (edge, row, other) in unsure.items():
        if edge["score"] < max(round_score(nearest[a]), round_score(nearest[b])):
            run.count("pairs_not_nearest", 1)
            continue
        edges[(a, b)] = edge
        kept[row.entry_pk], kept[other.entry_pk] = row, other
    run.counts["lexical_queries"] = finder.queries
    return edges, kept


def pair_edge(
    a: str, b: str, score: float, *, threshold: float, min_subject: float
) -> tuple[str | None, dict[str, Any]]:
    """Whether two bodies scored ``score`` by the active similarity are near-duplicates the
    pass may cluster (pure): ``(None, edge)`` with the edge's receipt, or ``(reason, {})`` —
    ``below_threshold``, ``pairs_with_different_values`` (one slot with different values,
    ``bodies.slot_differences``: a contradiction, never a merge), ``pairs_with_different_clauses``
    (a negation, restriction, condition or modality one holds and the other does not keep:
    ``bodies.clause_differences``), ``pairs_not_restatements`` (each says something the other
    does not: ``bodies.differs_both_ways`` — another method, actor or place, which a merge
    would glue into two incompatible sentences) or ``pairs_about_other_subjects``.
    ``manage.py evaluate
    near_duplicates`` scores this very function on labelled pairs."""
    if score < threshold:
        return "below_threshold", {}
    if bodies.slot_differences(a, b):
        return "pairs_with_different_values", {}
    if bodies.clause_differences(a, b):
        return "pairs_with_different_clauses", {}
    if bodies.differs_both_ways(a, b):
        return "pairs_not_restatements", {}
    subject = bodies.subject_similarity(a, b)
    if subject < min_subject:
        return "pairs_about_other_subjects", {}
    return None, {"score": round_score(score), "subject": round_score(subject)}


def default_parameters(memory: Memory, method: str) -> tuple[float, float]:
    """The pass's ``(threshold, min_subject)`` for ``memory`` under the similarity ``method``:
    the policy's ``jobs.near_duplicates`` settings (a ``threshold`` or ``min_subject`` number
    is the configured similarity's, an object sets each method:
    ``memory.dedupe.policy_threshold``), else the defaults (``min_subject``:
    ``DEFAULT_MIN_SUBJECT`` lexically, ``COSINE_MIN_SUBJECT`` with embeddings)."""
    tau_same, tau_similar = thresholds(memory, method)
    cfg = (memory.policy or {}).get("jobs", {}).get(NAME, {})
    default = _default_threshold(method, tau_same, tau_similar)
    threshold = policy_threshold(cfg.get("threshold"), method, default)
    default_min_subject = DEFAULT_MIN_SUBJECT if method == "lexical" else COSINE_MIN_SUBJECT
    return threshold, policy_threshold(cfg.get("min_subject"), method, default_min_subject)


def _candidate_pools(
    run: base.Pass,
    pks: list[int],
    batch: dict[int, Neighbour],
    near: dict[int, list[int]],
    light: dict[int, base.HeadRow | Neighbour],
    edges: dict[tuple[int, int], dict[str, Any]],
    *,
    threshold: float,
    lexical: bool,
) -> dict[int, list[int]]:
    """For each entry of one batch, its active neighbours of the same kind not yet paired in
    ``edges`` (counted as ``pairs_scored``); with the lexical similarity only those whose
    stored tokens reach ``threshold`` (the same Jaccard). Entries left with none are left out,
    so full head rows are read only for the pairs above the threshold."""
    pools: dict[int, list[int]] = {}
    for pk in pks:
        mine = batch.get(pk)
        if mine is None:
            continue
        pool = [
            n
            for n in near.get(pk, ())
            if n in light
            and light[n].kind == mine.kind
            and light[n].state == "active"
            and (min(pk, n), max(pk, n)) not in edges
        ]
        run.count("pairs_scored", len(pool))
        if lexical:
            tokens = mine.tokens
            pool = [n for n in pool if jaccard(tokens, light[n].tokens) >= threshold]
        if pool:
            pools[pk] = pool
    return pools


def clusters(pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components (size ≥ 2) of the graph with these edges, each sorted, in order of
    their smallest member."""
    if not pairs:
        return []
    nodes = sorted({n for p in pairs for n in p})
    index = {n: i for i, n in enumerate(nodes)}
    rows = np.array([index[a] for a, _ in pairs])
    cols = np.array([index[b] for _, b in pairs])
    graph = coo_matrix((np.ones(len(pairs)), (rows, cols)), shape=(len(nodes), len(nodes)))
    _, labels = connected_components(graph, directed=False)
    groups: dict[int, list[int]] = {}
    for node, label in zip(nodes, labels, strict=True):
        groups.setdefault(int(label), []).append(node)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def edges_within(
    groups: list[list[int]], pairs: Iterable[tuple[int, int]]
) -> list[list[tuple[int, int]]]:
    """The pairs inside each of ``groups`` (components of those pairs), in the pairs' order: one
    pass over the pairs, whatever the number of groups."""
    group_of = {n: i for i, g in enumerate(groups) for n in g}
    inside: list[list[tuple[int, int]]] = [[] for _ in groups]
    for a, b in pairs:
        i = group_of.get(a)
        if i is not None and group_of.get(b) == i:
            inside[i].append((a, b))
    return inside


def run_near_duplicates(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """The near-duplicate health pass of one Memory (see the module docstring).

    Preconditions: a maintainer (``maintenance.run_job`` checks), not inside a transaction. A
    real run needs no ``jobs.near_duplicates.enabled`` (the beat schedule's switch). Effects:
    consolidation proposals filed by the system actor (each in its own transaction through
    ``submit_proposal``) and the run row; nothing about the entries changes.
    """
    sim = similarity()
    run = base.start(memory, actor=actor, job=NAME, dry_run=dry_run)
    by_method = rules(run.memory, sim.method)
    method = sim.method
    threshold, min_subject, nearest_below = by_method[method]
    run.parameters.update(
        threshold=threshold, min_subject=min_subject, method=method, neighbours=base.NEIGHBOURS
    )
    if nearest_below is not None:
        run.parameters["nearest_below"] = nearest_below
        # Pairs with a text the model cannot read are scored and judged lexically.
        lexical = by_method["lexical"]
        run.parameters["unread_pairs"] = {
            "method": "lexical",
            "threshold": lexical.threshold,
            "min_subject": lexical.min_subject,
        }
    edges, heads = candidate_edges(run.memory, run, sim, by_method)
    run.counts["edges"] = len(edges)
    groups = clusters(sorted(edges))
    run.counts["clusters"] = len(groups)
    pending = hooks.entries_with_pending_proposals(run.memory, [n for g in groups for n in g])
    for group, inside in zip(groups, edges_within(groups, edges), strict=True):
        members = base.most_complete_first(heads[n] for n in group)
        target, redundant = members[0], members[1:]
        item = _cluster_item(inside, members, edges, heads, by_method)
        method = item["inputs"]["method"]
        within = " / ".join(f"{by_method[m].threshold} ({m})" for m in method.split("+"))
        rationale = (
            f"Near-duplicate health pass: {len(members)} entries within similarity "
            f"{within} and no differing value; merged extractively into "
            f"the most complete one, {target.uid}."
        )
        propose_merged(
            run,
            ProposalKind.CONSOLIDATION,
            group,
            members,
            item,
            pending=pending,
            body_key="merged_body",
            data={
                "rationale": rationale,
                "target": target.ref(),
                "redundant": [r.ref() for r in redundant],
            },
        )
    return run.finish()


def propose_merged(
    run: base.Pass,
    kind: str,
    group: list[int],
    members: list[base.HeadRow],
    item: dict[str, Any],
    *,
    pending: set[int],
    body_key: str,
    data: dict[str, Any],
) -> None:
    """Files the ``kind`` proposal of one cluster: ``data`` and an extractive body keeping every
    detail of the ``members``' texts (also in the receipt's inputs, under ``body_key``). Not when
    one was filed for these members already, nor while an entry of the ``group`` is under a
    pending proposal (``item`` says which)."""
    entry_pks = [m.entry_pk for m in members]
    if run.report_existing(kind, entry_pks, item):
        return
    if pending & set(group):
        run.record(item, "skipped_pending_proposal")
        return
    body = bodies.merged_body([m.body for m in members])
    item["inputs"][body_key] = body
    run.touched += base.uids(members)
    run.propose({**data, "body": body}, kind=kind, entry_pks=entry_pks, item=item)


def _default_threshold(method: str, tau_same: float, tau_similar: float) -> float:
    """The edge threshold when the policy sets none: ``tau_similar`` with the lexical
    similarity; with embeddings at least the paraphrase floor ``COSINE_THRESHOLD``, but never
    above what the add-time check already calls the same text (a Memory may set ``tau_same``
    lower)."""
    cosine = min(max(tau_similar, calibration().near_duplicate), tau_same)
    return tau_similar if method == "lexical" else cosine


def _cluster_item(
    inside: list[tuple[int, int]],
    members: list[base.HeadRow],
    edges: dict[tuple[int, int], dict[str, Any]],
    heads: dict[int, base.HeadRow],
    by_method: dict[str, Rule],
) -> dict[str, Any]:
    """The receipt of one cluster: its members (the target, the most complete, first), up to
    20 of the scored pairs inside it (``inside``: :func:`edges_within`), and the methods that
    scored them ("cosine+lexical" when the model could read only some of the texts) with their
    thresholds."""
    methods = sorted({edges[p]["method"] for p in inside}, reverse=True)
    method = "+".join(methods)
    threshold: float | dict[str, float] = (
        by_method[method].threshold
        if len(methods) == 1
        else {m: by_method[m].threshold for m in methods}
    )
    return {
        "entry_id": members[0].uid,
        "entries": base.uids(members),
        "reason": "near_duplicate_cluster",
        "inputs": {
            "pairs": [[heads[a].uid, heads[b].uid, edges[(a, b)]["score"]] for a, b in inside[:20]],
            "threshold": threshold,
            "method": method,
            "target": "most complete member (details, then length)",
        },
    }


JOB = base.pass_job(
    name=NAME,
    runner=run_near_duplicates,
    description="Finds entries that say the same thing and files consolidation "
    "proposals for review.",
    settings={"threshold": THRESHOLD, "min_subject": THRESHOLD},
)
