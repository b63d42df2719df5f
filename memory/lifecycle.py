"""The lifecycle projection: derived, rebuildable metadata per entry head (DESIGN.md §5).

:func:`derive` is the single derivation, a function of authoritative records only (heads,
versions, evidence snapshots, relations, revision changes). The revision writer calls
:func:`refresh` for the entries a revision touched, inside the same transaction; the rebuild
command calls the same code over every entry, so incremental and rebuilt rows agree by
construction — and ``rebuild_projection --check`` proves it on real data.

Reads are batched and plain: a batch is loaded in a fixed number of queries of plain columns
(tuples, no model instances), derived in Python, compared as tuples, and only the rows that
differ become model instances, written with one upsert. The rebuild walks a Memory in keyset
spans of its heads (:class:`Span`) and reads each table by range on its own entry key, which
PostgreSQL plans as short index range scans; the writer's refresh reads its few entries with
``IN`` lists. A write-mode rebuild ends with ``ANALYZE`` (``memory.db_stats``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from django.db.models import Q

from .models import (
    AUTHORITATIVE_RELATIONS,
    WITHHELD_STATES,
    Authority,
    Entry,
    EntryVersion,
    Evidence,
    EvidenceStrength,
    Head,
    HeadState,
    Kind,
    LifecycleProjection,
    Relation,
    RelationKind,
    RevisionChange,
    RevisionKind,
    Tier,
    Validity,
    Verification,
)

RULE_VERSION = 1

BASE_IMPORTANCE = {
    Kind.FACT: 1,
    Kind.PREFERENCE: 1,
    Kind.DECISION: 2,
    Kind.CONSTRAINT: 2,
    Kind.WORKING_NOTE: 0,
}
AUTO_ACTION_PREFIXES = ("auto_decay:", "session_end", "cleanup:")

# Fields compared by ``rebuild_projection --check`` (everything derived).
COMPARED_FIELDS = (
    "version_id",
    "state",
    "importance",
    "evidence_strength",
    "provenance",
    "validity",
    "validity_reason",
    "successor_entry_id",
    "recorded_at",
    "effective_at",
    "time_known",
    "tier",
    "kind",
    "sensitivity",
    "current_state",
    "pinned",
    "pin_category",
    "protected",
    "interval_started_at",
    "auto_action_reason",
    "rule_version",
)


def is_direct(authority: str, verification: str) -> bool:
    return verification == Verification.VERIFIED or authority in (
        Authority.REPOSITORY_ATTESTED,
        Authority.SYSTEM_ATTESTED,
    )


def importance_seed(
    *,
    kind: str,
    tier: str,
    evidence_strength: str,
    corroborated: bool,
    evidence_backed_state_change: bool,
    override: int | None,
) -> int:
    """The deterministic importance formula of DESIGN.md §5 (pure)."""
    if override is not None:
        return max(0, min(3, override))
    value = BASE_IMPORTANCE.get(Kind(kind), 1) if kind in Kind.values else 1
    if evidence_backed_state_change:
        value += 1
    value = max(0, min(3, value))
    weak = evidence_strength == EvidenceStrength.WEAK
    uncorroborated_note = kind == Kind.WORKING_NOTE and not corroborated
    if weak or tier == Tier.SESSION or uncorroborated_note:
        value = min(value, 1)
    return value


class _Head(NamedTuple):
    """What the derivation reads of one head: the head row, its entry and its version."""

    entry_id: int
    memory_id: int
    uid: str
    kind: str
    tier: str
    sensitivity: str
    current_state: bool
    version_id: int
    state: str
    state_reason: str
    pinned: bool
    pin_category: str
    importance_override: int | None
    interval_started_at: datetime | None
    effective_at: datetime | None
    #: When the head version's revision was recorded.
    recorded_at: datetime | None


class _Evidence(NamedTuple):
    authority: str
    verification: str
    observed_at: datetime | None


class _Relation(NamedTuple):
    pk: int
    kind: str
    from_entry_id: int
    to_entry_id: int
    from_uid: str
    to_uid: str


#: The columns of :class:`_Head`, read in one joined query (the explicit-pks path).
_HEAD_COLUMNS = (
    "entry_id",
    "entry__memory_id",
    "entry__uid",
    "entry__kind",
    "entry__tier",
    "entry__sensitivity",
    "entry__current_state",
    "version_id",
    "state",
    "state_reason",
    "pinned",
    "pin_category",
    "importance_override",
    "interval_started_at",
    "version__effective_at",
    "version__revision__recorded_at",
)
_RELATION_COLUMNS = (
    "pk",
    "kind",
    "from_entry_id",
    "to_entry_id",
    "from_entry__uid",
    "to_entry__uid",
)


@dataclass(frozen=True)
class Span:
    """A keyset batch of one Memory: its heads with ``after < entry_id <= last``.

    A batch given as a span is read with range conditions on each table's own entry key — index
    range scans the planner estimates well, instead of joins and long ``IN`` lists."""

    memory_pk: int
    after: int
    last: int

    def on(self, field: str, *, memory: str | None = "memory_id") -> Q:
        q = Q(**{f"{field}__gt": self.after, f"{field}__lte": self.last})
        return q & Q(**{memory: self.memory_pk}) if memory else q


@dataclass
class _Bundle:
    heads: dict[int, _Head]
    evidence: dict[int, list[_Evidence]]
    incoming: dict[int, list[_Relation]]
    outgoing: dict[int, list[_Relation]]
    states: dict[int, str]
    state_changes: set[int]
    #: (version, state, reason) of each head as its revision changes replay it (span loads).
    replay: dict[int, tuple[int, str, str]] | None = None


def _load(entry_pks: Sequence[int], span: Span | None = None) -> _Bundle:
    """Load everything the derivation needs for a batch of entries, in a fixed query count
    (whatever the batch holds), as plain tuples: no model instance is built."""
    if span is None:
        heads = {
            row[0]: _Head(*row)
            for row in Head.objects.filter(entry_id__in=entry_pks).values_list(*_HEAD_COLUMNS)
        }
    else:
        heads = _span_heads(span, set(entry_pks))
    evidence: dict[int, list[_Evidence]] = defaultdict(list)
    for vid, authority, verification, observed in (
        Evidence.objects.filter(version_id__in=[h.version_id for h in heads.values()])
        .order_by()
        .values_list("version_id", "authority", "verification", "observed_at")
    ):
        evidence[vid].append(_Evidence(authority, verification, observed))
    if span is None:
        ends = Q(to_entry_id__in=entry_pks) | Q(from_entry_id__in=entry_pks)
    else:
        ends = span.on("to_entry_id") | span.on("from_entry_id")
    incoming: dict[int, list[_Relation]] = defaultdict(list)
    outgoing: dict[int, list[_Relation]] = defaultdict(list)
    for row in (
        Relation.objects.filter(ends, retired_by__isnull=True)
        .order_by("pk")
        .values_list(*_RELATION_COLUMNS)
    ):
        rel = _Relation(*row)
        incoming[rel.to_entry_id].append(rel)
        outgoing[rel.from_entry_id].append(rel)
    # The states of relation endpoints outside the batch (a supersedes edge counts only
    # when it comes from an active entry).
    others = {r.from_entry_id for rels in incoming.values() for r in rels} - set(heads)
    states = {pk: h.state for pk, h in heads.items()}
    if others:
        states.update(Head.objects.filter(entry_id__in=others).values_list("entry_id", "state"))
    replay = None
    if span is None:
        state_changes = _evidence_backed_revises(entry_pks)
    else:
        state_changes, replay = _span_changes(span, heads)
    return _Bundle(heads, evidence, incoming, outgoing, states, state_changes, replay)


def _span_heads(span: Span, pks: set[int]) -> dict[int, _Head]:
    """The heads of a span: heads, entries and versions (with their revision's time) read by
    range, each from its own table, and joined here."""
    heads = {
        row[0]: row
        for row in Head.objects.filter(span.on("entry_id")).values_list(
            "entry_id",
            "version_id",
            "state",
            "state_reason",
            "pinned",
            "pin_category",
            "importance_override",
            "interval_started_at",
        )
        if row[0] in pks
    }
    entries = {
        row[0]: row
        for row in Entry.objects.filter(span.on("pk")).values_list(
            "pk", "memory_id", "uid", "kind", "tier", "sensitivity", "current_state"
        )
    }
    versions = {
        row[0]: row
        for row in EntryVersion.objects.filter(span.on("entry_id"))
        .order_by()
        .values_list("pk", "effective_at", "revision__recorded_at")
    }
    stray = {row[1] for row in heads.values()} - set(versions)
    if stray:  # a head pointing outside its entry's versions: read it anyway (never expected)
        versions.update(
            (row[0], row)
            for row in EntryVersion.objects.filter(pk__in=stray)
            .order_by()
            .values_list("pk", "effective_at", "revision__recorded_at")
        )
    out: dict[int, _Head] = {}
    for pk, (_, vid, state, reason, pinned, category, override, started) in heads.items():
        _, memory_id, uid, kind, tier, sensitivity, current = entries[pk]
        _, effective, recorded = versions[vid]
        out[pk] = _Head(
            pk,
            memory_id,
            uid,
            kind,
            tier,
            sensitivity,
            current,
            vid,
            state,
            reason,
            pinned,
            category,
            override,
            started,
            effective,
            recorded,
        )
    return out


def _span_changes(
    span: Span, heads: dict[int, _Head]
) -> tuple[set[int], dict[int, tuple[int, str, str]]]:
    """One read of the span's revision changes gives both the evidence-backed revises (see
    :func:`_evidence_backed_revises`, same rule) and each head's replay (see
    :func:`replayed_heads`, same rule: the highest revision number, then change id, wins)."""
    last: dict[int, tuple[int, int, int, str, str]] = {}
    revises: set[tuple[int, int, int]] = set()
    for change_pk, entry_pk, number, kind, before, after, state, reason in (
        RevisionChange.objects.filter(span.on("entry_id", memory="revision__memory_id"))
        .order_by()
        .values_list(
            "pk",
            "entry_id",
            "revision__number",
            "revision__kind",
            "from_version_id",
            "to_version_id",
            "to_state",
            "state_reason",
        )
    ):
        seen = last.get(entry_pk)
        if seen is None or (number, change_pk) > (seen[0], seen[1]):
            last[entry_pk] = (number, change_pk, after, state, reason)
        head = heads.get(entry_pk)
        if kind == RevisionKind.REVISE and before is not None and head and head.current_state:
            revises.add((entry_pk, before, after))
    replay = {pk: (v, s, r) for pk, (_, _, v, s, r) in last.items()}
    return _cited_more(revises), replay


def _cited_more(changes: Iterable[tuple[int, int, int]]) -> set[int]:
    """Entries of (entry, from_version, to_version) whose new version cites a (source, ref) its
    predecessor did not: one query (none without changes)."""
    changes = list(changes)
    if not changes:
        return set()
    version_ids = {v for _, a, b in changes for v in (a, b)}
    cited: dict[int, set[tuple[int, str]]] = {}
    for vid, source, ref in (
        Evidence.objects.filter(version_id__in=version_ids)
        .order_by()
        .values_list("version_id", "source_id", "ref")
    ):
        cited.setdefault(vid, set()).add((source, ref))
    return {
        entry
        for entry, before, after in changes
        if cited.get(after, set()) - cited.get(before, set())
    }


def _evidence_backed_revises(entry_pks: Sequence[int]) -> set[int]:
    """Entries with a revise (current_state) that added a citation: two queries.

    "+1 when an evidence-backed revise changes current state": a revise of a current_state
    entry whose new version brought evidence its predecessor did not cite (the version carries
    the union, so citing the old evidence again brings nothing)."""
    changes = list(
        RevisionChange.objects.filter(
            entry_id__in=entry_pks,
            revision__kind=RevisionKind.REVISE,
            entry__current_state=True,
            from_version__isnull=False,
            to_version__evidence__isnull=False,
        )
        .values_list("entry_id", "from_version_id", "to_version_id")
        .distinct()
    )
    return _cited_more(changes)


def _active(bundle: _Bundle, entry_pk: int) -> bool:
    return bundle.states.get(entry_pk) == HeadState.ACTIVE


_importance = lru_cache(maxsize=4096)(importance_seed)

#: The fields of a derived row, in order: the keys, then everything ``--check`` compares.
ROW_FIELDS = ("entry_id", "memory_id", *COMPARED_FIELDS)


def _derive_one(bundle: _Bundle, entry_pk: int) -> tuple[Any, ...]:
    """The derived projection row of one entry, as values in :data:`ROW_FIELDS` order."""
    head = bundle.heads[entry_pk]
    evidence = bundle.evidence.get(head.version_id, [])
    provenance: dict[str, int] = {}
    for ev in evidence:
        provenance[ev.authority] = provenance.get(ev.authority, 0) + 1
    strength = (
        EvidenceStrength.DIRECT
        if any(is_direct(ev.authority, ev.verification) for ev in evidence)
        else EvidenceStrength.WEAK
    )
    incoming = bundle.incoming.get(entry_pk, [])
    outgoing = bundle.outgoing.get(entry_pk, [])

    validity = Validity.CURRENT
    reason = ""
    successor_pk: int | None = None
    if head.state in WITHHELD_STATES:
        # A candidate waits for its admission review, a quarantined entry for its release:
        # neither is current, whatever its relations say.
        validity = Validity(head.state)
        reason = head.state_reason
    elif head.state == HeadState.INACTIVE:
        validity = Validity.INACTIVE
        reason = head.state_reason
        for rel in outgoing:
            if rel.kind in (RelationKind.CONSOLIDATED_INTO,):
                successor_pk = rel.to_entry_id
        for rel in incoming:
            if rel.kind == RelationKind.PROMOTED_FROM:
                successor_pk = rel.from_entry_id
    elif incoming or outgoing:
        superseders = sorted(
            (
                rel
                for rel in incoming
                if rel.kind == RelationKind.SUPERSEDES and _active(bundle, rel.from_entry_id)
            ),
            key=lambda r: r.pk,
        )
        conflicts = [rel for rel in incoming + outgoing if rel.kind == RelationKind.CONFLICTS_WITH]
        if superseders:
            validity = Validity.SUPERSEDED
            successor_pk = superseders[-1].from_entry_id
            reason = f"superseded_by:{superseders[-1].from_uid}"
        elif conflicts:
            # An authoritative edge between the two settles the conflict.
            unresolved = []
            for rel in conflicts:
                other = rel.to_entry_id if rel.from_entry_id == entry_pk else rel.from_entry_id
                settled = any(
                    r.kind in AUTHORITATIVE_RELATIONS
                    and {r.from_entry_id, r.to_entry_id} == {entry_pk, other}
                    for r in incoming + outgoing
                )
                if not settled:
                    unresolved.append(rel)
            if unresolved:
                validity = Validity.UNRESOLVED_CONFLICT
                rel = min(unresolved, key=lambda r: r.pk)
                other_uid = rel.to_uid if rel.from_entry_id == entry_pk else rel.from_uid
                reason = f"conflicts_with:{other_uid}"

    corroborated = head.kind != Kind.WORKING_NOTE or len(provenance) > 0
    importance = _importance(
        kind=head.kind,
        tier=head.tier,
        evidence_strength=strength,
        corroborated=corroborated,
        evidence_backed_state_change=entry_pk in bundle.state_changes,
        override=head.importance_override,
    )
    effective_at = head.effective_at
    if effective_at is None:
        observed = [ev.observed_at for ev in evidence if ev.observed_at is not None]
        effective_at = max(observed) if observed else None
    recorded_at = head.recorded_at
    auto_reason = (
        head.state_reason
        if head.state == HeadState.INACTIVE and head.state_reason.startswith(AUTO_ACTION_PREFIXES)
        else ""
    )
    # In ROW_FIELDS order: entry_id, memory_id, then COMPARED_FIELDS.
    return (
        entry_pk,
        head.memory_id,
        head.version_id,
        head.state,
        importance,
        strength,
        dict(sorted(provenance.items())),
        validity,
        reason,
        successor_pk,
        recorded_at,
        effective_at,
        recorded_at is not None,
        head.tier,
        head.kind,
        head.sensitivity,
        head.current_state,
        head.pinned,
        head.pin_category,
        head.pinned,
        head.interval_started_at,
        auto_reason,
        RULE_VERSION,
    )


def _rows(bundle: _Bundle, pks: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    return {pk: _derive_one(bundle, pk) for pk in sorted(pks) if pk in bundle.heads}


def _model(row: tuple[Any, ...]) -> LifecycleProjection:
    return LifecycleProjection(**dict(zip(ROW_FIELDS, row, strict=True)))


def derive(entry_pks: Iterable[int]) -> list[LifecycleProjection]:
    """Derive projection rows (unsaved) for the given entries from authoritative records."""
    pks = sorted(set(entry_pks))
    if not pks:
        return []
    bundle = _load(pks)
    return [_model(row) for row in _rows(bundle, pks).values()]


# Relation kinds that can change an entry's validity or successor (duplicate observations
# cannot, so an entry collecting many of them does not widen every refresh).
VALIDITY_RELATIONS = (
    RelationKind.SUPERSEDES,
    RelationKind.CONFLICTS_WITH,
    RelationKind.CONSOLIDATED_INTO,
    RelationKind.PROMOTED_FROM,
)


def neighbours(entry_pks: Iterable[int]) -> set[int]:
    """Entries whose validity may depend on these (either end of a live relation)."""
    pks = list(entry_pks)
    pairs = Relation.objects.filter(
        Q(from_entry_id__in=pks) | Q(to_entry_id__in=pks),
        retired_by__isnull=True,
        kind__in=VALIDITY_RELATIONS,
    ).values_list("from_entry_id", "to_entry_id")
    return {pk for pair in pairs for pk in pair}


def refresh(entry_pks: Iterable[int]) -> None:
    """Recompute and store the projection rows of these entries and their neighbours.

    Called by the revision writer inside its transaction (the Memory lock is held)."""
    pks = set(entry_pks)
    pks |= neighbours(pks)
    rows = derive(pks)
    if rows:
        # One upsert: new rows inserted, existing ones overwritten.
        LifecycleProjection.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["entry"], update_fields=UPDATE_FIELDS
        )


UPDATE_FIELDS = [
    "version",
    "state",
    "importance",
    "evidence_strength",
    "provenance",
    "validity",
    "validity_reason",
    "successor_entry",
    "recorded_at",
    "effective_at",
    "time_known",
    "tier",
    "kind",
    "sensitivity",
    "current_state",
    "pinned",
    "pin_category",
    "protected",
    "interval_started_at",
    "auto_action_reason",
    "rule_version",
]


def diff(live: LifecycleProjection | None, rebuilt: LifecycleProjection) -> dict[str, Any]:
    """Fields where a live row differs from the rebuilt one ({field: (live, rebuilt)})."""
    if live is None:
        return {"row": ("missing", "present")}
    out = {}
    for name in COMPARED_FIELDS:
        a, b = getattr(live, name), getattr(rebuilt, name)
        if a != b:
            out[name] = (a, b)
    return out


# --- Rebuild --------------------------------------------------------------------------------


@dataclass
class RowDiff:
    """One projection row that differs from its rebuilt value."""

    entry_uid: str
    fields: dict[str, Any]


@dataclass
class RebuildReport:
    memory_slug: str
    entries: int = 0
    differing: list[RowDiff] = field(default_factory=list)
    head_mismatches: list[str] = field(default_factory=list)
    written: int = 0
    vectors_missing: int = 0
    vectors_created: int = 0

    @property
    def clean(self) -> bool:
        return not self.differing and not self.head_mismatches and not self.vectors_missing


def replayed_heads(entry_pks: Sequence[int]) -> dict[int, tuple[int, str, str]]:
    """(version, state, reason) of each entry's head as its revision changes replay it: the
    last change (highest revision number) wins."""
    out: dict[int, tuple[int, str, str]] = {}
    rows = (
        RevisionChange.objects.filter(entry_id__in=entry_pks)
        .order_by("revision__number", "id")
        .values_list("entry_id", "to_version_id", "to_state", "state_reason")
    )
    for entry_pk, version_pk, state, reason in rows:
        out[entry_pk] = (version_pk, state, reason)
    return out


def rebuild_batch(
    entry_pks: Sequence[int], *, write: bool, span: Span | None = None
) -> tuple[list[RowDiff], list[str], int]:
    """Rebuild the projection of a batch of entries from authoritative records.

    Returns (differing rows, entries whose head does not match the replay of its revisions,
    rows written). ``write=False`` only compares. The caller holds the Memory lock when writing.
    ``span`` says that ``entry_pks`` are exactly the heads of one Memory in a keyset range (as
    :func:`rebuild_projection` walks them): then every table is read by range. A fixed number
    of queries per batch either way; rows are compared as tuples and only the differing ones
    become model instances, written with one upsert.
    """
    pks = sorted(set(entry_pks))
    if not pks:
        return [], [], 0
    bundle = _load(pks, span)
    rebuilt = _rows(bundle, pks)
    live_rows = LifecycleProjection.objects.filter(
        span.on("entry_id") if span is not None else Q(entry_id__in=pks)
    ).values_list("entry_id", *COMPARED_FIELDS)
    live = {row[0]: row[1:] for row in live_rows}
    diffs: list[RowDiff] = []
    changed: list[LifecycleProjection] = []
    for pk, row in rebuilt.items():
        values = row[2:]
        old = live.get(pk)
        if old == values:
            continue
        if old is None:
            delta: dict[str, Any] = {"row": ("missing", "present")}
        else:
            delta = {
                name: (a, b)
                for name, a, b in zip(COMPARED_FIELDS, old, values, strict=True)
                if a != b
            }
            if not delta:
                continue
        diffs.append(RowDiff(bundle.heads[pk].uid, delta))
        changed.append(_model(row))
    replay = bundle.replay if bundle.replay is not None else replayed_heads(pks)
    mismatched = [
        head.uid
        for pk, head in sorted(bundle.heads.items())
        if replay.get(pk) != (head.version_id, head.state, head.state_reason)
    ]
    written = 0
    if write and changed:
        # One upsert: missing rows inserted, differing ones overwritten (the recall counters,
        # which are not derived, are kept).
        LifecycleProjection.objects.bulk_create(
            changed, update_conflicts=True, unique_fields=["entry"], update_fields=UPDATE_FIELDS
        )
        written = len(changed)
    return diffs, mismatched, written


def rebuild_projection(
    memory: Any,
    *,
    actor: Any,
    check: bool = False,
    batch_size: int = 500,
    progress: Any = None,
) -> RebuildReport:
    """Rebuild (or, with ``check``, only compare) the lifecycle projection of one Memory.

    Walks the Memory's heads in bounded batches (keyset on the entry key, each batch a
    :class:`Span` read by range); each batch is compared under the Memory lock, so a concurrent
    writer can neither interleave with it nor wait long. Also replays each entry's revision
    changes against its head, and — when an embedding provider is configured — brings the
    derived vectors of head versions up to date (outside the lock: embedding is slow). A real
    rebuild ends with ``ANALYZE`` of the projection (and vector) tables on PostgreSQL, and, if it
    wrote something, records one ``projection.rebuilt`` audit event. ``progress(report)`` is
    called after every batch.
    """
    from django.db import transaction

    from . import audit
    from .actions import lock_memory
    from .db_stats import PROJECTION_TABLES, VECTOR_TABLES, analyze
    from .embeddings import get_provider
    from .vectors import index_versions, missing_versions

    report = RebuildReport(memory_slug=memory.slug)
    provider = get_provider()
    last = 0
    while True:
        # Keyset over the Memory's heads (an entry has a projection row once it has a head).
        pks = list(
            Head.objects.filter(memory_id=memory.pk, entry_id__gt=last)
            .order_by("entry_id")
            .values_list("entry_id", flat=True)[:batch_size]
        )
        if not pks:
            break
        span = Span(memory.pk, last, pks[-1])
        last = pks[-1]
        with transaction.atomic():
            lock_memory(memory.pk)
            diffs, mismatched, written = rebuild_batch(pks, write=not check, span=span)
        report.entries += len(pks)
        report.differing += diffs
        report.head_mismatches += mismatched
        report.written += written
        if provider is not None:
            missing = list(
                missing_versions(provider).filter(entry_id__in=pks).values_list("pk", flat=True)
            )
            if check:
                report.vectors_missing += len(missing)
            else:
                report.vectors_created += index_versions(missing, provider=provider)
        if progress is not None:
            progress(report)
    if not check:
        # Planner statistics for what was (re)written: a rebuild is a bulk load.
        analyze(PROJECTION_TABLES + (VECTOR_TABLES if report.vectors_created else ()))
    if not check and (report.written or report.vectors_created):
        with transaction.atomic():
            audit.record(
                "projection.rebuilt",
                actor=actor,
                memory=memory,
                label=f"{report.written} rows rewritten",
                payload={
                    "entries": report.entries,
                    "written": report.written,
                    "vectors_created": report.vectors_created,
                    "head_mismatches": len(report.head_mismatches),
                },
            )
    return report
