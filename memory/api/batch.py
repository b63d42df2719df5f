"""``POST /api/v1/memories/{slug}/entries/batch``: many adds in one request, all or nothing.

The view translates like every other: the items are parsed one by one with the single add's
input serializer (``memory.serializers.BatchEntryIn``, so a malformed item is named by its
index), then one action (:func:`memory.actions.add_entries`) judges and writes them. The
request body may be larger than other requests (``STEWARD_BATCH_MAX_BYTES``, default 16 MiB;
over it 413 ``too_large``) — a thousand full-size bodies do not fit Django's default limit.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer

from .. import actions
from ..exceptions import TooLarge, ValidationFailed
from ..permissions import require_writer
from ..serializers import parse_entries
from .base import MemoryApiView

#: Default ceiling of a batch request's body (a thousand 8 kB bodies with their evidence).
MAX_BATCH_BYTES = 16 * 1024 * 1024


def max_batch_bytes() -> int:
    return int(getattr(settings, "STEWARD_BATCH_MAX_BYTES", MAX_BATCH_BYTES))


class BatchIn(StrictSerializer):
    entries = serializers.ListField(
        child=serializers.DictField(),
        allow_empty=False,
        help_text="Up to 1000 objects, each with the fields of one add.",
    )


class BatchItemOut(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.IntegerField(help_text="201 written, 200 an exact duplicate (no-op).")
    entry_id = serializers.CharField(required=False)
    version = serializers.IntegerField(required=False)
    revision = serializers.IntegerField(required=False, allow_null=True)
    content_hash = serializers.CharField(required=False)
    created = serializers.BooleanField(required=False)
    reason = serializers.CharField(required=False, help_text="exact_duplicate for a no-op.")
    state = serializers.CharField(required=False, help_text="candidate under admission review.")
    proposal = serializers.IntegerField(required=False, help_text="The admission proposal.")


class BatchOut(serializers.Serializer):
    results = BatchItemOut(many=True)
    revision = serializers.IntegerField(
        allow_null=True,
        help_text="The revision that wrote the new entries (the Memory's head when none is new).",
    )
    created = serializers.IntegerField(help_text="How many entries are new.")


class EntryBatchApi(MemoryApiView):
    """Remember many entries at once (API.md "Entries")."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self._read_body(request)

    @staticmethod
    def _read_body(request: Request) -> None:
        """Read the body under the batch's own size limit (once authenticated and throttled),
        so the parser finds it read; 413 over it."""
        raw = request._request
        if getattr(raw, "_read_started", False) or hasattr(raw, "_body"):
            return
        limit = max_batch_bytes()
        if int(raw.META.get("CONTENT_LENGTH") or 0) > limit:
            raise TooLarge("The request body is over the size limit.")
        body = raw.read(limit + 1)
        if len(body) > limit:
            raise TooLarge("The request body is over the size limit.")
        raw._body = body
        raw._stream = BytesIO(body)

    @extend_schema(
        tags=["entries"],
        request=BatchIn,
        responses={200: BatchOut},
        summary="Remember many entries (batch add, all or nothing)",
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                location=OpenApiParameter.HEADER,
                required=False,
                description="Same key and body: the same response again; other body: 409.",
            )
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug, require_writer)
        data = request.data
        if not isinstance(data, dict):
            raise ValidationFailed(details={"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - {"entries"})
        if unknown:
            raise ValidationFailed(details={name: ["Unknown field."] for name in unknown})
        if "entries" not in data:
            raise ValidationFailed(details={"entries": ["This field is required."]})
        entries = parse_entries(data["entries"])
        result = actions.add_entries(
            memory,
            actor=actor,
            entries=entries,
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        return Response(result.response, status=200)
