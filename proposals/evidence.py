"""Evidence as a proposal stores it, and the union of several entries' evidence.

A proposal (and a new successor inside it) keeps its citations as JSON with the snapshot of each
source's declaration at submission: :func:`evidence_json` writes that form, :func:`inputs_from_json`
reads it back as citations for the revision writer. :func:`union` is the one evidence union —
first occurrence wins, by ``identity`` (source and reference) — used by approval plans and by the
proposal page. :func:`parse_time` reads the ISO datetimes these records carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from django.utils.dateparse import parse_datetime

from memory.actions import EvidenceInput, ResolvedEvidence


class _HasIdentity(Protocol):
    @property
    def identity(self) -> str: ...


T = TypeVar("T", bound=_HasIdentity)


def union(*groups: Iterable[T]) -> list[T]:
    """Every item of ``groups`` once, in order of first appearance, compared by ``identity``."""
    seen: dict[str, T] = {}
    for group in groups:
        for item in group:
            seen.setdefault(item.identity, item)
    return list(seen.values())


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 datetime from a stored record; ``None`` for anything else."""
    return parse_datetime(value) if isinstance(value, str) else None


def evidence_json(items: Sequence[ResolvedEvidence]) -> list[dict[str, Any]]:
    """Resolved citations as stored on a proposal, each with its declaration snapshot."""
    return [
        {
            "source": ev.input.source,
            "ref": ev.input.ref,
            "observed_at": ev.input.observed_at.isoformat() if ev.input.observed_at else None,
            "quote": ev.input.quote,
            "snapshot": {
                "authority": ev.declaration.authority if ev.declaration else "untrusted",
                "verification": ev.declaration.verification if ev.declaration else "unknown",
                "declaration_version": ev.declaration.version if ev.declaration else None,
            },
        }
        for ev in items
    ]


def inputs_from_json(items: Iterable[dict[str, Any]] | None) -> list[EvidenceInput]:
    """Stored citations back as inputs for the revision writer (snapshots are re-resolved)."""
    return [
        EvidenceInput(
            source=item["source"],
            ref=item["ref"],
            observed_at=parse_time(item.get("observed_at")),
            quote=item.get("quote") or "",
        )
        for item in items or []
    ]
