"""The audit event stream's reads: filters, the one event queryset, and redaction.

Every read starts from the actor. :func:`audit_events_for` is the one queryset behind the
``/audit/`` page, ``GET /api/v1/audit/events`` and the export, so a filter means the same thing
everywhere. Scope rules:

- reviewers, auditors and staff may read the audit trail (:func:`may_read_audit`); agents may not;
- a key limited to Memories sees only those Memories' events (events without a Memory — keys
  issued, sources registered — only for unscoped readers);
- a key below ``restricted`` clearance sees events about entries above its clearance with the
  label, the payload *and those entries' ids* withheld (``redacted``); its free-text search
  never matches them, and filtering on such an entry's id answers exactly as filtering on an id
  that does not exist (no events): nothing confirms that a hidden entry exists.

Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db import connection, models
from django.db.models import BooleanField, Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from lib.errors import NotFound, ValidationFailed
from lib.wording import one_of
from memory.actors import STAFF, Actor
from memory.audit import ACTIONS
from memory.models import (
    ApiRole,
    AuditEvent,
    Entry,
    Memory,
    RevisionChange,
    Sensitivity,
    sensitivities_up_to,
)

#: Roles that may read the audit trail. Auditors read everything in scope and change nothing.
AUDIT_READERS = frozenset({ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF})

#: Event families (``kind`` filter): the part of the action before the dot.
KINDS: tuple[str, ...] = tuple(sorted({name.split(".", 1)[0] for name in ACTIONS}))

#: Query parameters understood by the log, the events API and the export.
FILTER_PARAMS = ("memory", "actor", "action", "kind", "since", "until", "q", "correlation", "entry")

_MAX_TEXT = 200


def may_read_audit(actor: Actor) -> bool:
    return actor.role in AUDIT_READERS


def _sees_everything(actor: Actor) -> bool:
    return actor.clearance == Sensitivity.RESTRICTED


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


# --- The event queryset ---------------------------------------------------------------------


class AuditEventQuerySet(models.QuerySet[AuditEvent]):
    """Chainable reads over :class:`memory.models.AuditEvent` (which lives in ``memory`` with a
    plain manager; the audit reads belong to this app)."""

    def visible_to(self, actor: Actor) -> AuditEventQuerySet:
        if actor.memory_ids is None:
            return self
        return self.filter(memory_id__in=sorted(actor.memory_ids))

    def touching_entry(self, uid: str) -> AuditEventQuerySet:
        """Events whose ``entry_ids`` list contains ``uid``."""
        if connection.features.supports_json_field_contains:
            return self.filter(entry_ids__contains=[uid])
        # SQLite stores the list as JSON text: match the quoted id.
        return self.filter(entry_ids__icontains=f'"{uid}"')

    def matching(self, f: AuditFilter) -> AuditEventQuerySet:
        qs = self
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
                Q(label__icontains=f.q)
                | Q(actor_label__icontains=f.q)
                | Q(memory_label__icontains=f.q)
            )
        return qs

    def without_hidden_entries(self, actor: Actor) -> AuditEventQuerySet:
        """Drop events whose ``entry_ids`` name an entry above the actor's clearance."""
        hidden = _hidden_sensitivities(actor)
        if not hidden:
            return self
        elements = (
            "jsonb_array_elements_text(memory_auditevent.entry_ids) AS ids(uid)"
            if connection.vendor == "postgresql"
            else "json_each(memory_auditevent.entry_ids) AS ids"
        )
        value = "ids.uid" if connection.vendor == "postgresql" else "ids.value"
        marks = ", ".join(["%s"] * len(hidden))
        sql = (
            f"EXISTS (SELECT 1 FROM {elements} JOIN memory_entry e ON e.uid = {value} "
            f"AND e.memory_id = memory_auditevent.memory_id WHERE e.sensitivity IN ({marks}))"
        )
        return self.alias(_mentions_hidden=RawSQL(sql, hidden, output_field=BooleanField())).filter(
            _mentions_hidden=False
        )

    def without_hidden_revisions(self, actor: Actor) -> AuditEventQuerySet:
        """Drop events of revisions that touched an entry above the actor's clearance."""
        hidden = Sensitivity.values[len(sensitivities_up_to(actor.clearance)) :]
        touched = RevisionChange.objects.filter(
            revision__memory_id=OuterRef("memory_id"),
            revision__number=OuterRef("revision_number"),
            entry__sensitivity__in=hidden,
        )
        return self.exclude(Exists(touched))


