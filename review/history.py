"""History pages' read models: the entry page (its timeline) and the revision page.

Review owns both pages: the entry page hosts the reviewers' forms (``review.entry_views``) and
both show review's own records (decisions, compensations) beside memory's history; the audit log
links to them by URL name. A fixed number of queries each, however long the history. Events are
read through ``memory.audit_events`` (scope and redaction); proposals through their app.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch, Q
from django.utils import timezone

from exposure.selectors import runs_served
from lib.errors import NotFound
from lib.identity import Actor
from lib.word_diff import DiffSegment as Segment
from lib.word_diff import word_diff
from memory.audit_events import AuditEventQuerySet, audit_events, redact
from memory.models import (
    WITHHELD_STATES,
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
    SourceDeclaration,
    sensitivities_up_to,
)
from memory.revalidation import is_due
from proposals.models import ProposalKind, ProposalStatus
from proposals.selectors import visible_proposals

from .models import Compensation, Decision

#: Audit events shown on an entry timeline (newest); the log pages through all of them.
TIMELINE_EVENTS = 200

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
    #: The pending ``admission`` proposal a candidate waits for (None otherwise).
    admission_proposal_id: int | None = None
    #: Distinct runs the exposure ledger says were served this entry in the last 30 days.
    served_runs: int = 0

    @property
    def review_due(self) -> bool:
        """Whether the entry's review date has passed (``memory.revalidation``)."""
        return is_due(self.head.review_at, timezone.now())

    @property
    def withheld(self) -> bool:
        """A candidate or quarantined entry: no recall view returns it."""
        return self.head.state in WITHHELD_STATES


#: The window of the entry page's "served to N runs".
SERVED_DAYS = 30


def get_visible_memory(actor: Actor, slug: str) -> Memory:
    memory = Memory.objects.visible_to(actor).filter(slug=slug).first()
    if memory is None:
        raise NotFound(f"No memory '{slug}'.")
    return memory


def entry_timeline(actor: Actor, memory: Memory, uid: str) -> Timeline:
    """Everything that happened to one entry. A fixed number of queries, however long its
    history: entry, versions, evidence, changes, relations, events, current declarations,
    proposals, their decisions and events."""
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
    version_views = _versions(entry, head)
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
    proposal_ids, operation_ids = _linked_records(touching, changes)
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
        proposals=proposals_touching(actor, memory, proposal_ids),
        operation_ids=operation_ids,
        declarations_now=declarations_now,
        admission_proposal_id=(
            pending_admission(actor, entry) if head.state == HeadState.CANDIDATE else None
        ),
        served_runs=runs_served(memory, entry.pk, days=SERVED_DAYS),
    )


def pending_admission(actor: Actor, entry: Entry) -> int | None:
    """The newest pending ``admission`` proposal of a candidate the actor may see (1 query)."""
    return (
        visible_proposals(actor)
        .filter(
            kind=ProposalKind.ADMISSION,
            status=ProposalStatus.PENDING,
            targets__entry=entry,
        )
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )


def _versions(entry: Entry, head: Head) -> list[VersionView]:
    """Every version oldest first, with its evidence and the word diff from its predecessor."""
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
    views: list[VersionView] = []
    previous: EntryVersion | None = None
    for v in versions:
        views.append(
            VersionView(
                version=v,
                evidence=list(v.evidence.all()),
                diff=word_diff(previous.body, v.body) if previous is not None else None,
                is_head=v.pk == head.version_id,
            )
        )
        previous = v
    return views


def _linked_records(
    touching: AuditEventQuerySet, changes: Sequence[RevisionChange]
) -> tuple[list[int], list[int]]:
    """Proposal and operation ids named by the entry's events (all of them) and revisions."""
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
    return proposal_ids, operation_ids


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


def proposals_touching(
    actor: Actor, memory: Memory, proposal_ids: Sequence[int]
) -> list[ProposalView]:
    """Proposals by id with their audit events, kind, status and decisions (3 queries)."""
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
    for p in visible_proposals(actor).filter(pk__in=proposal_ids).only("pk", "kind", "status"):
        views[p.pk].kind = p.kind
        views[p.pk].status = p.status
    for d in Decision.objects.filter(proposal_id__in=proposal_ids).order_by("id"):
        views[d.proposal_id].decisions.append(d)
    return [views[pk] for pk in proposal_ids]


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
    #: The revision that undid this one's operation (a compensation), when one did.
    undone_by: int | None = None


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
        undone_by=_undone_by(revision),
    )


def _undone_by(revision: Revision) -> int | None:
    """The number of the revision that compensated ``revision``'s operation, unless it is that
    compensating revision itself (one query, only for a revision an operation wrote)."""
    if revision.operation_id is None:
        return None
    undone = (
        Compensation.objects.filter(operation_id=revision.operation_id)
        .values_list("revision_number", flat=True)
        .first()
    )
    return undone if undone is not None and undone != revision.number else None
