"""Reads for the audit trail: the event log, the entry timeline and the revision page.

Every read starts from the actor. :func:`audit_events_for` is the one queryset behind the
``/audit/`` page, ``GET /api/v1/audit/events`` and the export, so a filter means the same thing
everywhere. Scope rules:

- reviewers, auditors and staff may read the audit trail (:func:`may_read_audit`); agents may not;
- a key limited to Memories sees only those Memories' events (events without a Memory — keys
  issued, sources registered — only for unscoped readers);
- a key below ``restricted`` clearance sees events about entries above its clearance with the
  label and payload withheld (``redacted``), and its free-text search never matches them.

Nothing here writes. Sections that depend on the proposals and review apps (proposals, decisions,
operations) read those models through the app registry and simply stay empty while the models do
not exist yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.apps import apps
from django.db import connection, models
from django.db.models import Exists, OuterRef, Prefetch, Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from lib.errors import NotFound, ValidationFailed
from memory.actors import STAFF, Actor
from memory.audit import ACTIONS
from memory.models import (
    ApiRole,
    AuditEvent,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    HeadState,
    Memory,
    Relation,
    Revision,
    RevisionChange,
    Sensitivity,
    SourceDeclaration,
    sensitivities_up_to,
)

from .diffs import Segment, word_diff

#: Roles that may read the audit trail. Auditors read everything in scope and change nothing.
AUDIT_READERS = frozenset({ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF})

#: Event families (``kind`` filter): the part of the action before the dot.
KINDS: tuple[str, ...] = tuple(sorted({name.split(".", 1)[0] for name in ACTIONS}))

#: Query parameters understood by the log, the events API and the export.
FILTER_PARAMS = ("memory", "actor", "action", "kind", "since", "until", "q", "correlation", "entry")

_MAX_TEXT = 200

#: Audit events shown on an entry timeline (newest); the log pages through all of them.
TIMELINE_EVENTS = 200


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
            errors[name] = ["Unknown parameter."]
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
        errors.setdefault("kind", []).append(f"One of {list(KINDS)}.")
    since = _parse_moment(raw.get("since", ""), "since", errors, end_of_day=False)
    until = _parse_moment(raw.get("until", ""), "until", errors, end_of_day=True)
    if since and until and since >= until:
        errors.setdefault("until", []).append("Must be after since.")
    if errors:
        raise ValidationFailed("The filter has invalid values.", details=errors)
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
    plain manager; the audit reads belong to the review app)."""

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


def audit_events_for(actor: Actor, f: AuditFilter) -> AuditEventQuerySet:
    """The one audit queryset: the actor's scope, then the filter (page, API and export)."""
    qs = audit_events().visible_to(actor).matching(f)
    if f.q and not _sees_everything(actor):
        # Free text must not probe the labels the actor may not read.
        qs = qs.without_hidden_revisions(actor)
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


def redact(events: Sequence[AuditEvent], actor: Actor) -> list[AuditEvent]:
    """Withhold label and payload of events about entries above the actor's clearance (on the
    in-memory instances only; audit rows are never written)."""
    hidden = hidden_entry_uids(actor, events)
    for event in events:
        event.redacted = is_hidden(event, hidden)  # type: ignore[attr-defined]
        if event.redacted:  # type: ignore[attr-defined]
            event.label = ""
            event.payload = {}
    return list(events)


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, dict) else getattr(row, name)


# --- Entry timeline -------------------------------------------------------------------------


@dataclass
class VersionView:
    version: EntryVersion
    evidence: list[Evidence]
    diff: list[Segment] | None
    is_head: bool


@dataclass
class Interval:
    """One lifecycle span: the entry was ``state`` from ``started`` until ``ended``."""

    state: str
    reason: str
    started: Revision
    versions: list[int]
    ended: Revision | None = None


@dataclass
class ProposalView:
    id: int
    kind: str = ""
    status: str = ""
    events: list[AuditEvent] = field(default_factory=list)
    decisions: list[Any] = field(default_factory=list)
    operation_id: int | None = None


@dataclass
class Timeline:
    memory: Memory
    entry: Entry
    head: Head
    projection: Any
    versions: list[VersionView]
    revisions: list[tuple[Revision, RevisionChange]]
    intervals: list[Interval]
    relations: list[Relation]
    events: list[AuditEvent]
    more_events: bool
    proposals: list[ProposalView]
    operation_ids: list[int]
    declarations_now: dict[int, SourceDeclaration]


