"""The revision writer: the only code that changes heads (DESIGN.md §4).

Lock order, everywhere: the Memory row (``select_for_update``), then proposal rows, then entry
heads. Every public action is ``@transaction.atomic(durable=True)``, validates and scans its input
*before* taking the lock, and re-checks state after taking it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from lib.correlation import current_correlation_id

from .. import effects, hooks, lifecycle
from ..actors import Actor
from ..lexical_index import (
    indexed_with_context,
    lends_words,
    previous_turn_body,
    record_versions,
)
from ..models import (
    AUTHORITATIVE_RELATIONS,
    Authority,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    HeadState,
    Memory,
    Relation,
    RelationKind,
    Revision,
    RevisionChange,
    Verification,
)
from .evidence import ResolvedEvidence

# --- The revision writer --------------------------------------------------------------------


@dataclass
class NewBody:
    body: str
    content_hash: str
    evidence: list[ResolvedEvidence] = field(default_factory=list)
    effective_at: datetime | None = None


@dataclass
class Change:
    """One entry's part in a revision. ``new_body`` creates a version; ``version`` points the
    head at an existing one (reactivate, compensate); neither keeps the head version."""

    entry: Entry
    to_state: str = HeadState.ACTIVE
    new_body: NewBody | None = None
    version: EntryVersion | None = None
    state_reason: str = ""
    restart_interval: bool = False
    # Restores a recorded interval start exactly (compensation); wins over restart_interval.
    interval_started_at: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    #: The entry was created in this transaction, so it has no head to read yet and nothing
    #: but this revision can relate to it: its projection row is derived from what is written.
    new_entry: bool = False
    #: Set by the writer: the version the head points at after the revision.
    result_version: EntryVersion | None = field(default=None, init=False, compare=False)


@dataclass
class NewRelation:
    kind: str
    from_entry: Entry
    to_entry: Entry
    score: float | None = None
    evidence: list[Any] = field(default_factory=list)


def lock_memory(memory_pk: int) -> Memory:
    """Take the Memory lock (first in the lock order) and return the fresh row."""
    return Memory.objects.select_for_update().get(pk=memory_pk)


def write_revision(
    memory: Memory,
    *,
    actor: Actor,
    kind: str,
    reason: str = "",
    changes: Sequence[Change],
    relations: Sequence[NewRelation] = (),
    retire: Sequence[Relation] = (),
    proposal_id: int | None = None,
    operation_id: int | None = None,
) -> Revision:
    """Append one revision and apply it: versions, changes, heads, relations, projection.

    Precondition: the caller holds the Memory lock (``lock_memory``) inside a transaction and
    has checked its expectations against the heads. Numbers are gap-free because the Memory
    row's ``head`` is read and bumped under that lock.
    """
    now = timezone.now()
    revision = Revision.objects.create(
        memory=memory,
        number=memory.head + 1,
        kind=kind,
        **actor.columns(),
        reason=reason,
        recorded_at=now,
        correlation_id=current_correlation_id(),
        proposal_id=proposal_id,
        operation_id=operation_id,
    )
    # Entries whose existing head moved (new heads are not listed: nothing can refer to them).
    head_changed, written = _apply_changes(memory, revision, changes, now)
    touched = {c.entry.pk for c in changes}
    related = _apply_relations(memory, revision, actor, relations, retire)
    touched |= related
    memory.head = revision.number
    memory.save(update_fields=["head"])
    # A new entry's projection comes from what was just written, unless this revision also
    # relates it to another entry (then its relations are read with the others').
    lifecycle.refresh(touched, {pk: w for pk, w in written.items() if pk not in related})
    # A new supersedes edge changes its target's validity without touching its head; pending
    # proposals built on the target's old standing must go stale too.
    superseded = [
        r.to_entry.pk
        for r in relations
        if r.kind == RelationKind.SUPERSEDES and r.to_entry.pk not in head_changed
    ]
    if head_changed or superseded:
        hooks.heads_changed(memory, revision, [*head_changed, *superseded])
    return revision


_HEAD_FIELDS = [
    "version",
    "state",
    "state_reason",
    "revision",
    "interval_started_at",
    "pinned",
    "pin_category",
    "importance_override",
    "owner",
    "confidence",
    "review_at",
]


def _apply_changes(
    memory: Memory, revision: Revision, changes: Sequence[Change], now: datetime
) -> tuple[list[int], dict[int, lifecycle.Written]]:
    """Create the versions, the change rows and the heads; the pks whose existing head moved,
    and the heads of the entries this transaction created (``Change.new_entry``), as the
    projection's derivation reads them."""
    existing = [c.entry.pk for c in changes if not c.new_entry]
    heads: dict[int, Head] = {}
    if existing:
        found = Head.objects.filter(entry_id__in=existing).select_related("version")
        heads = {h.entry_id: h for h in found}
    head_changed: list[int] = []
    change_rows: list[RevisionChange] = []
    new_heads: list[Head] = []
    updated_heads: list[Head] = []
    created: list[tuple[Change, Head, list[Evidence]]] = []
    # Every new body of the revision in one insert (a batch add writes hundreds).
    made = _create_versions(
        memory,
        [
            (c, heads[c.entry.pk].version if c.entry.pk in heads else None)
            for c in changes
            if c.new_body is not None
        ],
        revision,
    )
    for change in changes:
        head = heads.get(change.entry.pk)
        from_version = head.version if head else None
        to_version, evidence = made.get(id(change)) or _target_version(change, from_version)
        change_rows.append(
            RevisionChange(
                revision=revision,
                entry=change.entry,
                from_version=from_version,
                to_version=to_version,
                from_state=head.state if head else "",
                to_state=change.to_state,
                state_reason=change.state_reason,
                attributes=change.attributes,
            )
        )
        change.result_version = to_version
        if head is None:
            # A head created by this revision: no pending proposal can touch it yet.
            head = Head(entry=change.entry, memory=memory, interval_started_at=now)
            new_heads.append(head)
            if change.new_entry:
                created.append((change, head, evidence))
        else:
            if head.version_id != to_version.pk or head.state != change.to_state:
                head_changed.append(change.entry.pk)
            if change.interval_started_at is not None:
                head.interval_started_at = change.interval_started_at
            elif change.restart_interval:
                head.interval_started_at = now
            updated_heads.append(head)
        head.version = to_version
        head.state = change.to_state
        head.state_reason = change.state_reason
        head.revision = revision
        _apply_attributes(head, change.attributes)
    RevisionChange.objects.bulk_create(change_rows)
    if new_heads:
        Head.objects.bulk_create(new_heads)
    if updated_heads:
        Head.objects.bulk_update(updated_heads, _HEAD_FIELDS)
    written = {
        change.entry.pk: lifecycle.written_head(
            change.entry, head, head.version, evidence, revision.recorded_at
        )
        for change, head, evidence in created
    }
    return head_changed, written


