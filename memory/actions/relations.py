"""Observed relations between entries."""

from __future__ import annotations

from django.db import transaction

from .. import audit, lifecycle
from ..actors import Actor
from ..admission import clean_id
from ..exceptions import (
    ValidationFailed,
)
from ..models import (
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
