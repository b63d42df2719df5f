"""Observed relations between entries: a reported conflict, and what the near-duplicate check
found for a freshly added entry."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from .. import audit, lifecycle
from ..actors import Actor
from ..admission import clean_id
from ..dedupe import Admission, round_score
from ..exceptions import (
    ValidationFailed,
)
from ..models import (
    Entry,
    Head,
    HeadState,
    Memory,
    Relation,
    RelationKind,
)
from ..permissions import require_writer
from ..personal_data import refused_kinds
from ..selectors import get_entry
from .evidence import EvidenceArg, clean_evidence, evidence_json, resolve_evidence
from .writer import lock_memory


@transaction.atomic(durable=True)
def record_conflict(
    memory: Memory,
    *,
    actor: Actor,
    from_entry: str,
    to_entry: str,
    evidence: EvidenceArg | None = None,
) -> Relation:
    """Record a ``conflicts_with`` observation. It annotates (validity becomes
    unresolved_conflict) but never changes heads, so it writes no revision."""
    require_writer(actor)
    a_uid = clean_id(from_entry, field="from_entry")
    b_uid = clean_id(to_entry, field="to_entry")
    if a_uid == b_uid:
        raise ValidationFailed(details={"to_entry": ["An entry cannot conflict with itself."]})
    items = clean_evidence(evidence, refuse=refused_kinds(memory.policy))
    resolve_evidence(items)
    memory = lock_memory(memory.pk)
    a = get_entry(actor, memory, a_uid)
    b = get_entry(actor, memory, b_uid)
    edge = {"memory": memory, "kind": RelationKind.CONFLICTS_WITH, "from_entry": a, "to_entry": b}
    existing = Relation.objects.filter(**edge, retired_by__isnull=True).first()
    if existing is not None:
        return existing
    relation = Relation.objects.create(
        **edge,
        authoritative=False,
        evidence=evidence_json(items),
        created_by=actor.id,
    )
    lifecycle.refresh([a.pk, b.pk])
    audit.record(
        "relation.observed",
        actor=actor,
        memory=memory,
        label=f"{a.uid} conflicts_with {b.uid}",
        entry_ids=[a.uid, b.uid],
        payload={"relation": relation.pk, "kind": relation.kind, "evidence": len(items)},
    )
    return relation


def record_admission(
    memory: Memory, *, actor: Actor, entry: Entry, admission: Admission
) -> list[dict[str, Any]]:
    """Record the findings of a freshly added entry: ``duplicate_of`` / ``near_duplicate_of``
    observations from the new entry to what it resembles; returns
    ``[{entry_id, score, relation, claimed?}]`` for the add response.

    Precondition: called by ``add_entry`` inside its transaction, holding the Memory lock. A
    finding whose entry stopped being active since the check is dropped (one query). Writes
    relations (no revision, heads and projection untouched) and one audit event.
    """
    found = admission.findings
    if found:
        still = set(
            Head.objects.filter(
                entry_id__in=[f.entry.pk for f in found], state=HeadState.ACTIVE
            ).values_list("entry_id", flat=True)
        )
        found = [f for f in found if f.entry.pk in still]
    if not found:
        return []
    Relation.objects.bulk_create(
        [
            Relation(
                memory=memory,
                kind=f.relation,
                from_entry=entry,
                to_entry=f.entry,
                authoritative=False,
                score=round_score(f.score),
                evidence=[{"method": f.method, "claimed": f.claimed}],
                created_by=actor.id,
            )
            for f in found
        ]
    )
    out = [f.as_dict() for f in found]
    audit.record(
        "relation.observed",
        actor=actor,
        memory=memory,
        label=f"{entry.uid} resembles {len(found)} entr{'y' if len(found) == 1 else 'ies'}",
        entry_ids=[entry.uid, *(f.entry.uid for f in found)],
        payload={"near_duplicates": out, "method": admission.method},
    )
    return out
