"""Input serializers (shape only; domain rules live in actions) and output presenters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from lib.api import StrictSerializer
from lib.identity import Actor

from .models import (
    ApiRole,
    Authority,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    HeadState,
    Kind,
    LifecycleProjection,
    Memory,
    PinCategory,
    Revision,
    Sensitivity,
    Source,
    SourceDeclaration,
    Tier,
    Validity,
    Verification,
    sensitivities_up_to,
)
from .revalidation import is_due

# --- Inputs ---------------------------------------------------------------------------------


class DeclarationIn(StrictSerializer):
    authority = serializers.ChoiceField(choices=Authority.choices)
    verification = serializers.ChoiceField(choices=Verification.choices)


class EvidenceIn(StrictSerializer):
    source = serializers.CharField(trim_whitespace=False)  # type: ignore[assignment]
    ref = serializers.CharField(trim_whitespace=False)
    observed_at = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    quote = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class MemoryCreateIn(StrictSerializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    policy = serializers.DictField(required=False)


class MemoryPatchIn(StrictSerializer):
    policy = serializers.DictField()


class SourceCreateIn(StrictSerializer):
    name = serializers.CharField(max_length=128)
    description = serializers.CharField(required=False, allow_blank=True)
    declaration = DeclarationIn(required=False)


class EntryCreateIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    kind = serializers.ChoiceField(choices=Kind.choices)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    session_id = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    current_state = serializers.BooleanField(required=False, default=False)
    effective_at = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices, required=False)
    evidence = EvidenceIn(many=True, required=False)
    dedupe = serializers.BooleanField(required=False, default=True)
    near_duplicate_of = serializers.CharField(required=False, allow_null=True)
    owner = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        trim_whitespace=False,
        help_text="Who answers for the fact: a user or team name (spec 004).",
    )
    confidence = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=1, help_text="0..1."
    )
    review_at = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text=(
            "ISO 8601 date or datetime: when the fact must be re-checked. Without it the "
            "Memory's `revalidation` policy may give one."
        ),
    )


class EntryReviseIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    evidence = EvidenceIn(many=True, required=False)
    expected_version = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    importance_override = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=3
    )


class ConfirmIn(StrictSerializer):
    evidence = EvidenceIn(many=True, required=False)
    review_at = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text=(
            "ISO 8601 date or datetime in the future: the next re-check. Without it the "
            "Memory's `revalidation` policy gives one from now, else the entry has none."
        ),
    )


class ReasonIn(StrictSerializer):
    reason = serializers.CharField(trim_whitespace=False)


class NoFieldsIn(StrictSerializer):
    """The body of an action that takes no fields: none, or ``{}``."""


class OptionalReasonIn(StrictSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class PinIn(StrictSerializer):
    pinned = serializers.BooleanField()
    category = serializers.ChoiceField(choices=PinCategory.choices, required=False)
    reason = serializers.CharField(trim_whitespace=False)


class RelationIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=[("conflicts_with", "conflicts_with")])
    from_entry = serializers.CharField()
    to_entry = serializers.CharField()
    evidence = EvidenceIn(many=True, required=False)


class EntryListQuery(StrictSerializer):
    state = serializers.ChoiceField(choices=HeadState.choices, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    validity = serializers.ChoiceField(choices=Validity.choices, required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


class RevisionListQuery(StrictSerializer):
    since_revision = serializers.IntegerField(required=False, min_value=0, default=0)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500)


# --- Outputs --------------------------------------------------------------------------------


def memory_out(memory: Memory) -> dict[str, Any]:
    return {
        "slug": memory.slug,
        "name": memory.name,
        "policy": memory.policy,
        "head": memory.head,
        "created_at": memory.created_at,
    }


def declaration_out(decl: SourceDeclaration | None) -> dict[str, Any]:
    if decl is None:
        return {
            "authority": Authority.UNTRUSTED,
            "verification": Verification.UNKNOWN,
            "declaration_version": None,
        }
    return {
        "authority": decl.authority,
        "verification": decl.verification,
        "declaration_version": decl.version,
        "declared_at": decl.created_at,
    }


def source_out(source: Source, decls: list[SourceDeclaration]) -> dict[str, Any]:
    return {
        "name": source.name,
        "description": source.description,
        "declaration": declaration_out(decls[-1] if decls else None),
        "declarations": [declaration_out(d) for d in decls],
    }


def evidence_out(ev: Evidence) -> dict[str, Any]:
    return {
        "source": ev.source.name,
        "ref": ev.ref,
        "observed_at": ev.observed_at,
        "quote": ev.quote,
        "snapshot": {
            "authority": ev.authority,
            "verification": ev.verification,
            "declaration_version": ev.declaration_version,
        },
    }


def lifecycle_out(p: LifecycleProjection | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {
        "validity": p.validity,
        "validity_reason": p.validity_reason,
        "successor_entry": p.successor_entry.uid if p.successor_entry else None,
        "importance": p.importance,
        "evidence_strength": p.evidence_strength,
        "provenance": p.provenance,
        "recorded_at": p.recorded_at,
        "effective_at": p.effective_at,
        "time_known": p.time_known,
        "pinned": p.pinned,
        "pin_category": p.pin_category,
        "auto_action_reason": p.auto_action_reason,
        "interval_started_at": p.interval_started_at,
        # Folded from recall events (memory.recall_events) when the policy enables them.
        "recall_count": p.recall_count,
        "last_recalled_at": p.last_recalled_at,
    }


def governance_out(head: Head, now: datetime | None = None) -> dict[str, Any]:
    """An entry's governance fields (spec 004, ``memory.revalidation``) and whether it is due
    for re-checking at ``now``."""
    return {
        "owner": head.owner or None,
        "confidence": head.confidence,
        "review_at": head.review_at,
        "review_due": is_due(head.review_at, now or timezone.now()),
    }


def entry_out(entry: Entry, head: Head, projection: LifecycleProjection | None) -> dict[str, Any]:
    version = head.version
    return {
        "entry_id": entry.uid,
        "kind": entry.kind,
        "tier": entry.tier,
        "session_id": entry.session_id or None,
        "sensitivity": entry.sensitivity,
        "current_state": entry.current_state,
        "state": head.state,
        "state_reason": head.state_reason,
        "version": version.number,
        "content_hash": version.content_hash,
        "body": version.body,
        "evidence": [evidence_out(ev) for ev in version.evidence.all()],
        **governance_out(head),
        "lifecycle": lifecycle_out(projection),
    }


def version_out(
    version: EntryVersion, head: Head, successor: EntryVersion | None
) -> dict[str, Any]:
    """One historical version with the lifecycle reason that applies to it."""
    if version.pk == head.version_id:
        status = head.state
        reason = head.state_reason
    else:
        status = "replaced"
        reason = f"replaced_by_version:{successor.number}" if successor else "replaced"
    return {
        "version": version.number,
        "body": version.body,
        "content_hash": version.content_hash,
        "predecessor": version.number - 1 if version.predecessor_id else None,
        "revision": version.revision.number,
        "recorded_at": version.revision.recorded_at,
        "effective_at": version.effective_at,
        "evidence": [evidence_out(ev) for ev in version.evidence.all()],
        "is_head": version.pk == head.version_id,
        "status": status,
        "lifecycle_reason": reason,
        "replaced_by_revision": successor.revision.number if successor else None,
    }


REDACTED_REASON = "(redacted: this revision touches entries above your clearance)"


def revision_out(rev: Revision, actor: Actor | None = None) -> dict[str, Any]:
    """A revision as ``actor`` may see it: changes to entries above its clearance are left out,
    and then the free-text reason (which may describe them) is redacted too."""
    visible = sensitivities_up_to(actor.clearance) if actor is not None else None
    changes = [ch for ch in rev.changes.all() if visible is None or ch.entry.sensitivity in visible]
    hidden = len(rev.changes.all()) - len(changes)
    return {
        "number": rev.number,
        "kind": rev.kind,
        "actor": {
            "type": rev.actor_type,
            "id": rev.actor_id,
            "label": rev.actor_label,
            "on_behalf_of": rev.on_behalf_of or None,
        },
        "reason": REDACTED_REASON if hidden else rev.reason,
        "recorded_at": rev.recorded_at,
        "correlation_id": rev.correlation_id,
        "proposal": rev.proposal_id,
        "operation": rev.operation_id,
        "changes": [
            {
                "entry_id": ch.entry.uid,
                "from_version": ch.from_version.number if ch.from_version else None,
                "to_version": ch.to_version.number,
                "from_state": ch.from_state or None,
                "to_state": ch.to_state,
                "state_reason": ch.state_reason,
                **({"attributes": ch.attributes} if ch.attributes else {}),
            }
            for ch in changes
        ],
        **({"hidden_changes": hidden} if hidden else {}),
    }


ROLE_CHOICES = ApiRole.choices