def get_visible_memory(actor: Actor, slug: str) -> Memory:
    memory = Memory.objects.visible_to(actor).filter(slug=slug).first()
    if memory is None:
        raise NotFound(f"No memory '{slug}'.")
    return memory


def entry_timeline(actor: Actor, memory: Memory, uid: str) -> Timeline:
    """Everything that happened to one entry. A fixed number of queries, however long its
    history: entry, versions, evidence, changes, relations, events, current declarations, and
    (when those apps have models) proposals, their decisions and events."""
    entry = (
        Entry.objects.for_memory(memory)
        .visible_to(actor)
        .select_related("head__revision", "head__version", "projection__successor_entry")
        .filter(uid=uid)
        .first()
    )
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    head = entry.head
    projection = getattr(entry, "projection", None)
    versions = list(
        EntryVersion.objects.filter(entry=entry)
        .select_related("revision")
        .prefetch_related(
            Prefetch(
                "evidence",
                queryset=Evidence.objects.select_related("source").order_by("position"),
            )
        )
        .order_by("number")
    )
    version_views: list[VersionView] = []
    previous: EntryVersion | None = None
    for v in versions:
        version_views.append(
            VersionView(
                version=v,
                evidence=list(v.evidence.all()),
                diff=word_diff(previous.body, v.body) if previous is not None else None,
                is_head=v.pk == head.version_id,
            )
        )
        previous = v
    changes = list(
        RevisionChange.objects.filter(entry=entry)
        .select_related("revision", "from_version", "to_version")
        .order_by("revision__number", "id")
    )
    visible = sensitivities_up_to(actor.clearance)
    relations = list(
        Relation.objects.filter(Q(from_entry=entry) | Q(to_entry=entry))
        .filter(from_entry__sensitivity__in=visible, to_entry__sensitivity__in=visible)
        .select_related("from_entry", "to_entry", "revision", "retired_by")
        .order_by("created_at", "id")
    )
    touching = audit_events().filter(memory_id=memory.pk).touching_entry(entry.uid)
    # The newest events only (the log pages through the rest); the links of all of them.
    newest = list(touching.order_by("-id")[: TIMELINE_EVENTS + 1])
    events = redact(list(reversed(newest[:TIMELINE_EVENTS])), actor)
    links = set(
        touching.exclude(proposal_id__isnull=True, operation_id__isnull=True)
        .values_list("proposal_id", "operation_id")
        .distinct()
    )
    proposal_ids = sorted(
        {p for p, _ in links if p}
        | {c.revision.proposal_id for c in changes if c.revision.proposal_id}
    )
    operation_ids = sorted(
        {o for _, o in links if o}
        | {c.revision.operation_id for c in changes if c.revision.operation_id}
    )
    declarations_now = current_declarations(
        ev.source_id for vv in version_views for ev in vv.evidence
    )
    for vv in version_views:
        for ev in vv.evidence:
            ev.declared_now = declarations_now.get(ev.source_id)  # type: ignore[attr-defined]
    return Timeline(
        memory=memory,
        entry=entry,
        head=head,
        projection=projection,
        versions=version_views,
        revisions=[(c.revision, c) for c in changes],
        intervals=lifecycle_intervals(changes),
        relations=relations,
        events=events,
        more_events=len(newest) > TIMELINE_EVENTS,
        proposals=proposals_touching(memory, proposal_ids, operation_ids),
        operation_ids=operation_ids,
        declarations_now=declarations_now,
    )


def lifecycle_intervals(changes: Sequence[RevisionChange]) -> list[Interval]:
    """Active / inactive spans from an entry's revision changes (oldest first). A span starts
    when the state changes; revisions that keep the state add their version to the span."""
    intervals: list[Interval] = []
    for change in changes:
        number = change.to_version.number
        current = intervals[-1] if intervals else None
        if current is not None and current.state == change.to_state:
            if number not in current.versions:
                current.versions.append(number)
            continue
        if current is not None:
            current.ended = change.revision
        reason = change.state_reason or change.revision.reason or change.revision.kind
        if change.to_state == HeadState.ACTIVE and change.from_state == HeadState.INACTIVE:
            reason = change.revision.reason or change.revision.kind
        intervals.append(Interval(change.to_state, reason, change.revision, [number]))
    return intervals


