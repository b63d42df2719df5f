"""The derivation: one projection row per entry from authoritative records only.

:func:`derive` is the single derivation; the revision writer calls :func:`refresh` for the
entries a revision touched, inside the same transaction, and the rebuild calls the same code, so
incremental and rebuilt rows agree by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..models import (
    AUTHORITATIVE_RELATIONS,
    WITHHELD_STATES,
    EvidenceStrength,
    HeadState,
    Kind,
    LifecycleProjection,
    RelationKind,
    Validity,
)
from .load import Bundle, RelationRow, Written, live_relations, load_bundle
from .rules import (
    AUTO_ACTION_PREFIXES,
    COMPARED_FIELDS,
    ROW_FIELDS,
    RULE_VERSION,
    UPDATE_FIELDS,
    importance_seed,
    is_direct,
)


def _active(bundle: Bundle, entry_pk: int) -> bool:
    return bundle.states.get(entry_pk) == HeadState.ACTIVE


_importance = lru_cache(maxsize=4096)(importance_seed)


def _validity(bundle: Bundle, entry_pk: int) -> tuple[Validity, str, int | None]:
    """An entry's validity, its reason and its successor, from its head state and relations:
    withheld and inactive entries are that; an active one is superseded by an active
    superseder, in unresolved conflict while a ``conflicts_with`` edge stands unsettled, or
    current."""
    head = bundle.heads[entry_pk]
    incoming = bundle.incoming.get(entry_pk, [])
    outgoing = bundle.outgoing.get(entry_pk, [])
    successor_pk: int | None = None
    if head.state in WITHHELD_STATES:
        # A candidate waits for its admission review, a quarantined entry for its release:
        # neither is current, whatever its relations say.
        return Validity(head.state), head.state_reason, None
    if head.state == HeadState.INACTIVE:
        for rel in outgoing:
            if rel.kind in (RelationKind.CONSOLIDATED_INTO,):
                successor_pk = rel.to_entry_id
        for rel in incoming:
            if rel.kind == RelationKind.PROMOTED_FROM:
                successor_pk = rel.from_entry_id
        return Validity.INACTIVE, head.state_reason, successor_pk
    if not incoming and not outgoing:
        return Validity.CURRENT, "", None
    superseders = sorted(
        (
            rel
            for rel in incoming
            if rel.kind == RelationKind.SUPERSEDES and _active(bundle, rel.from_entry_id)
        ),
        key=lambda r: r.pk,
    )
    if superseders:
        latest = superseders[-1]
        return Validity.SUPERSEDED, f"superseded_by:{latest.from_uid}", latest.from_entry_id
    conflict = _unresolved_conflict(entry_pk, incoming + outgoing)
    if conflict is not None:
        other_uid = conflict.to_uid if conflict.from_entry_id == entry_pk else conflict.from_uid
        return Validity.UNRESOLVED_CONFLICT, f"conflicts_with:{other_uid}", None
    return Validity.CURRENT, "", None


def _unresolved_conflict(entry_pk: int, relations: list[RelationRow]) -> RelationRow | None:
    """The oldest ``conflicts_with`` edge of the entry that no authoritative edge between the
    same two entries settles."""
    unresolved = []
    for rel in relations:
        if rel.kind != RelationKind.CONFLICTS_WITH:
            continue
        other = rel.to_entry_id if rel.from_entry_id == entry_pk else rel.from_entry_id
        settled = any(
            r.kind in AUTHORITATIVE_RELATIONS
            and {r.from_entry_id, r.to_entry_id} == {entry_pk, other}
            for r in relations
        )
        if not settled:
            unresolved.append(rel)
    return min(unresolved, key=lambda r: r.pk) if unresolved else None


def _derive_one(bundle: Bundle, entry_pk: int) -> tuple[Any, ...]:
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
    validity, reason, successor_pk = _validity(bundle, entry_pk)
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
        head.body_bytes,
    )


def derive_rows(bundle: Bundle, pks: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    return {pk: _derive_one(bundle, pk) for pk in sorted(pks) if pk in bundle.heads}


def as_model(row: tuple[Any, ...]) -> LifecycleProjection:
    return LifecycleProjection(**dict(zip(ROW_FIELDS, row, strict=True)))


def derive(entry_pks: Iterable[int]) -> list[LifecycleProjection]:
    """Derive projection rows (unsaved) for the given entries from authoritative records."""
    pks = sorted(set(entry_pks))
    if not pks:
        return []
    bundle = load_bundle(pks)
    return [as_model(row) for row in derive_rows(bundle, pks).values()]


# Relation kinds that can change an entry's validity or successor (duplicate observations
# cannot, so an entry collecting many of them does not widen every refresh).
VALIDITY_RELATIONS = (
    RelationKind.SUPERSEDES,
    RelationKind.CONFLICTS_WITH,
    RelationKind.CONSOLIDATED_INTO,
    RelationKind.PROMOTED_FROM,
)


def neighbours(relations: Iterable[RelationRow]) -> set[int]:
    """Entries whose validity may depend on the relations' ends (either end of a live validity
    relation)."""
    return {
        pk
        for r in relations
        if r.kind in VALIDITY_RELATIONS
        for pk in (r.from_entry_id, r.to_entry_id)
    }


def refresh(entry_pks: Iterable[int], written: Mapping[int, Written] | None = None) -> None:
    """Recompute and store the projection rows of these entries and their neighbours.

    Called by the revision writer inside its transaction (the Memory lock is held). The
    relations read to find the neighbours are the bundle's own; only neighbours outside
    ``entry_pks`` need a second read of theirs. ``written``: entries the transaction created
    with no relation yet (:class:`~.load.Written`), derived from what the writer holds."""
    pks = set(entry_pks)
    if not pks:
        return
    written = written or {}
    read = pks - set(written)
    relations = live_relations(read) if read else []
    extra = neighbours(relations) - pks
    if extra:
        seen = {r.pk for r in relations}
        relations += [r for r in live_relations(extra) if r.pk not in seen]
        relations.sort(key=lambda r: r.pk)
        pks |= extra
    bundle = load_bundle(sorted(pks), relations=relations, written=written)
    rows = [as_model(row) for row in derive_rows(bundle, pks).values()]
    if rows:
        # One upsert: new rows inserted, existing ones overwritten.
        LifecycleProjection.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["entry"], update_fields=UPDATE_FIELDS
        )


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
