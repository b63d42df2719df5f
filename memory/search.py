"""Current-state recall: channels, validity before fusion, RRF, the coarse pool (DESIGN.md §6).

Pipeline for query q and limit k (constants are seeds in ``settings.STEWARD_SEARCH``)::

    lexical channel ─┐  each: at most max(4k, 32) candidates after its admission floor,
    vector channel  ─┤  authorization (Memory scope, clearance) and the validity filter of
                     │  the requested view applied *inside* the channel query
      → RRF (60): Σ 1/(60 + rank), ties by entry id then version id; truncate to the coarse
        pool (k, or max(k, 30) with a reranker)
      → bounded stable quality reorder (memory.ranking), only when the Memory's policy enables
        it and the pool's evidence carries source declarations
      → optional reranker over the same members (membership verified)
      → final limit k, never padded

Views: ``current`` drops inactive and superseded entries (unresolved conflicts stay, labelled);
``history`` searches every version of every entry and labels each hit (``replaced`` for
versions that are no longer the head).

Lexical channel
    FTS5 on SQLite, a GIN-indexed tsvector on PostgreSQL, both over the analyzer's tokens in
    ``EntryVersion.searchable_text`` (migration 0005). The full-text index only *finds* rows
    containing at least one query term; the admission floor and the order are computed with the
    same definitions on both backends (exact distinct-term counts, a portable ORDER BY), so
    SQLite and PostgreSQL return the same candidates in the same order:

    - admission floor: a query of n ≤ 2 distinct terms needs 1 matching term, a longer one
      max(2, ⌈0.25·n⌉);
    - order: more distinct matching terms first, then shorter texts (fewer tokens), then entry
      id, then version id — a total order.

Vector channel
    Only with an embedding provider (memory.embeddings). Cosine ≥ 0.3 admits. Vectors are a
    derived projection keyed by content hash; the scan is bounded (``VECTOR_MAX_SCAN``).

Ordinary search never writes. The :class:`RankingTrace` holds ids, ranks, rule codes and
counts — never body text — and is handed only to reviewers, auditors and staff.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from fractions import Fraction
from typing import Any, Protocol

from django.conf import settings
from django.db import connection
from django.db.models import Exists, F, OuterRef, Subquery
from django.utils import timezone
from django.utils.module_loading import import_string

from lib.errors import ValidationFailed

from .actors import Actor
from .models import (
    EntryVersion,
    Evidence,
    HeadState,
    LifecycleProjection,
    Memory,
    Sensitivity,
    Validity,
    sensitivities_up_to,
)
from .ranking import (
    INTENTS,
    FreshnessPolicy,
    QualityInputs,
    ReorderInvariantError,
    bounded_stable_reorder,
    has_current_intent,
    quality_votes,
)
from .text import distinct_terms

# Longest lexeme a PostgreSQL tsvector holds; longer tokens are not indexed there, so neither
# backend searches for them.
MAX_TERM_BYTES = 2046


def setting(name: str, default: int) -> int:
    """A search constant from ``settings.STEWARD_SEARCH`` (seeds live in config/settings.py)."""
    return int(getattr(settings, "STEWARD_SEARCH", {}).get(name, default))


def query_terms(text: str) -> list[str]:
    """Distinct analyzer terms of a query, first-seen order, bounded in number and length."""
    terms = [t for t in distinct_terms(text) if len(t.encode("utf-8")) <= MAX_TERM_BYTES]
    return terms[: setting("MAX_QUERY_TERMS", 64)]


def admission_floor(n_terms: int) -> int:
    """Distinct query terms a text must contain to be a lexical candidate."""
    if n_terms <= 2:
        return 1
    return max(2, math.ceil(0.25 * n_terms))


def channel_cap(k: int) -> int:
    """Most candidates one channel may contribute: max(4k, 32)."""
    return max(4 * k, setting("CHANNEL_MIN", 32))


# --- Lexical channel ------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One channel hit: an entry version at a 1-based rank within its channel."""

    entry_pk: int
    version_pk: int
    rank: int