def current_declarations(source_ids: Iterable[int]) -> dict[int, SourceDeclaration]:
    """Today's declaration per source, to show beside each evidence snapshot."""
    ids = sorted(set(source_ids))
    if not ids:
        return {}
    latest: dict[int, SourceDeclaration] = {}
    for decl in SourceDeclaration.objects.filter(source_id__in=ids).order_by(
        "source_id", "version"
    ):
        latest[decl.source_id] = decl
    return latest


def _model(label: str) -> type[models.Model] | None:
    try:
        return apps.get_model(label)
    except LookupError:
        return None


def proposals_touching(
    memory: Memory, proposal_ids: Sequence[int], operation_ids: Sequence[int] = ()
) -> list[ProposalView]:
    """Proposals by id with their audit events, and — when the proposals and review apps
    have their models — kind, status and decisions. Degrades to events only."""
    if not proposal_ids:
        return []
    views = {pk: ProposalView(id=pk) for pk in proposal_ids}
    for event in (
        audit_events().filter(memory_id=memory.pk, proposal_id__in=proposal_ids).order_by("id")
    ):
        view = views[event.proposal_id]  # type: ignore[index]
        view.events.append(event)
        if event.operation_id and view.operation_id is None:
            view.operation_id = event.operation_id
    proposal_model = _model("proposals.Proposal")
    if proposal_model is not None:
        for p in proposal_model._default_manager.filter(pk__in=proposal_ids):
            view = views[p.pk]
            view.kind = str(getattr(p, "kind", "") or "")
            view.status = str(getattr(p, "status", "") or "")
    decision_model = _model("review.Decision")
    if decision_model is not None and _has_field(decision_model, "proposal"):
        for d in decision_model._default_manager.filter(proposal_id__in=proposal_ids).order_by(
            "id"
        ):
            views[d.proposal_id].decisions.append(d)  # type: ignore[attr-defined]
    return [views[pk] for pk in proposal_ids]


def _has_field(model: type[models.Model], name: str) -> bool:
    try:
        model._meta.get_field(name)
    except Exception:
        return False
    return True


# --- Revision page --------------------------------------------------------------------------


@dataclass
class ChangeView:
    change: RevisionChange
    diff: list[Segment] | None


@dataclass
class RevisionPage:
    memory: Memory
    revision: Revision
    changes: list[ChangeView]
    hidden_changes: int
    created_relations: list[Relation]
    retired_relations: list[Relation]
    events: list[AuditEvent]
    previous: int | None
    next: int | None


def revision_page(actor: Actor, memory: Memory, number: int) -> RevisionPage:
    """One revision: actor, reason, each change with before/after bodies and a word diff,
    the relations it created or retired, and its audit events. A fixed number of queries."""
    revision = Revision.objects.filter(memory=memory, number=number).first()
    if revision is None:
        raise NotFound(f"No revision {number} in memory '{memory.slug}'.")
    visible = sensitivities_up_to(actor.clearance)
    changes = list(
        RevisionChange.objects.filter(revision=revision)
        .select_related("entry", "from_version", "to_version")
        .order_by("id")
    )
    shown = [c for c in changes if c.entry.sensitivity in visible]
    views = [
        ChangeView(
            change=c,
            diff=(
                word_diff(c.from_version.body, c.to_version.body)
                if c.from_version is not None and c.from_version_id != c.to_version_id
                else None
            ),
        )
        for c in shown
    ]
    relations = list(
        Relation.objects.filter(Q(revision=revision) | Q(retired_by=revision))
        .filter(from_entry__sensitivity__in=visible, to_entry__sensitivity__in=visible)
        .select_related("from_entry", "to_entry")
        .order_by("id")
    )
    events = list(audit_events().filter(memory_id=memory.pk, revision_number=number).order_by("id"))
    return RevisionPage(
        memory=memory,
        revision=revision,
        changes=views,
        hidden_changes=len(changes) - len(shown),
        created_relations=[r for r in relations if r.revision_id == revision.pk],
        retired_relations=[r for r in relations if r.retired_by_id == revision.pk],
        events=redact(events, actor),
        previous=number - 1 if number > 1 else None,
        next=number + 1 if number < memory.head else None,
    )
