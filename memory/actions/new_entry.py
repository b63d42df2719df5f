"""An add's input: the fields a caller passes (:class:`EntryFields`) and the admitted entry
they make (:class:`NewEntry`), checked once by :func:`clean_new_entry` before any lock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Required, TypedDict, Unpack

from ..admission import clean_body, clean_id, clean_text
from ..exceptions import ValidationFailed
from ..models import Sensitivity, Tier
from ..revalidation import default_review_at
from ..text import content_hash
from .evidence import (
    EvidenceArg,
    EvidenceInput,
    clean_evidence,
    dedupe_evidence,
    parse_iso_datetime,
)


def clean_datetime(value: str | None, field_name: str) -> datetime | None:
    """ISO 8601 text (the edges take it as text) as an aware datetime; a naive one is UTC."""
    if not value:
        return None
    parsed = parse_iso_datetime(value)
    if parsed is None:
        raise ValidationFailed(details={field_name: ["Not an ISO 8601 datetime."]})
    return parsed


@dataclass(frozen=True)
class NewEntry:
    """A validated, admitted add: normalized body, scanned, evidence deduplicated."""

    body: str
    kind: str
    tier: str = Tier.LONG
    session_id: str = ""
    sensitivity: str = Sensitivity.INTERNAL
    current_state: bool = False
    effective_at: datetime | None = None
    evidence: tuple[EvidenceInput, ...] = ()
    #: Governance (spec 004, ``memory.revalidation``): metadata of the entry, not of its text —
    #: never part of the content hash.
    owner: str = ""
    confidence: float | None = None
    review_at: datetime | None = None

    @property
    def content_hash(self) -> str:
        return content_hash(self.kind, self.body, [i.identity for i in self.evidence])

    def governance(self, policy: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
        """The governance attributes of the entry's ``add`` change: those given, and the
        review date the Memory's ``revalidation`` policy gives when none was
        (``memory.revalidation``); only the keys that carry a value."""
        review_at = self.review_at or default_review_at(
            policy,
            kind=self.kind,
            tier=self.tier,
            current_state=self.current_state,
            sources=[ev.source for ev in self.evidence],
            admitted_at=now,
        )
        out: dict[str, Any] = {}
        if self.owner:
            out["owner"] = self.owner
        if self.confidence is not None:
            out["confidence"] = self.confidence
        if review_at is not None:
            out["review_at"] = review_at.isoformat()
        return out


class EntryFields(TypedDict, total=False):
    """An add's fields, as the REST and MCP edges parse them (``EntryCreateIn``); Python
    callers pass the same keywords. ``clean_new_entry`` admits them."""

    body: Required[str]
    kind: Required[str | None]
    tier: str | None
    session_id: str | None
    current_state: bool
    #: ISO 8601 text; a naive time is taken as UTC.
    effective_at: str | None
    sensitivity: str | None
    evidence: EvidenceArg | None
    #: A user or team name (spec 004).
    owner: str | None
    #: 0..1.
    confidence: float | None
    #: ISO 8601 date or datetime: when the fact must be re-checked.
    review_at: str | None


_ENTRY_FIELDS = EntryFields.__required_keys__ | EntryFields.__optional_keys__


def clean_new_entry(
    *, refuse: Iterable[str] | None = None, **fields: Unpack[EntryFields]
) -> NewEntry:
    """Validate and admit (size limits, secret and personal-data scan; ``refuse``: the
    Memory's refused personal-data kinds) an add's fields. A keyword that is not one of
    :class:`EntryFields` is a caller's mistake (``TypeError``), as for any Python call."""
    unknown = sorted(set(fields) - _ENTRY_FIELDS)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    if "body" not in fields:
        raise ValidationFailed(details={"body": ["This field is required."]})
    kind = fields.get("kind")
    if kind is None:
        raise ValidationFailed(details={"kind": ["This field is required."]})
    tier = fields.get("tier") or Tier.LONG
    sensitivity = fields.get("sensitivity") or Sensitivity.INTERNAL
    session_id = fields.get("session_id")
    session = clean_id(session_id, field="session_id") if session_id not in (None, "") else ""
    if tier == Tier.SESSION and not session:
        raise ValidationFailed(details={"session_id": ["Session-tier entries need a session_id."]})
    text = clean_body(fields["body"], refuse=refuse)
    items = dedupe_evidence(clean_evidence(fields.get("evidence"), refuse=refuse))
    return NewEntry(
        body=text,
        kind=kind,
        tier=tier,
        session_id=session,
        sensitivity=sensitivity,
        current_state=fields.get("current_state", False),
        effective_at=clean_datetime(fields.get("effective_at"), "effective_at"),
        evidence=tuple(items),
        owner=clean_owner(fields.get("owner"), refuse=refuse),
        confidence=clean_confidence(fields.get("confidence")),
        review_at=clean_datetime(fields.get("review_at"), "review_at"),
    )


#: The longest ``owner``.
OWNER_MAX_CHARS = 200


def clean_owner(value: str | None, *, refuse: Iterable[str] | None = None) -> str:
    """A user or team name on one line: normalized, scanned like any stored text."""
    owner = clean_text(value, field="owner", limit=OWNER_MAX_CHARS, refuse=refuse)
    if "\n" in owner or "\r" in owner:
        raise ValidationFailed(details={"owner": ["One line: a user or team name."]})
    return owner.strip()


def clean_confidence(value: float | None) -> float | None:
    """A number from 0 to 1, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValidationFailed(details={"confidence": ["A number from 0 to 1."]})
    return float(value)