# Views the lexical channel can scope to.
ACTIVE = "active"  # head versions of active entries (the near-duplicate check)
CURRENT = "current"  # head versions whose validity is current or unresolved_conflict
HEADS = "heads"  # every head version, whatever its state (trace counts of the validity filter)
HISTORY = "history"  # every version of every entry


def _scored_sql(memory_pk: int, terms: Sequence[str], floor: int) -> tuple[str, list[Any]]:
    """A subquery of (id, matched): versions containing at least one term, with the number of
    distinct query terms they contain. The counts are exact on both backends.

    SQLite counts from the FTS5 posting lists themselves (one MATCH per term, each intersected
    with the Memory's scope token, grouped), so no text is read before the admission floor has
    been applied and a Memory never walks another Memory's postings. PostgreSQL finds the rows with
    one GIN lookup (any term) and counts per term on the row's stored tsvector (the same tokens:
    a lexeme is present exactly when the analyzer token is): GIN rows cannot be read without
    the heap, so one heap visit per row beats one index probe per term. Terms are analyzer
    tokens (letters, digits, underscores), so quoting them as tsquery lexemes is safe.
    """
    if connection.vendor == "postgresql":
        hits = " + ".join("(v.search_vector @@ %s::tsquery)::int" for _ in terms)
        query = " | ".join(f"'{t}'" for t in terms)
        sql = (
            f"SELECT v.id AS id, ({hits}) AS matched FROM memory_entryversion v "
            "WHERE v.search_vector @@ %s::tsquery AND v.memory_id = %s"
        )
        return sql, [*(f"'{t}'" for t in terms), query, memory_pk]
    union = " UNION ALL ".join(
        "SELECT rowid AS id FROM memory_entryversion_fts WHERE memory_entryversion_fts MATCH %s"
        for _ in terms
    )
    sql = (
        f"SELECT id, COUNT(*) AS matched FROM ({union}) AS per_term "
        "GROUP BY id HAVING COUNT(*) >= %s"
    )
    # Each term is intersected with the Memory's scope token (migration 0010).
    scope = f'scope:"m{int(memory_pk)}" AND searchable_text:'
    return sql, [*(f'{scope}"{t}"' for t in terms), floor]


def lexical_channel(
    memory_pk: int,
    terms: Sequence[str],
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    exclude_entry_pks: Iterable[int] = (),
) -> list[Candidate]:
    """Lexical candidates of ``memory_pk`` for already-analyzed ``terms``, best first.

    ``view`` scopes the rows (ACTIVE / CURRENT / HISTORY); ``sensitivities`` (when given) is
    the caller's clearance, applied in the same query so nothing above it is ever ranked. One
    query, whatever the size of the Memory.
    """
    if not terms or limit <= 0:
        return []
    floor = admission_floor(len(terms))
    scored, params = _scored_sql(memory_pk, terms, floor)
    joins = ""
    where = ["v.memory_id = %s", "m.matched >= %s"]
    params += [memory_pk, floor]
    if view in (ACTIVE, CURRENT, HEADS):
        joins += " JOIN memory_head h ON h.version_id = v.id"
    if view in (ACTIVE, CURRENT):
        where.append("h.state = %s")
        params.append(HeadState.ACTIVE)
    # The projection carries the entry's (immutable) sensitivity: one join serves both filters.
    restricted = sensitivities is not None and set(Sensitivity.values) - set(sensitivities)
    if view == CURRENT or restricted:
        joins += " JOIN memory_lifecycleprojection p ON p.entry_id = v.entry_id"
    if view == CURRENT:
        where.append("p.validity IN (%s, %s)")
        params += [Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
    if restricted and sensitivities is not None:
        where.append(f"p.sensitivity IN ({', '.join(['%s'] * len(sensitivities))})")
        params += list(sensitivities)
    excluded = sorted(set(exclude_entry_pks))
    if excluded:
        where.append(f"v.entry_id NOT IN ({', '.join(['%s'] * len(excluded))})")
        params += excluded
    sql = f"""
        SELECT v.entry_id, v.id
        FROM ({scored}) m
        JOIN memory_entryversion v ON v.id = m.id{joins}
        WHERE {" AND ".join(where)}
        ORDER BY m.matched DESC,
                 length(v.searchable_text) - length(replace(v.searchable_text, ' ', '')) ASC,
                 v.entry_id ASC, v.id ASC
        LIMIT %s
    """
    params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Candidate(e, v, i) for i, (e, v) in enumerate(rows, start=1)]


