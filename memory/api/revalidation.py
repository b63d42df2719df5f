"""Revalidation endpoints (``memory.revalidation``): confirm a re-checked entry, require its
re-verification, and the "needs re-checking" list. Views translate only."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer, parse, parse_query
from lib.errors import ValidationFailed
from lib.pagination import decode_cursor, encode_cursor, page_limit
from lib.schema import limit_parameter

from .. import actions
from ..permissions import require_confirmer, require_reviewer
from ..presenters import confirm_out
from ..revalidation import due_heads, due_item, due_page
from ..selectors import head_of
from ..serializers import ConfirmIn, ReasonIn
from .base import MemoryApiView

TAGS = ["revalidation"]


class DueListQuery(StrictSerializer):
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


class EntryConfirmApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=ConfirmIn,
        summary="Confirm a re-checked entry: a revision, no new version; the review date moves on",
    )
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        require_confirmer(actor)
        data = parse(ConfirmIn, request)
        result = actions.confirm_entry(memory, actor=actor, entry_uid=entry_id, **data)
        return Response(confirm_out(result, head_of(result.entry)))


class EntryRequireReverificationApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=ReasonIn,
        summary="Mark an entry due for re-checking now (reviewers)",
    )
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        require_reviewer(actor, "require re-verification of")
        data = parse(ReasonIn, request)
        result = actions.require_reverification(memory, actor=actor, entry_uid=entry_id, **data)
        return Response(confirm_out(result, head_of(result.entry)))


def parse_due_cursor(raw: str | None) -> list[int] | None:
    """The ``[recall_count, entry pk]`` of a "needs re-checking" cursor; 400 when malformed."""
    if not raw:
        return None
    value = decode_cursor(raw)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ValidationFailed(details={"cursor": ["Not a valid cursor."]})
    return value


class DueListApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        summary="Needs re-checking: active entries whose review date has passed",
        description=(
            "Most recalled first (`recall_count`, folded from recall events), then by entry; "
            "cursor pages. Being due never deactivates an entry."
        ),
        parameters=[OpenApiParameter("cursor", str), limit_parameter()],
    )
    def get(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        query = parse_query(DueListQuery, request)
        heads = due_heads(memory, actor=actor, now=timezone.now())
        rows, after = due_page(
            heads,
            cursor=parse_due_cursor(query.get("cursor")),
            limit=page_limit(request.query_params),
        )
        return Response(
            {
                "items": [due_item(h) for h in rows],
                "next_cursor": encode_cursor(after) if after else None,
            }
        )
