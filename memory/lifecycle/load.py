"""Loading what the derivation reads, in a fixed number of queries per batch.

A batch is read as plain tuples (no model instances): heads with their entries and versions,
evidence snapshots, live relations, and the revision changes that decide the evidence-backed
revises. The rebuild's batches are keyset spans of a Memory's heads (:class:`Span`), read by
range on each table's own entry key; the writer's refresh reads its few entries with ``IN`` lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.db.models import Func, IntegerField, Q

from ..models import Entry, EntryVersion, Evidence, Head, Relation, RevisionChange, RevisionKind


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
    #: The UTF-8 size of the head version's body.
    body_bytes: int


class _Evidence(NamedTuple):
    authority: str
    verification: str
    observed_at: datetime | None


class RelationRow(NamedTuple):
    pk: int
    kind: str
    from_entry_id: int
    to_entry_id: int
    from_uid: str
    to_uid: str


@dataclass(frozen=True)
class Written:
    """A head the current transaction created, as its writer holds it. No row elsewhere can
    refer to a brand-new entry (no relation, no revise of it), so the derivation's inputs are
    all here and its refresh reads nothing back."""

    head: _Head
    evidence: list[_Evidence]


def written_head(
    entry: Entry,
    head: Head,
    version: EntryVersion,
    evidence: Iterable[Evidence],
    recorded_at: datetime,
) -> Written:
    """The derivation's view of a head just written (the same columns :func:`load_bundle` reads
    back); ``recorded_at``: when the head version's revision was recorded."""
    return Written(
        _Head(
            entry.pk,
            entry.memory_id,
            entry.uid,
            entry.kind,
            entry.tier,
            entry.sensitivity,
            entry.current_state,
            version.pk,
            head.state,
            head.state_reason,
            head.pinned,
            head.pin_category,
            head.importance_override,
            head.interval_started_at,
            version.effective_at,
            recorded_at,
            len(version.body.encode("utf-8")),
        ),
        [_Evidence(e.authority, e.verification, e.observed_at) for e in evidence],
    )


#: What the derivation reads of an entry, and of its head row (after the entry key).
ENTRY_COLUMNS = ("memory_id", "uid", "kind", "tier", "sensitivity", "current_state")
HEAD_ROW_COLUMNS = (
    "version_id",
    "state",
    "state_reason",
    "pinned",
    "pin_category",
    "importance_override",
    "interval_started_at",
)
#: The columns of :class:`_Head`, read in one joined query (the explicit-pks path).
_HEAD_COLUMNS = (
    "entry_id",
    *(f"entry__{name}" for name in ENTRY_COLUMNS),
    *HEAD_ROW_COLUMNS,
    "version__effective_at",
    "version__revision__recorded_at",
    "body_bytes",
)
RELATION_COLUMNS = (
    "pk",
    "kind",
    "from_entry_id",
    "to_entry_id",
    "from_entry__uid",
    "to_entry__uid",
)
#: What the derivation reads of a revision change (see :func:`_span_changes`).
CHANGE_COLUMNS = (
    "pk",
    "entry_id",
    "revision__number",
    "revision__kind",
    "from_version_id",
    "to_version_id",
    "to_state",
    "state_reason",
)


class ByteLength(Func):
    """The UTF-8 byte length of a text column, on both backends."""

    function = "octet_length"  # PostgreSQL
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="length(CAST(%(expressions)s AS BLOB))", **extra
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
class Bundle:
    """Everything the derivation reads of one batch, keyed by entry (heads, relations) or by
    version (evidence)."""

    heads: dict[int, _Head]
    evidence: dict[int, list[_Evidence]]
    incoming: dict[int, list[RelationRow]]
    outgoing: dict[int, list[RelationRow]]
    states: dict[int, str]
    state_changes: set[int]
    #: (version, state, reason) of each head as its revision changes replay it (span loads).
    replay: dict[int, tuple[int, str, str]] | None = None


def live_relations(entry_pks: Iterable[int]) -> list[RelationRow]:
    """The live relations with either end among ``entry_pks``, in pk order (one query)."""
    pks = list(entry_pks)
    ends = Q(to_entry_id__in=pks) | Q(from_entry_id__in=pks)
    return _relations(ends)