def lexical_candidates(
    memory_pk: int, text: str, *, limit: int = 20, exclude_entry_pks: Iterable[int] = ()
) -> list[int]:
    """Pks of entries whose *active head version* matches ``text`` lexically, best first.

    Uses the admission floor of DESIGN.md §6; at most ``limit`` results; never padded. For the
    bounded near-duplicate check at admission (DESIGN.md §7): no clearance filter (the check is
    the system's, scoped to the Memory), and nothing is written.
    """
    found = lexical_channel(
        memory_pk,
        query_terms(text),
        view=ACTIVE,
        limit=limit,
        exclude_entry_pks=exclude_entry_pks,
    )
    return [c.entry_pk for c in found]


# --- Vector channel -------------------------------------------------------------------------


def vector_channel(
    memory_pk: int,
    query: str,
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
) -> list[Candidate]:
    """Candidates by cosine similarity to ``query`` (≥ the admission threshold), best first.

    Empty when no provider is configured. Scans the Memory's vectors in bounded batches, at most
    ``VECTOR_MAX_SCAN`` rows (newest versions first), so a request never loads a whole Memory.
    """
    from .embeddings import EntryEmbedding, get_provider, unpack

    provider = get_provider()
    if provider is None or limit <= 0 or not query.strip():
        return []
    qvec = provider.embed([query])[0]
    threshold = float(getattr(settings, "STEWARD_SEARCH", {}).get("VECTOR_MIN_COSINE", 0.3))
    qs = EntryVersion.objects.filter(memory_id=memory_pk)
    if view in (ACTIVE, CURRENT, HEADS):
        qs = qs.filter(entry__head__version_id=F("pk"))
    if view in (ACTIVE, CURRENT):
        qs = qs.filter(entry__head__state=HeadState.ACTIVE)
    if view == CURRENT:
        qs = qs.filter(
            entry__projection__validity__in=[Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
        )
    if sensitivities is not None:
        qs = qs.filter(entry__sensitivity__in=list(sensitivities))
    vectors = EntryEmbedding.objects.filter(
        provider=provider.key, content_hash=OuterRef("content_hash")
    ).values("vector")[:1]
    rows = (
        qs.annotate(vec=Subquery(vectors))
        .filter(vec__isnull=False)
        .order_by("-pk")
        .values_list("entry_id", "pk", "vec")
    )
    scan = setting("VECTOR_MAX_SCAN", 50_000)
    scored: list[tuple[float, int, int]] = []
    for entry_pk, version_pk, data in rows[:scan].iterator(chunk_size=2000):
        vec = unpack(data)
        cos = sum(a * b for a, b in zip(qvec, vec, strict=False))
        # Rounded so both backends (and every platform) order equal cosines the same way.
        cos = round(cos, 6)
        if cos >= threshold:
            scored.append((-cos, entry_pk, version_pk))
    scored.sort()
    return [Candidate(e, v, i) for i, (_, e, v) in enumerate(scored[:limit], start=1)]


# --- Fusion ---------------------------------------------------------------------------------

RRF_CONSTANT = 60
CHANNELS = ("lexical", "vector")


@dataclass
class Fused:
    """One fused pool member: its plain RRF score and its rank in each channel."""

    entry_pk: int
    version_pk: int
    score: Fraction
    channels: dict[str, int]

    @property
    def key(self) -> tuple[int, int]:
        return (self.entry_pk, self.version_pk)


def rrf_fuse(
    channels: Mapping[str, Sequence[Candidate]], *, constant: int = RRF_CONSTANT
) -> list[Fused]:
    """Reciprocal rank fusion: score = Σ 1/(constant + rank), exact (fractions), ordered by
    score descending, then entry id, then version id — a total order on every backend."""
    fused: dict[tuple[int, int], Fused] = {}
    for name, candidates in channels.items():
        for c in candidates:
            item = fused.get((c.entry_pk, c.version_pk))
            if item is None:
                item = fused[(c.entry_pk, c.version_pk)] = Fused(
                    c.entry_pk, c.version_pk, Fraction(0), {}
                )
            item.score += Fraction(1, constant + c.rank)
            item.channels[name] = c.rank
    return sorted(fused.values(), key=lambda f: (-f.score, f.entry_pk, f.version_pk))


def coarse_pool_size(k: int, *, reranker: bool) -> int:
    return max(k, setting("RERANK_POOL", 30)) if reranker else k


# --- Hits, reranker, trace ------------------------------------------------------------------


@dataclass
class Hit:
    """One search result (internal). ``score`` is the plain RRF score."""

    entry_pk: int
    version_pk: int
    entry_id: str
    version: int
    body: str
    score: float
    channels: dict[str, int]
    validity: str
    validity_reason: str
    successor_entry: str | None
    time_known: bool
    recorded_at: datetime | None
    effective_at: datetime | None
    is_head: bool
    state: str
    current_state: bool
    baseline_rank: int = 0
    quality_rank: int = 0
    rank: int = 0
    rules: list[str] = field(default_factory=list)
    quality: QualityInputs | None = None
    declared: bool = False

    @property
    def key(self) -> tuple[int, int]:
        return (self.entry_pk, self.version_pk)

    def lifecycle(self) -> dict[str, Any]:
        return {
            "validity": self.validity,
            "validity_reason": self.validity_reason,
            "successor_entry": self.successor_entry,
            "time_known": self.time_known,
            "recorded_at": self.recorded_at,
            "effective_at": self.effective_at,
            "state": self.state,
            "is_head": self.is_head,
        }


class Reranker(Protocol):
    """Reorders the coarse pool; must return exactly the members it was given."""

    name: str

    def rerank(self, query: str, hits: Sequence[Hit]) -> Sequence[Hit]: ...


def configured_reranker() -> Reranker | None:
    path = getattr(settings, "STEWARD_SEARCH", {}).get("RERANKER")
    return import_string(path)() if path else None  # type: ignore[no-any-return]


@dataclass
class RankingTrace:
    """Why the hits are in this order. Ids, ranks, counts and rule codes — no body text."""

    view: str
    limit: int
    terms: int
    admission_floor: int
    channel_cap: int
    channels: dict[str, int]
    validity_filter: dict[str, int]
    pool_size: int
    baseline: list[dict[str, Any]]
    adjusted: list[dict[str, Any]]
    quality: dict[str, Any]
    reranker: str | None
    unresolved_conflicts: int
    membership_changed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResult:
    hits: list[Hit]
    trace: RankingTrace


# --- The pipeline ---------------------------------------------------------------------------

VIEWS = ("current", "history")


def search(
    memory: Memory,
    *,
    actor: Actor,
    query: str,
    limit: int = 10,
    view: str = "current",
    intent: str | None = None,
    reranker: Reranker | None = None,
    trace: bool = False,
    now: datetime | None = None,
) -> SearchResult:
    """Recall from ``memory`` for ``actor`` (scope already checked by the caller).

    Read-only: never writes, never locks. A fixed number of queries: the channels (one each),
    the pool rows (one), and — only when ``trace`` is asked — the validity-filter counts (two).
    """
    if view not in VIEWS:
        raise ValidationFailed(details={"view": [f"One of {list(VIEWS)}."]})
    if intent is not None and intent not in INTENTS:
        raise ValidationFailed(details={"intent": [f"One of {list(INTENTS)}."]})
    max_limit = setting("MAX_LIMIT", 50)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise ValidationFailed(details={"limit": [f"An integer from 1 to {max_limit}."]})
    if reranker is None:
        reranker = configured_reranker()
    now = now or timezone.now()
    terms = query_terms(query)
    cap = channel_cap(limit)
    scope = CURRENT if view == "current" else HISTORY
    clearance = sensitivities_up_to(actor.clearance)

    ranked: dict[str, list[Candidate]] = {
        "lexical": lexical_channel(
            memory.pk, terms, view=scope, limit=cap, sensitivities=clearance
        ),
        "vector": vector_channel(memory.pk, query, view=scope, limit=cap, sensitivities=clearance),
    }
    fused = rrf_fuse(ranked)
    pool = fused[: coarse_pool_size(limit, reranker=reranker is not None)]
    baseline = _load_hits(pool)
    for i, hit in enumerate(baseline, start=1):
        hit.baseline_rank = i

    quality_on, why = _quality_gate(memory, baseline)
    current_intent = has_current_intent(query, intent)
    ordered = list(baseline)
    if quality_on:
        ordered = _reorder(ordered, current_intent=current_intent, memory=memory, now=now)
    for i, hit in enumerate(ordered, start=1):
        hit.quality_rank = i
    if reranker is not None:
        shown = list(ordered)
        ordered = list(reranker.rerank(query, shown))
        check_membership(shown, ordered)
    for i, hit in enumerate(ordered, start=1):
        hit.rank = i
    hits = ordered[:limit]

    filtered = (
        _validity_counts(memory.pk, query, terms, ranked, cap, clearance)
        if (trace and view == "current")
        else {}
    )
    return SearchResult(
        hits=hits,
        trace=RankingTrace(
            view=view,
            limit=limit,
            terms=len(terms),
            admission_floor=admission_floor(len(terms)) if terms else 0,
            channel_cap=cap,
            channels={name: len(c) for name, c in ranked.items()},
            validity_filter=filtered,
            pool_size=len(pool),
            baseline=[
                {
                    "entry_id": h.entry_id,
                    "version": h.version,
                    "rank": h.baseline_rank,
                    "score": h.score,
                    "channels": h.channels,
                }
                for h in baseline
            ],
            adjusted=[
                {
                    "entry_id": h.entry_id,
                    "version": h.version,
                    "baseline_rank": h.baseline_rank,
                    "quality_rank": h.quality_rank,
                    "rank": h.rank,
                    "shift": h.baseline_rank - h.quality_rank,
                    "rules": h.rules,
                    "returned": h.rank <= limit,
                }
                for h in ordered
            ],
            quality={"enabled": quality_on, "reason": why, "current_intent": current_intent},
            reranker=getattr(reranker, "name", type(reranker).__name__) if reranker else None,
            unresolved_conflicts=sum(
                1 for h in baseline if h.validity == Validity.UNRESOLVED_CONFLICT
            ),
            membership_changed=False,
        ),
    )


def check_membership(before: Sequence[Hit], after: Sequence[Hit]) -> None:
    """A reranker may only permute the members it was shown."""
    if len(before) != len(after) or {h.key for h in before} != {h.key for h in after}:
        raise ReorderInvariantError("the reranker changed the pool's membership")


def _load_hits(pool: Sequence[Fused]) -> list[Hit]:
    """The pool's rows with their lifecycle annotation: one query."""
    if not pool:
        return []
    declared = Evidence.objects.filter(version_id=OuterRef("pk"), declaration_version__isnull=False)
    rows = {
        v.pk: v
        for v in EntryVersion.objects.filter(pk__in=[f.version_pk for f in pool])
        .select_related(
            "revision",
            "entry",
            "entry__head",
            "entry__projection",
            "entry__projection__successor_entry",
        )
        .annotate(declared=Exists(declared))
    }
    hits = []
    for f in pool:
        v = rows[f.version_pk]
        head = v.entry.head
        p = getattr(v.entry, "projection", None)
        is_head = head.version_id == v.pk
        if is_head and p is not None:
            validity, reason = p.validity, p.validity_reason
            successor = p.successor_entry.uid if p.successor_entry else None
            time_known, recorded_at, effective_at = p.time_known, p.recorded_at, p.effective_at
            quality = QualityInputs(
                importance=p.importance,
                evidence_strength=p.evidence_strength,
                provenance=p.provenance or {},
                current_state=p.current_state,
                pinned=p.pinned,
                time_known=p.time_known,
                reference_time=p.effective_at or p.recorded_at,
            )
        else:
            validity, reason = REPLACED, f"replaced_by_version:{v.number + 1}"
            successor = None
            time_known, recorded_at = True, v.revision.recorded_at
            effective_at = v.effective_at
            quality = None
        hits.append(
            Hit(
                entry_pk=v.entry_id,
                version_pk=v.pk,
                entry_id=v.entry.uid,
                version=v.number,
                body=v.body,
                score=float(f.score),
                channels=dict(f.channels),
                validity=validity,
                validity_reason=reason,
                successor_entry=successor,
                time_known=time_known,
                recorded_at=recorded_at,
                effective_at=effective_at,
                is_head=is_head,
                state=head.state if is_head else "replaced",
                current_state=v.entry.current_state,
                quality=quality,
                declared=bool(getattr(v, "declared", False)),
            )
        )
    return hits


# A version that is no longer its entry's head (history view only).
REPLACED = "replaced"


def _quality_gate(memory: Memory, hits: Sequence[Hit]) -> tuple[bool, str]:
    """Quality ranking runs only when the policy enables it and declarations exist."""
    if memory.policy.get("quality_ranking") is not True:
        return False, "policy_off"
    if not any(h.declared for h in hits):
        return False, "no_declared_sources"
    return True, "enabled"


def _reorder(hits: list[Hit], *, current_intent: bool, memory: Memory, now: datetime) -> list[Hit]:
    fresh = FreshnessPolicy.from_policy(memory.policy)
    shifts: dict[tuple[int, int], int] = {}
    for h in hits:
        if h.quality is None:
            continue
        votes = quality_votes(h.quality, current_intent=current_intent, now=now, fresh=fresh)
        h.rules = votes.rules
        shifts[h.key] = votes.shift
    by_key = {h.key: h for h in hits}
    order = bounded_stable_reorder([h.key for h in hits], shifts)
    return [by_key[k] for k in order]


def _validity_counts(
    memory_pk: int,
    query: str,
    terms: Sequence[str],
    ranked: Mapping[str, Sequence[Candidate]],
    cap: int,
    clearance: Sequence[str],
) -> dict[str, int]:
    """How many admitted candidates the current view's validity filter removed, by validity
    (the channels run again over every head version, same floor and cap)."""
    kept = {c.entry_pk for cands in ranked.values() for c in cands}
    unfiltered = lexical_channel(memory_pk, terms, view=HEADS, limit=cap, sensitivities=clearance)
    unfiltered += vector_channel(memory_pk, query, view=HEADS, limit=cap, sensitivities=clearance)
    dropped = {c.entry_pk for c in unfiltered} - kept
    counts = {Validity.INACTIVE.value: 0, Validity.SUPERSEDED.value: 0}
    if dropped:
        for validity in LifecycleProjection.objects.filter(entry_id__in=dropped).values_list(
            "validity", flat=True
        ):
            counts[validity] = counts.get(validity, 0) + 1
    return counts