def _target_version(
    change: Change, from_version: EntryVersion | None
) -> tuple[EntryVersion, list[Evidence]]:
    """The version a change without a new body points the head at: a given one, or the same
    (with the evidence rows left unread: an empty list)."""
    to_version = change.version or from_version
    if to_version is None:
        raise ValueError("a change to an entry without a head must bring a body")
    return to_version, []


def _apply_relations(
    memory: Memory,
    revision: Revision,
    actor: Actor,
    relations: Sequence[NewRelation],
    retire: Sequence[Relation],
) -> set[int]:
    """Create the revision's authoritative relations and retire others; the pks they touch."""
    touched: set[int] = set()
    if relations:
        Relation.objects.bulk_create(
            [
                Relation(
                    memory=memory,
                    kind=r.kind,
                    from_entry=r.from_entry,
                    to_entry=r.to_entry,
                    authoritative=r.kind in AUTHORITATIVE_RELATIONS,
                    score=r.score,
                    evidence=r.evidence,
                    revision=revision,
                    created_by=actor.id,
                )
                for r in relations
            ]
        )
        touched |= {r.from_entry.pk for r in relations} | {r.to_entry.pk for r in relations}
    if retire:
        Relation.objects.filter(pk__in=[r.pk for r in retire], retired_by__isnull=True).update(
            retired_by=revision
        )
        touched |= {r.from_entry_id for r in retire} | {r.to_entry_id for r in retire}
    return touched


