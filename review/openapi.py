"""The response bodies of the review and audit API, for the OpenAPI document (see
``memory.openapi``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers as s

from memory.openapi import ActorOut

Null: dict[str, Any] = {"allow_null": True}


class Decided(s.Serializer):
    id = s.IntegerField()
    status = s.CharField()
    operation = s.IntegerField(**Null)
    revision = s.IntegerField(**Null)
    approvals = s.IntegerField()
    approvals_required = s.IntegerField()


class Rejected(Decided):
    reason = s.CharField()
    comment = s.CharField(allow_blank=True)


class OperationOut(s.Serializer):
    id = s.IntegerField()
    memory = s.CharField()
    proposal = s.IntegerField(**Null)
    kind = s.CharField()
    revision = s.IntegerField()
    pre_state = s.JSONField()
    produced = s.JSONField()
    derived_view_impact = s.JSONField()
    compensation_plan = s.JSONField()
    irreversible_effects = s.JSONField()
    approved_by = s.CharField(allow_blank=True)
    created_at = s.DateTimeField()
    compensation = s.JSONField(**Null)


class Compensated(s.Serializer):
    operation = s.IntegerField()
    revision = s.IntegerField()
    status = s.CharField()


class EventOut(s.Serializer):
    id = s.IntegerField()
    action = s.CharField()
    recorded_at = s.DateTimeField()
    actor = ActorOut()
    correlation_id = s.CharField(allow_blank=True)
    memory = s.CharField(**Null)
    label = s.CharField(allow_blank=True)  # type: ignore[assignment]
    revision = s.IntegerField(**Null)
    proposal = s.IntegerField(**Null)
    operation = s.IntegerField(**Null)
    run = s.IntegerField(**Null)
    entry_ids = s.ListField(child=s.CharField(**Null))
    payload = s.JSONField()
    redacted = s.BooleanField()


class EventPage(s.Serializer):
    items = EventOut(many=True)
    next_cursor = s.CharField(**Null)


RESPONSES: dict[tuple[str, str], dict[Any, Any]] = {
    ("ProposalApproveApi", "post"): {200: Decided},
    ("ProposalRejectApi", "post"): {200: Rejected},
    ("OperationDetailApi", "get"): {200: OperationOut},
    ("OperationCompensateApi", "post"): {200: Compensated},
    ("AuditEventListApi", "get"): {200: EventPage},
    ("AuditExportApi", "get"): {
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header"),
        (200, "application/x-ndjson"): OpenApiResponse(
            OpenApiTypes.STR, description="One JSON event per line"
        ),
    },
}
