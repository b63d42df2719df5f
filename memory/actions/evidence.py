"""Evidence citations: parse, resolve against registered sources, union, read back."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypedDict

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lib.wording import listed

from ..admission import clean_id, clean_text
from ..exceptions import (
    TooLarge,
    ValidationFailed,
)
from ..models import (
    EntryVersion,
    Source,
    SourceDeclaration,
)

# --- Inputs ---------------------------------------------------------------------------------


class EvidenceItem(TypedDict, total=False):
    """A citation as a request carries it (JSON): what :func:`clean_evidence` parses."""

    source: str
    ref: str
    observed_at: str | None
    quote: str


@dataclass(frozen=True)
class EvidenceInput:
    """A parsed, validated citation (``clean_evidence`` made it): the value actions use."""

    source: str
    ref: str
    observed_at: datetime | None = None
    quote: str = ""

    @property
    def identity(self) -> str:
        """What the content hash and the evidence union compare."""
        return f"{self.source}|{self.ref}"


@dataclass(frozen=True)
class ResolvedEvidence:
    input: EvidenceInput
    source: Source
    declaration: SourceDeclaration | None


def parse_iso_datetime(value: str) -> datetime | None:
    """ISO 8601 text as an aware datetime (a naive one is UTC); None for text that is not one,
    including a well-formed but impossible date such as ``2025-13-45T00:00:00``."""
    try:
        parsed = parse_datetime(value)
    except ValueError:
        return None
    if parsed is None:
        return None
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def check_evidence_count(items: Sequence[Any], *, field_name: str = "evidence") -> None:
    """413 ``too_large`` past the evidence limit — for a request's list, and for a union a
    write would store (a revise stores the predecessor's evidence ∪ the new)."""
    from django.conf import settings

    limit = settings.STEWARD_MAX_EVIDENCE
    if len(items) > limit:
        raise TooLarge(
            f"At most {limit} evidence references (this write would store {len(items)}).",
            details={field_name: [f"At most {limit} references (got {len(items)})."]},
        )


#: What an action accepts as evidence: citations as a request carries them, or already parsed.
EvidenceArg = Sequence[EvidenceInput | EvidenceItem]


def clean_evidence(
    raw: EvidenceArg | None, *, field_name: str = "evidence", refuse: Iterable[str] | None = None
) -> list[EvidenceInput]:
    """Parse a list of ``{source, ref, observed_at?, quote?}`` citations into
    :class:`EvidenceInput` values, once: an item that already is one is kept as it is.

    The input usually comes from JSON (a serializer's output, an MCP tool's arguments), so its
    shape is checked here too: 400 ``invalid`` for anything but a list of objects."""
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise ValidationFailed(details={field_name: ["Must be a list."]})
    check_evidence_count(raw, field_name=field_name)
    out: list[EvidenceInput] = []
    for i, item in enumerate(raw):
        where = f"{field_name}[{i}]"
        if isinstance(item, EvidenceInput):
            out.append(item)
            continue
        if not isinstance(item, dict):
            raise ValidationFailed(details={where: ["Must be an object."]})
        unknown = set(item) - {"source", "ref", "observed_at", "quote"}
        if unknown:
            raise ValidationFailed(
                details={where: [f"Unknown field(s): {listed(sorted(unknown))}."]}
            )
        source = clean_id(item.get("source"), field=f"{where}.source")
        ref = clean_text(
            item.get("ref"), field=f"{where}.ref", required=True, limit=2000, refuse=refuse
        )
        observed = item.get("observed_at")
        observed_at = None
        if observed not in (None, ""):
            observed_at = parse_iso_datetime(observed) if isinstance(observed, str) else None
            if observed_at is None:
                raise ValidationFailed(details={f"{where}.observed_at": ["Not an ISO datetime."]})
        quote = clean_text(item.get("quote"), field=f"{where}.quote", limit=2000, refuse=refuse)
        out.append(EvidenceInput(source=source, ref=ref, observed_at=observed_at, quote=quote))
    return out


def resolve_evidence(items: Sequence[EvidenceInput]) -> list[ResolvedEvidence]:
    """Attach each citation to its registered source and that source's declaration *now*."""
    if not items:
        return []
    names = {i.source for i in items}
    sources = {s.name: s for s in Source.objects.filter(name__in=names)}
    missing = sorted(names - set(sources))
    if missing:
        raise ValidationFailed(
            f"Unknown source(s): {', '.join(missing)}. Register them first.",
            details={"evidence": [f"unknown source: {m}" for m in missing]},
        )
    latest: dict[int, SourceDeclaration] = {}
    for decl in SourceDeclaration.objects.filter(source__in=sources.values()).order_by(
        "source_id", "version"
    ):
        latest[decl.source_id] = decl
    return [ResolvedEvidence(i, sources[i.source], latest.get(sources[i.source].pk)) for i in items]


def dedupe_evidence(items: Iterable[EvidenceInput]) -> list[EvidenceInput]:
    seen: dict[str, EvidenceInput] = {}
    for item in items:
        seen.setdefault(item.identity, item)
    return list(seen.values())


def evidence_inputs_of(version: EntryVersion) -> list[EvidenceInput]:
    return [
        EvidenceInput(ev.source.name, ev.ref, ev.observed_at, ev.quote)
        for ev in version.evidence.select_related("source").order_by("position")
    ]


def evidence_json(items: Iterable[EvidenceInput]) -> list[dict[str, Any]]:
    """Citations as stored in JSON (relation evidence, proposal payloads)."""
    return [
        dataclasses.asdict(i)
        | {"observed_at": i.observed_at.isoformat() if i.observed_at else None}
        for i in items
    ]
