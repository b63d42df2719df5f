"""The audit log's filters and the one filtered event queryset.

Every read starts from the actor. :func:`audit_events_for` is the one queryset behind the
``/audit/`` page, ``GET /api/v1/audit/events`` and the export, so a filter means the same thing
everywhere. The scope rules and the redaction are the event stream's own
(``memory.audit_events``: who may read it, the Memories a key sees, what is withheld below
``restricted`` clearance); on top of them, a reader below ``restricted`` never matches a hidden
entry's labels with free text, and filtering on such an entry's id answers exactly as filtering
on an id that does not exist (no events): nothing confirms that a hidden entry exists.

Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from lib.errors import NotFound, ValidationFailed
from lib.identity import Actor
from lib.wording import one_of
from memory.audit import ACTIONS
from memory.audit_events import AuditEventQuerySet as AuditEventQuerySet
from memory.audit_events import audit_events as audit_events
from memory.audit_events import hidden_entry_uids as hidden_entry_uids
from memory.audit_events import is_hidden as is_hidden
from memory.audit_events import is_hidden_entry, sees_everything
from memory.audit_events import may_read_audit as may_read_audit
from memory.audit_events import redact as redact
from memory.audit_events import visible_entry_ids as visible_entry_ids
from memory.models import Memory

#: Event families (``kind`` filter): the part of the action before the dot.
KINDS: tuple[str, ...] = tuple(sorted({name.split(".", 1)[0] for name in ACTIONS}))

#: Query parameters understood by the log, the events API and the export.
FILTER_PARAMS = ("memory", "actor", "action", "kind", "since", "until", "q", "correlation", "entry")

_MAX_TEXT = 200


# --- Filters --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilter:
    """A parsed, validated filter. ``raw`` keeps the caller's strings for shareable URLs."""

    memory: Memory | None = None
    actor: str = ""
    action: str = ""
    kind: str = ""
    since: datetime | None = None
    # Exclusive upper bound; a date-only ``until`` means "through the end of that day".
    until: datetime | None = None
    q: str = ""
    correlation: str = ""
    entry: str = ""
    raw: Mapping[str, str] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.raw)

    def query_string(self, **extra: str) -> str:
        """The filter as a query string (without a cursor), plus ``extra`` parameters."""
        params = {k: v for k, v in self.raw.items() if v}
        params.update({k: v for k, v in extra.items() if v})
        return urlencode(params)


def parse_audit_filter(
    actor: Actor,
    params: Mapping[str, Any],
    *,
    strict: bool = False,
    allowed_extra: Iterable[str] = ("cursor", "limit"),
) -> AuditFilter:
    """Validate filter parameters. Bad values → :class:`ValidationFailed` (400) with details per
    field; a Memory the actor cannot see → :class:`NotFound` (404). ``strict`` refuses unknown
    parameters (the API), the page ignores them."""
    errors: dict[str, list[str]] = {}
    if strict:
        unknown = sorted(set(params) - set(FILTER_PARAMS) - set(allowed_extra))
        for name in unknown:
            errors[name] = ["Unknown field."]
    raw = {k: str(params.get(k) or "").strip() for k in FILTER_PARAMS}
    raw = {k: v for k, v in raw.items() if v}
    for name, value in raw.items():
        if len(value) > _MAX_TEXT:
            errors.setdefault(name, []).append(f"At most {_MAX_TEXT} characters.")
    action = raw.get("action", "")
    if action and action not in ACTIONS:
        errors.setdefault("action", []).append("Not a registered action.")
    kind = raw.get("kind", "")
    if kind and kind not in KINDS:
        errors.setdefault("kind", []).append(one_of(KINDS))
    since = _parse_moment(raw.get("since", ""), "since", errors, end_of_day=False)
    until = _parse_moment(raw.get("until", ""), "until", errors, end_of_day=True)
    if since and until and since >= until:
        errors.setdefault("until", []).append("Must be after since.")
    if errors:
        raise ValidationFailed(details=errors)
    memory = None
    if raw.get("memory"):
        memory = Memory.objects.visible_to(actor).filter(slug=raw["memory"]).first()
        if memory is None:
            raise NotFound(f"No memory '{raw['memory']}'.")
    return AuditFilter(
        memory=memory,
        actor=raw.get("actor", ""),
        action=action,
        kind=kind,
        since=since,
        until=until,
        q=raw.get("q", ""),
        correlation=raw.get("correlation", ""),
        entry=raw.get("entry", ""),
        raw=raw,
    )


def _parse_moment(
    value: str, name: str, errors: dict[str, list[str]], *, end_of_day: bool
) -> datetime | None:
    if not value:
        return None
    try:
        day = parse_date(value)
    except ValueError:
        day = None
    if day is not None:
        start = datetime.combine(day, time.min, tzinfo=UTC)
        return start + timedelta(days=1) if end_of_day else start
    moment = None
    # A "+02:00" offset arrives as " 02:00" when the caller did not escape the plus sign.
    for candidate in (value, value.replace(" ", "+")):
        try:
            moment = parse_datetime(candidate)
        except ValueError:
            moment = None
        if moment is not None:
            break
    if moment is None:
        errors.setdefault(name, []).append("An ISO 8601 date or datetime.")
        return None
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


# --- The filtered queryset ------------------------------------------------------------------


def matching(qs: AuditEventQuerySet, f: AuditFilter) -> AuditEventQuerySet:
    """``qs`` narrowed by the filter."""
    if f.memory is not None:
        qs = qs.filter(memory_id=f.memory.pk)
    if f.actor:
        qs = qs.filter(Q(actor_id=f.actor) | Q(on_behalf_of=f.actor) | Q(actor_label=f.actor))
    if f.action:
        qs = qs.filter(action=f.action)
    if f.kind:
        qs = qs.filter(action__startswith=f"{f.kind}.")
    if f.since is not None:
        qs = qs.filter(recorded_at__gte=f.since)
    if f.until is not None:
        qs = qs.filter(recorded_at__lt=f.until)
    if f.correlation:
        qs = qs.filter(correlation_id=f.correlation)
    if f.entry:
        qs = qs.touching_entry(f.entry)
    if f.q:
        qs = qs.filter(
            Q(label__icontains=f.q) | Q(actor_label__icontains=f.q) | Q(memory_label__icontains=f.q)
        )
    return qs


def audit_events_for(actor: Actor, f: AuditFilter) -> AuditEventQuerySet:
    """The one audit queryset: the actor's scope, then the filter (page, API and export)."""
    if f.entry and is_hidden_entry(actor, f.entry):
        # As for an id that does not exist: no event mentions it.
        return audit_events().none()
    qs = matching(audit_events().visible_to(actor), f)
    if f.q and not sees_everything(actor):
        # Free text must not probe the labels the actor may not read, nor find hidden ids.
        qs = qs.without_hidden_revisions(actor).without_hidden_entries(actor)
    return qs
