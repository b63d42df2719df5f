"""The promotion pass (DESIGN §8–9): a working-note theme recurring in ≥ 2 independent sessions
becomes one promotion proposal; a single occurrence never does.

1. Working notes with a session: active ones and those their session's end retired (state
   reason ``session_end``); never notes retired for another reason (forgotten, already
   promoted). Keyset batches, at most ``max_scan``; a real run resumes after the note where
   the last one stopped and wraps around at the end (``base.resumed_scan``).
2. Theme pairs: each note against its neighbourhood among the notes of step 1 (a finished
   session's notes are inactive; :func:`~proposals.passes.base.neighbourhoods`): up to
   ``candidates.SCOPE_MAX`` notes are read once and their term frequencies and posting lists
   counted in memory (``candidates.ScopedNeighbourhoods``); more are looked up through the
   index over every head, a fixed number of lexical queries per batch; with an embedding
   provider each note's vector neighbours are added (``base.neighbourhoods``). Scored with the
   similarity the admission check uses (``memory.dedupe.Similarity``): lexical Jaccard,
   first on the stored tokens; with embeddings the cosine of the stored vectors
   (``memory.vectors.head_vectors``, read for each batch's pairs) for the pairs whose two notes
   the model reads, the others lexically. An edge at the threshold of the method that scored
   the pair (``jobs.promotion.threshold``: a number is the configured similarity's, an object
   sets each method; default 0.4 lexical, ``COSINE_THRESHOLD`` with embeddings) between notes
   of *different* sessions with no differing value.
3. Themes: connected components (``scipy.sparse.csgraph``). A theme whose notes come from fewer
   than ``promotion_min_sessions`` (default 2) distinct sessions is never proposed.
4. One promotion proposal per theme, filed through the intake (which re-checks the sessions):
   the notes, target kind ``fact`` (``jobs.promotion.target_kind``), an extractive body keeping
   every detail of every note; on approval the new durable entry carries the evidence union.

Also run for one Memory right after a session ends, when the job is enabled
(``memory.maintenance.registry.after_session_end``). Dry run: the themes, nothing filed. Idempotent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import Q

from memory import hooks
from memory.actors import Actor
from memory.dedupe import (
    THRESHOLD,
    Similarity,
    jaccard,
    lexical_similarity,
    policy_threshold,
    round_score,
    similarity,
)
from memory.embeddings import MINILM_CALIBRATION, EmbeddingProvider, calibration
from memory.jobs import OneOf
from memory.models import HeadState, Kind, LifecycleProjection, MaintenanceRun, Memory

from .. import bodies
from ..inputs import DURABLE_KINDS
from ..models import ProposalKind
from ..verify import promotion_min_sessions
from . import base
from .candidates import (
    SCOPE_MAX,
    Neighbour,
    Neighbourhoods,
    scoped_neighbourhoods,
)
from .near_duplicates import clusters, edges_within, propose_merged

NAME = "promotion"
DEFAULT_THRESHOLD = 0.4
#: The least cosine a theme pair needs by default with the embedding model. Measured on the
#: hand-labelled notes (docs/maintenance.md, "Promotion with the model"): notes of one recurring
#: theme score 0.71-0.99 across sessions, also when written in other words (one pair 0.55),
#: near-topic notes about something else at most 0.56.
COSINE_THRESHOLD = MINILM_CALIBRATION.promotion  # 0.65; another model's is its own
SESSION_END = "session_end"


def _notes(memory: Memory) -> Any:
    return (
        LifecycleProjection.objects.filter(memory_id=memory.pk, kind=Kind.WORKING_NOTE)
        .exclude(entry__session_id="")
        .filter(
            Q(state=HeadState.ACTIVE)
            | Q(state=HeadState.INACTIVE, entry__head__state_reason=SESSION_END)
        )
    )


def note_finder(memory: Memory) -> Neighbourhoods:
    """The pass's neighbourhood finder. Only eligible notes can pair, so their neighbourhoods
    are looked up among them: in memory when they are at most ``SCOPE_MAX``, else through the
    index over every head."""
    scope = _notes(memory).order_by("entry_id").values_list("entry_id", flat=True)
    return scoped_neighbourhoods(memory, scope[: SCOPE_MAX + 1], heads=True, limit=base.NEIGHBOURS)


def _eligible(row: base.HeadRow | Neighbour, reasons: dict[int, str]) -> bool:
    if row.kind != Kind.WORKING_NOTE or not row.session_id:
        return False
    return row.state == HeadState.ACTIVE or reasons.get(row.entry_pk) == SESSION_END


def run_promotion(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """The promotion pass of one Memory (see the module docstring).

    Preconditions: a maintainer, not inside a transaction. A real run needs no
    ``jobs.promotion.enabled`` (the beat schedule's switch). Effects: promotion proposals filed
    by the system actor and the run row; the notes themselves do not change.
    """
    run = base.start(memory, actor=actor, job=NAME, dry_run=dry_run)
    memory = run.memory
    cfg = (memory.policy or {}).get("jobs", {}).get(NAME, {})
    sim = similarity()
    method = sim.method
    default = DEFAULT_THRESHOLD if sim.provider is None else calibration(sim.provider).promotion
    threshold = policy_threshold(cfg.get("threshold"), method, default)
    # Notes the model cannot read are paired by words, at the lexical threshold: a policy's
    # number is the configured similarity's, so with embeddings it leaves the lexical default.
    lexical = policy_threshold(cfg.get("threshold"), "lexical", DEFAULT_THRESHOLD)
    target_kind = str(cfg.get("target_kind", Kind.FACT))
    needed = promotion_min_sessions(memory)
    run.parameters.update(
        threshold=threshold, min_sessions=needed, target_kind=target_kind, method=method
    )
    if sim.provider is not None:
        run.parameters["unread_pairs"] = {"method": "lexical", "threshold": lexical}
    by_method = {"cosine": threshold, "lexical": lexical}
    edges, heads = _theme_edges(run, by_method, sim)
    run.counts["edges"] = len(edges)
    groups = clusters(sorted(edges))
    run.counts["themes"] = len(groups)
    pending = hooks.entries_with_pending_proposals(memory, [n for g in groups for n in g])
    for group, inside in zip(groups, edges_within(groups, edges), strict=True):
        members = base.most_complete_first(heads[n] for n in group)
        sessions = sorted({m.session_id for m in members})
        item = _theme_item(inside, members, sessions, edges, heads, by_method, sim)
        if len(sessions) < needed:
            run.record(item, "skipped_single_session")
            continue
        rationale = (
            f"Promotion pass: the same theme recurs in {len(sessions)} independent "
            f"sessions ({', '.join(sessions)}); promote it to a durable {target_kind}."
        )
        propose_merged(
            run,
            ProposalKind.PROMOTION,
            group,
            members,
            item,
            pending=pending,
            body_key="body",
            data={
                "rationale": rationale,
                "notes": [m.ref() for m in sorted(members, key=lambda r: r.entry_pk)],
                "target_kind": target_kind,
            },
        )
    return run.finish()


def _theme_edges(
    run: base.Pass, threshold: dict[str, float], sim: Similarity
) -> tuple[dict[tuple[int, int], float], dict[int, base.HeadRow]]:
    """Pairs of eligible notes from different sessions scoring at least the ``threshold`` of the
    method that scored them with no differing value, with their rounded scores, and the heads of
    their notes. Lexically a pair is first scored on the stored tokens (the same Jaccard); with
    an embedding provider by the cosine of the notes' stored vectors, read for each batch's
    pairs (:func:`_cosines`), when the model reads both notes (else lexically). Full rows are
    read only for the pairs passing."""
    provider = sim.provider
    memory = run.memory
    edges: dict[tuple[int, int], float] = {}
    kept: dict[int, base.HeadRow] = {}
    finder = note_finder(memory)
    for _pks, batch, near, light in base.neighbourhood_scan(run, _notes(memory), finder):
        reasons = {pk: h.state_reason for pk, h in light.items()}
        pairs: list[tuple[int, int]] = []
        worded: set[tuple[int, int]] = set()  # reaching the lexical threshold on the tokens
        for pk, ns in near.items():
            mine = batch[pk]
            tokens = mine.tokens
            for n in ns:
                other = light.get(n)
                if other is None or not _eligible(other, reasons):
                    continue
                if other.session_id == mine.session_id:
                    continue
                key = (min(pk, n), max(pk, n))
                if key in edges:
                    continue
                if jaccard(tokens, other.tokens) >= threshold["lexical"]:
                    worded.add(key)
                elif provider is None:
                    continue
                pairs.append((pk, n))
        cosines: dict[tuple[int, int], float] = {}
        if provider is not None:
            cosines = _cosines(run, provider, pairs)
            # A pair without a cosine (the model reads one of its notes not) is scored by its
            # words below, like every pair the model does not read.
            pairs = [
                (a, b)
                for a, b in pairs
                if (min(a, b), max(a, b)) not in cosines
                or cosines[(min(a, b), max(a, b))] >= threshold["cosine"]
                or (min(a, b), max(a, b)) in worded
            ]
        heads = base.load_heads(memory, {x for p in pairs for x in p}, evidence=False)
        for pk, n in pairs:
            row, full = heads[pk], heads[n]
            key = (min(pk, n), max(pk, n))
            if key in edges:
                continue
            cosine = cosines.get(key)
            if cosine is not None and sim.reads(row.body) and sim.reads(full.body):
                score, needed = cosine, threshold["cosine"]
            else:
                score, needed = lexical_similarity(row.body, full.body), threshold["lexical"]
            if score < needed or bodies.value_differences(row.body, full.body):
                continue
            edges[key] = round_score(score)
            kept[pk], kept[n] = row, full
    run.counts["lexical_queries"] = finder.queries
    return edges, kept


def _cosines(
    run: base.Pass, provider: EmbeddingProvider, pairs: list[tuple[int, int]]
) -> dict[tuple[int, int], float]:
    """The cosine of each pair's stored vectors (``memory.vectors.head_vectors``: the notes of
    one batch's pairs, in bounded queries), keyed ``(lower pk, higher pk)``; no cosine for a
    pair with a note the model does not read (it has no vector: its pair is scored by words).
    Counted as ``pairs_scored``."""
    from memory.vectors import head_vectors

    run.count("pairs_scored", len(pairs))
    if not pairs:
        return {}
    vectors = head_vectors(run.memory.pk, provider, {x for p in pairs for x in p})
    out: dict[tuple[int, int], float] = {}
    for a, b in pairs:
        u, v = vectors.get(a), vectors.get(b)
        if u is not None and v is not None:
            out[(min(a, b), max(a, b))] = max(0.0, min(1.0, float(np.dot(u, v))))
    return out


def _theme_item(
    inside: list[tuple[int, int]],
    members: list[base.HeadRow],
    sessions: list[str],
    edges: dict[tuple[int, int], float],
    heads: dict[int, base.HeadRow],
    by_method: dict[str, float],
    sim: Similarity,
) -> dict[str, Any]:
    """The receipt of one theme: its notes (the most complete first), their sessions, up to 20
    of the scored pairs inside it, and the methods that scored them ("cosine+lexical" when the
    model could read only some of the notes) with their thresholds (``inside``: the scored
    pairs inside the theme, :func:`~.near_duplicates.edges_within`)."""
    methods = sorted(
        {sim.method_for(heads[a].body, heads[b].body) for a, b in inside}, reverse=True
    )
    threshold: float | dict[str, float] = (
        by_method[methods[0]] if len(methods) == 1 else {m: by_method[m] for m in methods}
    )
    return {
        "entry_id": members[0].uid,
        "entries": base.uids(members),
        "reason": "recurring_theme",
        "inputs": {
            "sessions": sessions,
            "pairs": [[heads[a].uid, heads[b].uid, edges[(a, b)]] for a, b in inside[:20]],
            "threshold": threshold,
            "method": "+".join(methods),
        },
    }


JOB = base.pass_job(
    name=NAME,
    runner=run_promotion,
    description="Finds working notes that keep recurring and files promotion proposals "
    "(a durable fact, preference, decision or constraint).",
    settings={
        "threshold": THRESHOLD,
        "target_kind": OneOf(tuple(kind.value for kind in DURABLE_KINDS)),
    },
    # A session that ends may leave notes worth promoting.
    after_session_end=True,
)