def _apply_attributes(head: Head, attributes: dict[str, Any]) -> None:
    if "pinned" in attributes:
        head.pinned = bool(attributes["pinned"])
        head.pin_category = attributes.get("pin_category") or ""
    if "importance_override" in attributes:
        head.importance_override = attributes["importance_override"]
    # Governance (memory.revalidation): stored as JSON on the change, typed on the head.
    if "owner" in attributes:
        head.owner = attributes["owner"] or ""
    if "confidence" in attributes:
        head.confidence = attributes["confidence"]
    if "review_at" in attributes:
        at = attributes["review_at"]
        head.review_at = datetime.fromisoformat(at) if at else None


def _create_versions(
    memory: Memory,
    items: Sequence[tuple[Change, EntryVersion | None]],
    revision: Revision,
) -> dict[int, tuple[EntryVersion, list[Evidence]]]:
    """The new versions of the (change, predecessor) pairs, with their evidence rows, keyed by
    ``id(change)``: one insert for the versions, one for all their evidence."""
    if not items:
        return {}
    versions = []
    # A short turn is indexed with the words of the turn before it in its session (the body
    # stays exact), and counted into the Memory's term statistics (memory.lexical_index). The
    # turn before may be an earlier item of the same revision: entries are created in order.
    last_in_session: dict[str, tuple[int, str, str]] = {}
    indexed = []
    for change, _ in items:
        new = change.new_body
        assert new is not None
        entry = change.entry
        earlier = last_in_session.get(entry.session_id)
        if entry.session_id and earlier is not None and earlier[0] < entry.pk:
            lends = lends_words(earlier[2], entry.sensitivity)
            context: str | None = earlier[1] if lends else None
        else:
            context = previous_turn_body(
                memory.pk, entry.session_id, entry.pk, sensitivity=entry.sensitivity
            )
        if entry.session_id:
            last_in_session[entry.session_id] = (entry.pk, new.body, entry.sensitivity)
        indexed.append(indexed_with_context(new.body, context))
    record_versions(memory.pk, indexed)
    for (change, predecessor), (text, term_count) in zip(items, indexed, strict=True):
        new = change.new_body
        assert new is not None
        versions.append(
            EntryVersion(
                memory=memory,
                entry=change.entry,
                number=(predecessor.number + 1) if predecessor else 1,
                body=new.body,
                content_hash=new.content_hash,
                predecessor=predecessor,
                revision=revision,
                effective_at=new.effective_at,
                searchable_text=text,
                term_count=term_count,
            )
        )
    EntryVersion.objects.bulk_create(versions)
    # Their vectors are made after the revision commits, never under the Memory lock: one
    # task for the whole revision, which embeds them in batches.
    effects.versions_written.after_commit([v.pk for v in versions])
    rows: list[Evidence] = []
    for (change, _), version in zip(items, versions, strict=True):
        assert change.new_body is not None
        rows += [
            Evidence(
                version=version,
                position=i,
                source=ev.source,
                ref=ev.input.ref,
                observed_at=ev.input.observed_at,
                quote=ev.input.quote,
                declaration_version=ev.declaration.version if ev.declaration else None,
                authority=ev.declaration.authority if ev.declaration else Authority.UNTRUSTED,
                verification=(
                    ev.declaration.verification if ev.declaration else Verification.UNKNOWN
                ),
            )
            for i, ev in enumerate(change.new_body.evidence)
        ]
    Evidence.objects.bulk_create(rows)
    by_version: dict[int, list[Evidence]] = {}
    for row in rows:
        by_version.setdefault(id(row.version), []).append(row)
    return {
        id(change): (version, by_version.get(id(version), []))
        for (change, _), version in zip(items, versions, strict=True)
    }