def _relations(ends: Q) -> list[RelationRow]:
    return [
        RelationRow(*row)
        for row in Relation.objects.filter(ends, retired_by__isnull=True)
        .order_by("pk")
        .values_list(*RELATION_COLUMNS)
    ]


def load_bundle(
    entry_pks: Sequence[int],
    span: Span | None = None,
    *,
    relations: Sequence[RelationRow] | None = None,
    written: Mapping[int, Written] | None = None,
) -> Bundle:
    """Load everything the derivation needs for a batch of entries, in a fixed query count
    (whatever the batch holds), as plain tuples: no model instance is built. ``relations``:
    the batch's live relations (:func:`live_relations`) when the caller has read them already;
    ``written``: heads this transaction created, taken as they are instead of read back."""
    written = written or {}
    if span is None:
        read = [pk for pk in entry_pks if pk not in written]
        heads = {
            row[0]: _Head(*row)
            for row in (
                Head.objects.filter(entry_id__in=read)
                .annotate(body_bytes=ByteLength("version__body"))
                .values_list(*_HEAD_COLUMNS)
                if read
                else ()
            )
        }
    else:
        heads = _span_heads(span, set(entry_pks))
    evidence: dict[int, list[_Evidence]] = defaultdict(list)
    if heads:
        for vid, authority, verification, observed in (
            Evidence.objects.filter(version_id__in=[h.version_id for h in heads.values()])
            .order_by()
            .values_list("version_id", "authority", "verification", "observed_at")
        ):
            evidence[vid].append(_Evidence(authority, verification, observed))
    for pk, known in written.items():
        heads[pk] = known.head
        evidence[known.head.version_id] = list(known.evidence)
    if relations is None:
        if span is None:
            relations = live_relations(entry_pks)
        else:
            relations = _relations(span.on("to_entry_id") | span.on("from_entry_id"))
    incoming: dict[int, list[RelationRow]] = defaultdict(list)
    outgoing: dict[int, list[RelationRow]] = defaultdict(list)
    for rel in relations:
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
        # Only a current_state entry's revise counts (see the function): none, no query.
        current = [pk for pk, head in heads.items() if head.current_state and pk not in written]
        state_changes = _evidence_backed_revises(current) if current else set()
    else:
        state_changes, replay = _span_changes(span, heads)
    return Bundle(heads, evidence, incoming, outgoing, states, state_changes, replay)


def _span_heads(span: Span, pks: set[int]) -> dict[int, _Head]:
    """The heads of a span: heads, entries and versions (with their revision's time) read by
    range, each from its own table, and joined here."""
    heads = {
        row[0]: row
        for row in Head.objects.filter(span.on("entry_id")).values_list(
            "entry_id", *HEAD_ROW_COLUMNS
        )
        if row[0] in pks
    }
    entries = {
        row[0]: row for row in Entry.objects.filter(span.on("pk")).values_list("pk", *ENTRY_COLUMNS)
    }
    versions = {
        row[0]: row
        for row in EntryVersion.objects.filter(span.on("entry_id"))
        .order_by()
        .annotate(body_bytes=ByteLength("body"))
        .values_list("pk", "effective_at", "revision__recorded_at", "body_bytes")
    }
    stray = {row[1] for row in heads.values()} - set(versions)
    if stray:  # a head pointing outside its entry's versions: read it anyway (never expected)
        versions.update(
            (row[0], row)
            for row in EntryVersion.objects.filter(pk__in=stray)
            .order_by()
            .annotate(body_bytes=ByteLength("body"))
            .values_list("pk", "effective_at", "revision__recorded_at", "body_bytes")
        )
    out: dict[int, _Head] = {}
    for pk, (_, vid, state, reason, pinned, category, override, started) in heads.items():
        _, memory_id, uid, kind, tier, sensitivity, current = entries[pk]
        _, effective, recorded, size = versions[vid]
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
            size,
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
        .values_list(*CHANGE_COLUMNS)
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
