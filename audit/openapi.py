"""The response bodies of the audit API, for the OpenAPI document (see ``memory.api.openapi``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers as s

from memory.api.openapi import ActorOut, Null, cursor_page


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


EventPage = cursor_page("EventPage", EventOut)


RESPONSES: dict[tuple[str, str], dict[Any, Any]] = {
    ("AuditEventListApi", "get"): {200: EventPage},
    ("AuditExportApi", "get"): {
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header"),
        (200, "application/x-ndjson"): OpenApiResponse(
            OpenApiTypes.STR, description="One JSON event per line"
        ),
    },
}
