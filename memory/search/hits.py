"""Search hits: loading the pool with its lifecycle annotation, the reranker contract."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils.module_loading import import_string

from ..models import (
    EntryVersion,
    Evidence,
)
from ..ranking import (
    QualityInputs,
    ReorderInvariantError,
)
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


def check_membership(before: Sequence[Hit], after: Sequence[Hit]) -> None:
    """A reranker may only permute the members it was shown."""
    if len(before) != len(after) or {h.key for h in before} != {h.key for h in after}:
        raise ReorderInvariantError("the reranker changed the pool's membership")


def load_hits(pool: Sequence[Fused]) -> list[Hit]:
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
