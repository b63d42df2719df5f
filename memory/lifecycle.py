"""The lifecycle projection: derived, rebuildable metadata per entry head (DESIGN.md §5).

:func:`derive` is the single derivation, a function of authoritative records only (heads,
versions, evidence snapshots, relations, revision changes). The revision writer calls
:func:`refresh` for the entries a revision touched, inside the same transaction; the rebuild
command calls the same code over every entry, so incremental and rebuilt rows agree by
construction — and ``rebuild_projection --check`` proves it on real data.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class _Bundle:
    heads: dict[int, Head]
    entries: dict[int, Entry]
    versions: dict[int, EntryVersion]
    evidence: dict[int, list[Evidence]]
    incoming: dict[int, list[Relation]]
    outgoing: dict[int, list[Relation]]
    states: dict[int, str]
    state_changes: set[int]
    first_recorded: dict[int, Any]


def _load(entry_pks: Sequence[int]) -> _Bundle:
    """Load everything the derivation needs for a batch of entries, in a fixed query count."""
    heads = {
        h.entry_id: h
        for h in Head.objects.filter(entry_id__in=entry_pks).select_related(
            "entry", "version", "version__revision"
        )
    }
    entries = {pk: h.entry for pk, h in heads.items()}
    versions = {h.version_id: h.version for h in heads.values()}
    evidence: dict[int, list[Evidence]] = defaultdict(list)
    for ev in Evidence.objects.filter(version_id__in=list(versions)):
        evidence[ev.version_id].append(ev)
    relations = Relation.objects.filter(
        Q(to_entry_id__in=entry_pks) | Q(from_entry_id__in=entry_pks), retired_by__isnull=True
    ).select_related("from_entry", "to_entry")
    incoming: dict[int, list[Relation]] = defaultdict(list)
    outgoing: dict[int, list[Relation]] = defaultdict(list)
    for rel in relations:
        incoming[rel.to_entry_id].append(rel)
        outgoing[rel.from_entry_id].append(rel)
    # The states of relation endpoints outside the batch (a supersedes edge counts only
    # when it comes from an active entry).
    others = {r.from_entry_id for rels in incoming.values() for r in rels} - set(heads)
    states = {pk: h.state for pk, h in heads.items()}
    if others:
        states.update(Head.objects.filter(entry_id__in=others).values_list("entry_id", "state"))
    # "+1 when an evidence-backed revise changes current state": a revise of a
    # current_state entry whose new version brought evidence its predecessor did not cite
    # (the version carries the union, so citing the old evidence again brings nothing).
    state_changes = _evidence_backed_revises(entry_pks)
    first_recorded = {v.pk: v.revision.recorded_at for v in versions.values()}
    return _Bundle(
        heads,
        entries,
        versions,
        evidence,
        incoming,
        outgoing,
        states,
        state_changes,
        first_recorded,
    )


def _evidence_backed_revises(entry_pks: Sequence[int]) -> set[int]:
    """Entries with a revise (current_state) that added a citation: two queries."""
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
    if not changes:
        return set()
    version_ids = {v for _, a, b in changes for v in (a, b)}
    cited: dict[int, set[tuple[int, str]]] = {}
    for vid, source, ref in Evidence.objects.filter(version_id__in=version_ids).values_list(
        "version_id", "source_id", "ref"
    ):
        cited.setdefault(vid, set()).add((source, ref))
    return {
        entry
        for entry, before, after in changes
        if cited.get(after, set()) - cited.get(before, set())
    }


def _active(bundle: _Bundle, entry_pk: int) -> bool:
    return bundle.states.get(entry_pk) == HeadState.ACTIVE


def _derive_one(bundle: _Bundle, entry_pk: int) -> LifecycleProjection:
    head = bundle.heads[entry_pk]
    entry = head.entry
    version = head.version
    evidence = bundle.evidence.get(version.pk, [])
    provenance: dict[str, int] = {}
    for ev in evidence:
        provenance[ev.authority] = provenance.get(ev.authority, 0) + 1
    strength = (
        EvidenceStrength.DIRECT
        if any(is_direct(ev.authority, ev.verification) for ev in evidence)
        else EvidenceStrength.WEAK
    )

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
        for rel in bundle.outgoing.get(entry_pk, []):
            if rel.kind in (RelationKind.CONSOLIDATED_INTO,):
                successor_pk = rel.to_entry_id
        for rel in bundle.incoming.get(entry_pk, []):
            if rel.kind == RelationKind.PROMOTED_FROM:
                successor_pk = rel.from_entry_id
    else:
        superseders = sorted(
            (
                rel
                for rel in bundle.incoming.get(entry_pk, [])
                if rel.kind == RelationKind.SUPERSEDES and _active(bundle, rel.from_entry_id)
            ),
            key=lambda r: r.pk,
        )
        conflicts = [
            rel
            for rel in bundle.incoming.get(entry_pk, []) + bundle.outgoing.get(entry_pk, [])
            if rel.kind == RelationKind.CONFLICTS_WITH
        ]
        if superseders:
            validity = Validity.SUPERSEDED
            successor_pk = superseders[-1].from_entry_id
            reason = f"superseded_by:{superseders[-1].from_entry.uid}"
        elif conflicts:
            # An authoritative edge between the two settles the conflict.
            unresolved = []
            for rel in conflicts:
                other = rel.to_entry_id if rel.from_entry_id == entry_pk else rel.from_entry_id
                settled = any(
                    r.kind in AUTHORITATIVE_RELATIONS
                    and {r.from_entry_id, r.to_entry_id} == {entry_pk, other}
                    for r in bundle.incoming.get(entry_pk, []) + bundle.outgoing.get(entry_pk, [])
                )
                if not settled:
                    unresolved.append(rel)
            if unresolved:
                validity = Validity.UNRESOLVED_CONFLICT
                rel = min(unresolved, key=lambda r: r.pk)
                other_entry = rel.to_entry if rel.from_entry_id == entry_pk else rel.from_entry
                reason = f"conflicts_with:{other_entry.uid}"

    corroborated = entry.kind != Kind.WORKING_NOTE or len(provenance) > 0
    importance = importance_seed(
        kind=entry.kind,
        tier=entry.tier,
        evidence_strength=strength,
        corroborated=corroborated,
        evidence_backed_state_change=entry_pk in bundle.state_changes,
        override=head.importance_override,
    )
    effective_at = version.effective_at
    if effective_at is None:
        observed = [ev.observed_at for ev in evidence if ev.observed_at is not None]
        effective_at = max(observed) if observed else None
    recorded_at = bundle.first_recorded.get(version.pk)
    auto_reason = (
        head.state_reason
        if head.state == HeadState.INACTIVE and head.state_reason.startswith(AUTO_ACTION_PREFIXES)
        else ""
    )
    return LifecycleProjection(
        entry_id=entry_pk,
        memory_id=entry.memory_id,
        version_id=version.pk,
        state=head.state,
        importance=importance,
        evidence_strength=strength,
        provenance=dict(sorted(provenance.items())),
        validity=validity,
        validity_reason=reason,
        successor_entry_id=successor_pk,
        recorded_at=recorded_at,
        effective_at=effective_at,
        time_known=recorded_at is not None,
        tier=entry.tier,
        kind=entry.kind,
        sensitivity=entry.sensitivity,
        current_state=entry.current_state,
        pinned=head.pinned,
        pin_category=head.pin_category,
        protected=head.pinned,
        interval_started_at=head.interval_started_at,
        auto_action_reason=auto_reason,
        rule_version=RULE_VERSION,
    )


def derive(entry_pks: Iterable[int]) -> list[LifecycleProjection]:
    """Derive projection rows (unsaved) for the given entries from authoritative records."""
    pks = sorted(set(entry_pks))
    if not pks:
        return []
    bundle = _load(pks)
    return [_derive_one(bundle, pk) for pk in pks if pk in bundle.heads]


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


def rebuild_batch(entry_pks: Sequence[int], *, write: bool) -> tuple[list[RowDiff], list[str], int]:
    """Rebuild the projection of a batch of entries from authoritative records.

    Returns (differing rows, entries whose head does not match the replay of its revisions,
    rows written). ``write=False`` only compares. The caller holds the Memory lock when writing.
    """
    rebuilt = derive(entry_pks)
    live = {p.entry_id: p for p in LifecycleProjection.objects.filter(entry_id__in=entry_pks)}
    uids = dict(Entry.objects.filter(pk__in=entry_pks).values_list("pk", "uid"))
    diffs: list[RowDiff] = []
    changed: list[LifecycleProjection] = []
    for row in rebuilt:
        delta = diff(live.get(row.entry_id), row)
        if delta:
            diffs.append(RowDiff(uids.get(row.entry_id, str(row.entry_id)), delta))
            changed.append(row)
    mismatched: list[str] = []
    replay = replayed_heads(entry_pks)
    for pk, version_pk, state, reason in Head.objects.filter(entry_id__in=entry_pks).values_list(
        "entry_id", "version_id", "state", "state_reason"
    ):
        if replay.get(pk) != (version_pk, state, reason):
            mismatched.append(uids.get(pk, str(pk)))
    written = 0
    if write and changed:
        new = [r for r in changed if r.entry_id not in live]
        old = [r for r in changed if r.entry_id in live]
        if new:
            LifecycleProjection.objects.bulk_create(new)
        if old:
            LifecycleProjection.objects.bulk_update(old, UPDATE_FIELDS)
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

    Walks the Memory's entries in bounded batches (keyset on the primary key); each batch is
    compared under the Memory lock, so a concurrent writer can neither interleave with it nor
    wait long. Also replays each entry's revision changes against its head, and — when an
    embedding provider is configured — brings the derived vectors of head versions up to date
    (outside the lock: embedding is slow). A real rebuild that wrote something records one
    ``projection.rebuilt`` audit event. ``progress(report)`` is called after every batch.
    """
    from django.db import transaction

    from . import audit
    from .actions import lock_memory
    from .embeddings import get_provider
    from .vectors import index_versions, missing_versions

    report = RebuildReport(memory_slug=memory.slug)
    provider = get_provider()
    last = 0
    while True:
        pks = list(
            Entry.objects.filter(memory_id=memory.pk, pk__gt=last, head__isnull=False)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not pks:
            break
        last = pks[-1]
        with transaction.atomic():
            lock_memory(memory.pk)
            diffs, mismatched, written = rebuild_batch(pks, write=not check)
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
