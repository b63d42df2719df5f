"""Input shapes shared by every proposal kind (strict: unknown fields are refused).

Each kind's own schema lives in its module (``proposals.kinds.<kind>``) and extends
:class:`ProposalCommonIn`; ``proposals.serializers`` assembles them into the submission schema.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from lib.api import StrictSerializer
from memory.models import Kind
from memory.serializers import EvidenceIn

from .models import ProposalKind

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
