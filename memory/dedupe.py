"""The bounded near-duplicate check at admission (DESIGN.md §7) and the similarity it uses.

On every add (unless the caller passes ``dedupe=false``) :func:`find_near_duplicates` takes at most
:data:`MAX_CANDIDATES` lexical candidates among the Memory's *active* entries
(``memory.search.lexical_candidates``) and scores each against the new body:

- score ≥ ``tau_same`` → a ``duplicate_of`` observation (the ``entry_admitted`` hook in
  ``proposals`` then files a consolidation proposal as the system actor);
- ``tau_similar`` ≤ score < ``tau_same`` → a ``near_duplicate_of`` observation.

Both relations are observations: non-authoritative, no revision, no change to heads or to the
projection. Similarity alone never merges, supersedes or retires anything. The write itself
always proceeds. An agent's ``near_duplicate_of`` claim is checked by the same scoring before
anything acts on it; a claim that does not reach ``tau_similar`` is ignored.

Similarity is pluggable: lexical (Jaccard over the analyzer's distinct tokens, a pure function)
by default, cosine over embeddings when an embedding provider is configured
(``settings.STEWARD_EMBEDDINGS["PROVIDER"]``, see ``memory.embeddings``) — for the pairs whose
two texts the model reads (``memory.embeddings.model_reads``: all-MiniLM-L6-v2 reads text in
Latin letters). A pair it cannot read is scored lexically and judged by the lexical thresholds:
the English model scores unrelated Thai, Korean or Hindi sentences 0.8-1.0. :class:`Similarity`
decides per pair; ``proposals.verify`` and the maintenance passes use it too. A policy's number
(``tau_same``, ``tau_similar``) is the threshold of the configured similarity and judges only the
pairs that similarity scores; ``{"cosine": x, "lexical": y}`` sets each (:func:`thresholds`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lib.errors import ValidationFailed
from lib.wording import listed

from .actors import Actor
from .embeddings import (
    MINILM_CALIBRATION,
    EmbeddingProvider,
    calibration,
    get_provider,
    model_reads,
)
from .jobs import Number
from .models import Entry, Head, HeadState, Memory, RelationKind, sensitivities_up_to
from .text import tokenize

#: Candidates scored per add: the check is bounded whatever the size of the Memory.
MAX_CANDIDATES = 20
#: Default (tau_same, tau_similar) per similarity method, calibrated on the labelled pair set of
#: ``manage.py evaluate dedupe`` (docs/recall-evaluation.md gives the precision and recall at
#: each). A Memory's policy ``tau_same`` / ``tau_similar`` overrides them
#: (:func:`policy_threshold`).
DEFAULT_THRESHOLDS = {
    "lexical": (0.9, 0.6),
    # all-MiniLM-L6-v2's; another model's are its own (:func:`thresholds`).
    "cosine": (MINILM_CALIBRATION.tau_same, MINILM_CALIBRATION.tau_similar),
}
DEFAULT_TAU_SAME, DEFAULT_TAU_SIMILAR = DEFAULT_THRESHOLDS["lexical"]
#: The similarity methods, the keys of a per-method policy threshold.
METHODS = ("cosine", "lexical")

# --- Similarity -----------------------------------------------------------------------------


def lexical_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the analyzer's distinct tokens of ``a`` and ``b`` (pure).

    Case, punctuation and spacing do not count; "eu-2" and "eu-3" do. Two empty texts are 0.
    """
    return jaccard(frozenset(tokenize(a)), frozenset(tokenize(b)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two token sets (0 when either is empty): the one implementation,
    used by the admission check and the passes alike."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def lexical_scores(text: str, others: Sequence[str]) -> list[float]:
    return [lexical_similarity(text, other) for other in others]


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine similarity, clamped to [0, 1] (opposite directions count as unrelated)."""
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    nu = math.sqrt(sum(x * x for x in u))
    nv = math.sqrt(sum(y * y for y in v))
    if nu == 0 or nv == 0:
        return 0.0
    return max(0.0, min(1.0, dot / (nu * nv)))


@dataclass(frozen=True)
class Score:
    """One pair's score and the similarity that gave it (``"cosine"`` or ``"lexical"``): judge
    it by that method's thresholds, never a Jaccard by a cosine one."""

    method: str
    value: float


@dataclass(frozen=True)
class Similarity:
    """The similarity that scores pairs of texts: the cosine of the provider's vectors when the
    provider reads both texts (:func:`~memory.embeddings.model_reads`), else lexical Jaccard."""

    provider: EmbeddingProvider | None

    @property
    def method(self) -> str:
        """The configured similarity: ``"cosine"`` with an embedding provider, else lexical."""
        return "lexical" if self.provider is None else "cosine"

    def reads(self, text: str) -> bool:
        """Whether the provider's vector of ``text`` means something (False without one)."""
        return self.provider is not None and model_reads(text, self.provider)

    def method_for(self, a: str, b: str) -> str:
        return "cosine" if self.reads(a) and self.reads(b) else "lexical"

    def scores(self, text: str, others: Sequence[str]) -> list[Score]:
        """The score of ``text`` against each other text (one model call for the cosines)."""
        methods = [self.method_for(text, other) for other in others]
        read = [other for other, m in zip(others, methods, strict=True) if m == "cosine"]
        cosines: list[float] = []
        if read and self.provider is not None:
            first, *rest = self.provider.embed([text, *read])
            cosines = [cosine(first, v) for v in rest]
        vectors = iter(cosines)
        return [
            Score(m, next(vectors) if m == "cosine" else lexical_similarity(text, other))
            for other, m in zip(others, methods, strict=True)
        ]


def similarity() -> Similarity:
    """The active similarity (:class:`Similarity` of the configured provider)."""
    return Similarity(get_provider())


def configured_method() -> str:
    """The configured similarity: ``"cosine"`` with an embedding provider, else lexical."""
    return "lexical" if get_provider() is None else "cosine"


def policy_threshold(value: Any, method: str, default: float) -> float:
    """The threshold a policy ``value`` sets for pairs scored by ``method``, else ``default``.

    An object ``{"cosine"?: x, "lexical"?: y}`` sets each method. A number is the threshold of
    the configured similarity (:func:`configured_method`) only: a number tuned for cosine would
    be far too loose for a Jaccard (and one tuned for Jaccard far too strict for a cosine), so
    the pairs the other method scores keep that method's ``default``."""
    if isinstance(value, dict):
        return float(value.get(method, default))
    if value is None or method != configured_method():
        return default
    return float(value)


#: What a similarity threshold is, whichever method it is for.
UNIT = Number(0, 1)


def check_threshold(value: object, field: str) -> None:
    """A similarity threshold as a policy states it (``tau_same``, a job's ``threshold``): a
    number from 0 to 1 (the configured similarity's), or an object setting it per method,
    ``{cosine?: 0..1, lexical?: 0..1}``; 400 ``invalid`` naming ``field`` otherwise."""
    if isinstance(value, dict):
        for method, number in value.items():
            if method not in METHODS:
                raise ValidationFailed(
                    details={f"{field}.{method}": [f"Unknown method; one of {listed(METHODS)}."]}
                )
            if not UNIT.accepts(number):
                raise ValidationFailed(details={f"{field}.{method}": ["A number from 0 to 1."]})
    elif not UNIT.accepts(value):
        raise ValidationFailed(
            details={field: ["A number from 0 to 1, or {cosine?, lexical?} of such numbers."]}
        )


@dataclass(frozen=True)
class Threshold:
    """A job setting shaped as a similarity threshold (a ``memory.jobs.Setting``)."""

    def check(self, value: object, field: str) -> None:
        check_threshold(value, field)


#: The shape of a job's similarity-threshold setting (``jobs.near_duplicates.threshold``).
THRESHOLD = Threshold()


def thresholds(memory: Memory, method: str | None = None) -> tuple[float, float]:
    """``(tau_same, tau_similar)`` for pairs scored by ``method`` (default: the configured
    similarity): the Memory's policy for that method (:func:`policy_threshold`), else the
    method's defaults; tau_similar never above tau_same."""
    if method is None:
        method = configured_method()
    same, similar = DEFAULT_THRESHOLDS[method]
    if method == "cosine":  # the configured model's own (memory.embeddings.Calibration)
        cal = calibration()
        same, similar = cal.tau_same, cal.tau_similar
    policy = memory.policy or {}
    tau_same = policy_threshold(policy.get("tau_same"), method, same)
    tau_similar = policy_threshold(policy.get("tau_similar"), method, similar)
    return tau_same, min(tau_similar, tau_same)


def round_score(score: float) -> float:
    return round(score, 4)


# --- Admission check ------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    entry: Entry
    version_number: int
    score: float
    relation: str
    claimed: bool = False
    method: str = "lexical"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "entry_id": self.entry.uid,
            "score": round_score(self.score),
            "relation": self.relation,
            # Which similarity scored the pair: each is judged on its own thresholds.
            "method": self.method,
        }
        if self.claimed:
            out["claimed"] = True
        return out


@dataclass(frozen=True)
class Admission:
    """What the near-duplicate check found for a body, computed before the Memory lock:
    ``method`` is the body's (``"cosine"`` when the model reads it), each finding has its
    pair's."""

    method: str
    findings: list[Finding]


def find_near_duplicates(
    memory: Memory,
    *,
    actor: Actor,
    body: str,
    near_duplicate_of: Any = None,
    entry: Entry | None = None,
    content_hash: str | None = None,
) -> Admission:
    """Score ``body`` against its nearest active entries of ``memory`` (plus the entry an agent
    claimed, if any) and keep those at or above ``tau_similar``.

    Candidates: at most :data:`MAX_CANDIDATES` lexical matches and, with an embedding provider,
    at most :data:`MAX_CANDIDATES` nearest vectors from the vector index (``memory.vectors``) —
    so a paraphrase sharing no word is noticed. Only entries within the actor's clearance are
    considered, so the answer never reveals an entry the caller could not read. Takes no lock
    (the add runs it before the Memory lock: the model call and the scoring are the slow part
    of an add); the body's embedding is cached under ``content_hash`` so indexing the new
    version after its commit needs no second model call. Best first, ties by entry id.
    ``entry`` (already stored) is never its own candidate.
    """
    sim = similarity()
    # A body the model cannot read is compared by words only: no vector candidates.
    provider = sim.provider if sim.reads(body) else None
    method = "lexical" if provider is None else "cosine"
    limits = {m: thresholds(memory, m) for m in ("lexical", "cosine")}
    clearance = sensitivities_up_to(actor.clearance)
    excluded = [entry.pk] if entry is not None else []
    pks, body_vec = _candidates(
        memory, body, provider, limits[method][1], clearance, excluded, content_hash
    )
    claim_uid = near_duplicate_of if isinstance(near_duplicate_of, str) else None
    heads = Head.objects.filter(
        memory=memory, state=HeadState.ACTIVE, entry__sensitivity__in=clearance
    ).select_related("entry", "version")
    claimed_head = None
    if claim_uid and (entry is None or claim_uid != entry.uid):
        claimed_head = heads.filter(entry__uid=claim_uid).first()
    rows = list(heads.filter(entry_id__in=pks)) if pks else []
    if claimed_head is not None and claimed_head.entry_id not in {h.entry_id for h in rows}:
        rows.append(claimed_head)
    if not rows:
        return Admission(method, [])
    scores = _scores(body, body_vec, rows, None if provider is None else sim)
    findings = [
        Finding(
            entry=h.entry,
            version_number=h.version.number,
            score=score.value,
            relation=(
                RelationKind.DUPLICATE_OF
                if score.value >= limits[score.method][0]
                else RelationKind.NEAR_DUPLICATE_OF
            ),
            claimed=claimed_head is not None and h.entry_id == claimed_head.entry_id,
            method=score.method,
        )
        for h, score in zip(rows, scores, strict=True)
        if score.value >= limits[score.method][1]
    ]
    findings.sort(key=lambda f: (-f.score, f.entry.pk))
    return Admission(method, findings)


def _scores(
    body: str, body_vec: Sequence[float], rows: list[Head], sim: Similarity | None
) -> list[Score]:
    """The body's score against each row's head: lexical without ``sim`` (no provider, or a body
    the model cannot read), else the cosine of the cached vectors for each head the model reads
    and Jaccard for the others."""
    if sim is None or sim.provider is None:
        return [Score("lexical", s) for s in lexical_scores(body, [h.version.body for h in rows])]
    from .vectors import vectors_for

    read = {h.entry_id for h in rows if sim.reads(h.version.body)}
    cached = vectors_for(
        sim.provider, [(h.version.content_hash, h.version.body) for h in rows if h.entry_id in read]
    )
    return [
        Score("cosine", cosine(body_vec, cached[h.version.content_hash].tolist()))
        if h.entry_id in read
        else Score("lexical", lexical_similarity(body, h.version.body))
        for h in rows
    ]


def _candidates(
    memory: Memory,
    body: str,
    provider: EmbeddingProvider | None,
    tau_similar: float,
    clearance: list[str],
    excluded: list[int],
    content_hash: str | None,
) -> tuple[list[int], Sequence[float]]:
    """The entries ``body`` is scored against (lexical matches, then the nearest vectors with an
    embedding provider) and the body's vector (empty without a provider)."""
    from .search import ACTIVE, lexical_candidates
    from .vectors import nearest, vectors_for

    # Lexically, a text sharing too few terms cannot reach tau_similar: the candidate query
    # may leave it out (same findings). Embeddings can score any text, so not for cosine.
    pks = lexical_candidates(
        memory.pk,
        body,
        limit=MAX_CANDIDATES,
        exclude_entry_pks=excluded,
        min_jaccard=tau_similar if provider is None else 0.0,
    )
    if provider is None:
        return pks, []
    body_vec: Sequence[float] = (
        vectors_for(provider, [(content_hash, body)])[content_hash].tolist()
        if content_hash
        else provider.embed([body])[0]
    )
    near, _ = nearest(
        memory.pk,
        body_vec,
        provider=provider,
        view=ACTIVE,
        limit=MAX_CANDIDATES,
        sensitivities=clearance,
        min_cosine=tau_similar,
        exclude_entry_pks=excluded,
    )
    return list(dict.fromkeys([*pks, *(e for e, _, _ in near)])), body_vec
