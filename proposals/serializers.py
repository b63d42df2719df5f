"""Shapes of proposal requests (strict: unknown fields are refused) and the representation.

:func:`parse_submission` is the one shape check of a submission; ``submit_proposal`` calls it so
every caller (API, system near-duplicate check, demo, scripts) is held to the same shape. Domain
rules (entries, heads, bodies, sessions) live in ``proposals.actions`` and ``proposals.verify``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from lib.api import StrictSerializer
from lib.errors import ValidationFailed
from memory.models import Kind
from memory.serializers import EvidenceIn

from .models import Proposal, ProposalKind, ProposalStatus, ProposalTarget

DURABLE_KINDS = [Kind.FACT, Kind.PREFERENCE, Kind.DECISION, Kind.CONSTRAINT]


class StrictIntegerField(serializers.IntegerField):
    """An integer that is a JSON integer: no strings, floats or booleans."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class EntryRefIn(StrictSerializer):
    entry_id = serializers.CharField(max_length=128)
    version = StrictIntegerField(min_value=1)

    def validate_entry_id(self, value: str) -> str:
        if not value.isascii():
            raise serializers.ValidationError("Entry ids are ASCII.")
        return value


class NewSuccessorIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    kind = serializers.ChoiceField(choices=Kind.choices)
    evidence = EvidenceIn(many=True, required=False)


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="Successor",
        serializers=[EntryRefIn, NewSuccessorIn],
        resource_type_field_name=None,
    )
)
class SuccessorField(serializers.Field):
    """``{entry_id, version}`` (an existing successor) or ``{body, kind, evidence?}`` (new)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError("Expected an object.")
        ser: serializers.Serializer = (
            EntryRefIn(data=data) if "entry_id" in data else NewSuccessorIn(data=data)
        )
        if not ser.is_valid():
            raise serializers.ValidationError(ser.errors)
        return dict(ser.validated_data)

    def to_representation(self, value: Any) -> Any:
        return value


class ProposalCommonIn(StrictSerializer):
    memory = serializers.CharField(max_length=64)
    kind = serializers.ChoiceField(choices=ProposalKind.choices)
    rationale = serializers.CharField(trim_whitespace=False)
    evidence = EvidenceIn(many=True, required=False)
    policy_version = serializers.CharField(max_length=40, required=False)


class ConsolidationIn(ProposalCommonIn):
    target = EntryRefIn()
    redundant = EntryRefIn(many=True, allow_empty=False)
    body = serializers.CharField(trim_whitespace=False)


class SupersessionIn(ProposalCommonIn):
    old = EntryRefIn()
    successor = SuccessorField(
        help_text="{entry_id, version} of an existing entry, or {body, kind, evidence?} (new)"
    )


class PromotionIn(ProposalCommonIn):
    notes = EntryRefIn(many=True, allow_empty=False)
    target_kind = serializers.ChoiceField(choices=[(k.value, k.label) for k in DURABLE_KINDS])
    body = serializers.CharField(trim_whitespace=False)


class CleanupIn(ProposalCommonIn):
    entries = EntryRefIn(many=True, allow_empty=False)


KIND_SERIALIZERS: dict[str, type[ProposalCommonIn]] = {
    ProposalKind.CONSOLIDATION: ConsolidationIn,
    ProposalKind.SUPERSESSION: SupersessionIn,
    ProposalKind.PROMOTION: PromotionIn,
    ProposalKind.CLEANUP: CleanupIn,
}

ProposalSubmitIn = PolymorphicProxySerializer(
    component_name="ProposalSubmit",
    serializers={str(k): v for k, v in KIND_SERIALIZERS.items()},
    resource_type_field_name="kind",
)


def parse_submission(data: Any) -> tuple[str, dict[str, Any]]:
    """Check the shape of a submission for its ``kind``; 400 ``invalid`` with field details
    (unknown fields, fields of another kind, wrong types) otherwise."""
    if not isinstance(data, dict):
        raise ValidationFailed(details={"non_field_errors": ["Expected a JSON object."]})
    kind = data.get("kind")
    if kind not in ProposalKind.values:
        raise ValidationFailed(
            "The request has invalid fields.",
            details={"kind": [f"One of {list(ProposalKind.values)}."]},
        )
    serializer = KIND_SERIALIZERS[kind](data=data)
    if not serializer.is_valid():
        raise ValidationFailed(
            "The request has invalid fields.", details=_details(serializer.errors)
        )
    return str(kind), dict(serializer.validated_data)


def _details(errors: Any) -> Any:
    """DRF's nested error structure as plain JSON (field → messages, nested by field)."""
    if isinstance(errors, dict):
        return {str(k): _details(v) for k, v in errors.items()}
    if isinstance(errors, list):
        return [_details(v) if isinstance(v, dict | list) else str(v) for v in errors]
    return [str(errors)]


class WithdrawIn(StrictSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class ProposalListQuery(StrictSerializer):
    status = serializers.ChoiceField(choices=ProposalStatus.choices, required=False)
    kind = serializers.ChoiceField(choices=ProposalKind.choices, required=False)
    memory = serializers.CharField(required=False, max_length=64)
    submitted_by = serializers.CharField(required=False, max_length=200)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


# --- Output -----------------------------------------------------------------------------------


def target_out(t: ProposalTarget) -> dict[str, Any]:
    return {
        "role": t.role,
        "entry_id": t.entry.uid,
        "kind": t.entry.kind,
        "sensitivity": t.entry.sensitivity,
        "session_id": t.entry.session_id or None,
        "pre_state": {
            "version": t.version_number,
            "state": t.state,
            "content_hash": t.content_hash,
        },
        "body": t.version.body,
    }


def proposal_out(p: Proposal) -> dict[str, Any]:
    """The representation of a proposal (``targets`` prefetched: see ``with_detail``)."""
    verification = p.verification or {}
    return {
        "id": p.pk,
        "memory": p.memory.slug,
        "kind": p.kind,
        "status": p.status,
        "status_reason": p.status_reason or None,
        "rationale": p.rationale,
        "evidence": p.evidence,
        "policy_version": p.policy_version,
        "payload": p.payload,
        "targets": [target_out(t) for t in p.targets.all()],
        "verification": verification,
        "submitted_by": {
            "type": p.submitted_by_type,
            "id": p.submitted_by,
            "label": p.submitted_by_label,
            "on_behalf_of": p.submitted_on_behalf_of or None,
        },
        "created_at": p.created_at,
        "status_changed_at": p.status_changed_at,
        "stale_revision": p.stale_revision.number if p.stale_revision else None,
        "decision": {
            "decided_by": p.decided_by or None,
            "decided_by_label": p.decided_by_label or None,
            "decided_at": p.decided_at,
            "rejection_reason": p.rejection_reason or None,
            "comment": p.decision_comment or None,
        },
    }
