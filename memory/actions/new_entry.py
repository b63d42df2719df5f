"""An add's input: the fields a caller passes (:class:`EntryFields`) and the admitted entry
they make (:class:`NewEntry`), checked once by :func:`clean_new_entry` before any lock."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Required, TypedDict, Unpack

from ..admission import clean_body, clean_id
from ..exceptions import ValidationFailed
from ..models import Sensitivity, Tier
from ..text import content_hash
from .evidence import (
    EvidenceArg,
    EvidenceInput,
    clean_evidence,
    dedupe_evidence,
    parse_iso_datetime,
)


def _clean_datetime(value: str | None, field_name: str) -> datetime | None:
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

    @property
    def content_hash(self) -> str:
        return content_hash(self.kind, self.body, [i.identity for i in self.evidence])


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
        effective_at=_clean_datetime(fields.get("effective_at"), "effective_at"),
        evidence=tuple(items),
    )