def audit_events() -> AuditEventQuerySet:
    return AuditEventQuerySet(model=AuditEvent)


def _hidden_sensitivities(actor: Actor) -> list[str]:
    return list(Sensitivity.values[len(sensitivities_up_to(actor.clearance)) :])


def is_hidden_entry(actor: Actor, uid: str) -> bool:
    """Whether ``uid`` names an entry, in a Memory the actor reads, above its clearance."""
    if _sees_everything(actor) or not uid:
        return False
    qs = Entry.objects.filter(uid=uid, sensitivity__in=_hidden_sensitivities(actor))
    if actor.memory_ids is not None:
        qs = qs.filter(memory_id__in=sorted(actor.memory_ids))
    return qs.exists()


def audit_events_for(actor: Actor, f: AuditFilter) -> AuditEventQuerySet:
    """The one audit queryset: the actor's scope, then the filter (page, API and export)."""
    if f.entry and is_hidden_entry(actor, f.entry):
        # As for an id that does not exist: no event mentions it.
        return audit_events().none()
    qs = audit_events().visible_to(actor).matching(f)
    if f.q and not _sees_everything(actor):
        # Free text must not probe the labels the actor may not read, nor find hidden ids.
        qs = qs.without_hidden_revisions(actor).without_hidden_entries(actor)
    return qs


def hidden_entry_uids(actor: Actor, rows: Sequence[Any]) -> set[tuple[int, str]]:
    """``(memory_id, uid)`` of the entries mentioned by ``rows`` that are above the actor's
    clearance. Rows are events or ``.values()`` dicts. One query per 500 ids; none when the actor
    sees everything."""
    if _sees_everything(actor):
        return set()
    pairs = {(_get(r, "memory_id"), uid) for r in rows for uid in _get(r, "entry_ids") or ()}
    pairs = {(m, u) for m, u in pairs if m is not None}
    if not pairs:
        return set()
    visible = sensitivities_up_to(actor.clearance)
    uids = sorted({u for _, u in pairs})
    memory_ids = sorted({m for m, _ in pairs})
    found: set[tuple[int, str]] = set()
    for i in range(0, len(uids), 500):
        found.update(
            Entry.objects.filter(memory_id__in=memory_ids, uid__in=uids[i : i + 500])
            .exclude(sensitivity__in=visible)
            .values_list("memory_id", "uid")
        )
    return found & pairs


def is_hidden(row: Any, hidden: set[tuple[int, str]]) -> bool:
    memory_id = _get(row, "memory_id")
    return any((memory_id, uid) in hidden for uid in _get(row, "entry_ids") or ())


def visible_entry_ids(row: Any, hidden: set[tuple[int, str]]) -> list[str]:
    """The row's ``entry_ids`` without those above the actor's clearance."""
    memory_id = _get(row, "memory_id")
    return [uid for uid in _get(row, "entry_ids") or () if (memory_id, uid) not in hidden]


def redact(events: Sequence[AuditEvent], actor: Actor) -> list[AuditEvent]:
    """Withhold label, payload and hidden entry ids of events about entries above the actor's
    clearance (on the in-memory instances only; audit rows are never written)."""
    hidden = hidden_entry_uids(actor, events)
    for event in events:
        event.redacted = is_hidden(event, hidden)  # type: ignore[attr-defined]
        if event.redacted:  # type: ignore[attr-defined]
            event.label = ""
            event.payload = {}
            event.entry_ids = visible_entry_ids(event, hidden)
    return list(events)


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, dict) else getattr(row, name)
