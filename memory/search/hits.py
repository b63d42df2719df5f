"""Search hits: loading the pool with its lifecycle annotation and provenance, the reranker
contract.

Every hit carries where it came from (spec 004's output contract, API.md "Recall"): the entry's
``kind``, ``tier`` and ``session_id``, its ``effective_at`` and ``recorded_at``, and
``provenance`` — one ``{source, authority, observed_at}`` per citation of the version's evidence,
in the order the evidence was given (identical citations once), ``authority`` being the source's
declaration as snapshotted when the evidence was written (never today's registry, DESIGN.md §2).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.module_loading import import_string

from ..models import (
    EntryVersion,
    Evidence,
)
from ..ranking import (
    QualityInputs,
    ReorderInvariantError,
)
from ..revalidation import is_due
from .fusion import Fused


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
    kind: str = ""
    tier: str = ""
    session_id: str | None = None
    provenance: list[dict[str, Any]] = field(default_factory=list)
    baseline_rank: int = 0
    quality_rank: int = 0
    rank: int = 0
    rules: list[str] = field(default_factory=list)
    quality: QualityInputs | None = None
    declared: bool = False
    #: The entry's governance fields (spec 004, ``memory.revalidation``): entry-level, so a
    #: replaced version's hit (history view) shows its entry's.
    owner: str | None = None
    confidence: float | None = None
    review_at: datetime | None = None
    review_due: bool = False
    #: The short question this turn answers in its conversation, read with it by the reranker
    #: (``memory.search.exchanges``); None when it answers none or no reranker runs.
    asked: str | None = None

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


class Configured(enum.Enum):
    """The one value of ``search(reranker=CONFIGURED)``, its default: the reranker
    ``STEWARD_SEARCH["RERANKER"]`` names, if any (``reranker=None`` asks for none)."""

    RERANKER = "configured"


CONFIGURED: Final = Configured.RERANKER


def chosen_reranker(reranker: Reranker | Configured | None) -> Reranker | None:
    """The reranker a search runs: the one given, none for None, the configured one for
    :data:`CONFIGURED`."""
    return configured_reranker() if reranker is CONFIGURED else reranker


def configured_reranker() -> Reranker | None:
    path = getattr(settings, "STEWARD_SEARCH", {}).get("RERANKER")
    return import_string(path)() if path else None  # type: ignore[no-any-return]


def check_membership(before: Sequence[Hit], after: Sequence[Hit]) -> None:
    """A reranker may only permute the members it was shown."""
    if len(before) != len(after) or {h.key for h in before} != {h.key for h in after}:
        raise ReorderInvariantError("the reranker changed the pool's membership")


def provenance_of(version_pks: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Each version's citations as ``{source, authority, observed_at}``, in evidence order,
    identical ones once: one query for any number of versions."""
    out: dict[int, list[dict[str, Any]]] = {pk: [] for pk in version_pks}
    rows = (
        Evidence.objects.filter(version_id__in=list(version_pks))
        .order_by("version_id", "position")
        .values_list("version_id", "source__name", "authority", "observed_at")
    )
    for version_pk, source, authority, observed_at in rows:
        cited = {"source": source, "authority": authority, "observed_at": observed_at}
        if cited not in out[version_pk]:
            out[version_pk].append(cited)
    return out


def load_hits(pool: Sequence[Fused], now: datetime | None = None) -> list[Hit]:
    """The pool's rows with their lifecycle annotation (one query) and their provenance (one);
    ``review_due`` as of ``now`` (default: the present)."""
    if not pool:
        return []
    now = now or timezone.now()
    cited = provenance_of([f.version_pk for f in pool])
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
            # The projection's rule (DESIGN.md §5) over this version: its own time, else its
            # evidence's latest observation.
            observed = [c["observed_at"] for c in cited[v.pk] if c["observed_at"] is not None]
            effective_at = v.effective_at or max(observed, default=None)
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
                kind=v.entry.kind,
                tier=v.entry.tier,
                session_id=v.entry.session_id or None,
                provenance=cited[v.pk],
                quality=quality,
                declared=bool(getattr(v, "declared", False)),
                owner=head.owner or None,
                confidence=head.confidence,
                review_at=head.review_at,
                review_due=is_due(head.review_at, now),
            )
        )
    return hits


# A version that is no longer its entry's head (history view only).
REPLACED = "replaced"
