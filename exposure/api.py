"""``GET /api/v1/memories/{slug}/exposures`` (API.md "Recall"): the exposure ledger, newest
first, in cursor pages. Reviewers, auditors and staff; two queries a page (the Memory and the
page with its entries)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer, parse_query
from lib.pagination import keyset_page
from lib.schema import limit_parameter
from memory.actions import get_memory
from memory.api.base import MemoryApiView

from .selectors import exposure_out, require_exposure_reader, visible_exposures


class ExposureListQuery(StrictSerializer):
    entry = serializers.CharField(required=False, max_length=128)
    version = serializers.IntegerField(required=False, min_value=1)
    run = serializers.CharField(required=False, max_length=128)
    key = serializers.CharField(required=False, max_length=200)
    since = serializers.DateTimeField(required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


class ExposureListApi(MemoryApiView):
    @extend_schema(
        tags=["recall"],
        summary="The exposure ledger: which entry versions recall served to which key and run",
        description=(
            "One item per entry version served by a search, a Context Pack or an MCP "
            "`recall` / `context_pack`: `{at, key, run_id, entry_id, version, via}`, newest "
            "first. Filters: `entry` (an entry id), `version` (with or without `entry`), "
            "`run` (a run id), `key` (an actor id such as `key:abcd1234`), `since` (ISO "
            "8601). Rows older than the Memory's `policy.exposure.retention_days` (30) are "
            "purged. Reviewers and auditors only; entries above the reader's clearance are "
            "left out."
        ),
        parameters=[
            OpenApiParameter("entry", str),
            OpenApiParameter("version", {"type": "integer", "minimum": 1}),
            OpenApiParameter("run", str),
            OpenApiParameter("key", str),
            OpenApiParameter("since", str, description="ISO 8601 date-time."),
            OpenApiParameter("cursor", str),
            limit_parameter(),
        ],
    )
    def get(self, request: Request, slug: str) -> Response:
        actor = self.actor(request)
        memory = get_memory(actor, slug)  # 404 outside the key's scope, whatever its role
        require_exposure_reader(actor)
        filters = parse_query(ExposureListQuery, request)
        qs = visible_exposures(actor, memory).select_related("entry")
        if "entry" in filters:
            qs = qs.filter(entry__uid=filters["entry"])
        if "version" in filters:
            qs = qs.filter(version=filters["version"])
        if "run" in filters:
            qs = qs.filter(run_id=filters["run"])
        if "key" in filters:
            qs = qs.filter(key=filters["key"])
        if "since" in filters:
            qs = qs.filter(at__gte=filters["since"])
        rows, cursor = keyset_page(qs, request.query_params, descending=True)
        return Response({"items": [exposure_out(r) for r in rows], "next_cursor": cursor})
