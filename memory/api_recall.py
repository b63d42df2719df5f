"""Recall endpoints: search and the Context Pack (API.md "Recall"). Views translate only.

``trace`` is returned only to reviewers, auditors and staff. An agent that asks for it gets the
ordinary answer with the trace silently left out (not a 403): agent code can send the same
request under any key, and the trace is a diagnostic, not a right.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer, parse
from lib.errors import Forbidden

from . import recall_events
from .actors import STAFF, Actor
from .api_base import MemoryApiView
from .context_pack import (
    DEFAULT_BUDGET,
    DEFAULT_CANDIDATES,
    DEFAULT_MAX_ITEMS,
    MAX_BUDGET,
    MIN_BUDGET,
    build_context_pack,
)
from .models import ApiRole, Memory
from .search import Hit, search

TAGS = ["recall"]
VIEW_CHOICES = [("current", "current"), ("history", "history")]
#: Search also offers reviewers and auditors the candidates waiting for admission review.
SEARCH_VIEWS = [*VIEW_CHOICES, ("candidates", "candidates")]
INTENT_CHOICES = [("current", "current"), ("none", "none")]


class SearchIn(StrictSerializer):
    query = serializers.CharField(trim_whitespace=False, max_length=8192)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)
    view = serializers.ChoiceField(choices=SEARCH_VIEWS, required=False, default="current")
    intent = serializers.ChoiceField(choices=INTENT_CHOICES, required=False, allow_null=True)
    trace = serializers.BooleanField(required=False, default=False)


class ContextPackIn(StrictSerializer):
    query = serializers.CharField(trim_whitespace=False, max_length=8192)
    byte_budget = serializers.IntegerField(
        required=False, default=DEFAULT_BUDGET, min_value=MIN_BUDGET, max_value=MAX_BUDGET
    )
    candidates = serializers.IntegerField(
        required=False, default=DEFAULT_CANDIDATES, min_value=1, max_value=DEFAULT_CANDIDATES
    )
    max_items = serializers.IntegerField(
        required=False, default=DEFAULT_MAX_ITEMS, min_value=1, max_value=DEFAULT_MAX_ITEMS
    )
    view = serializers.ChoiceField(choices=VIEW_CHOICES, required=False, default="current")
    intent = serializers.ChoiceField(choices=INTENT_CHOICES, required=False, allow_null=True)


def may_see_trace(actor: Actor) -> bool:
    """Reviewers, auditors and staff see ranking traces; agents do not."""
    return actor.role in (ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF)


def hit_out(hit: Hit) -> dict[str, Any]:
    return {
        "entry_id": hit.entry_id,
        "version": hit.version,
        "body": hit.body,
        "score": hit.score,
        "channels": hit.channels,
        "lifecycle": hit.lifecycle(),
    }


def require_reader(actor: Actor) -> None:
    """403 ``forbidden`` for a role that may not recall (checked before the Memory is looked up,
    by the REST views and the MCP tools alike)."""
    if not actor.can_read:
        raise Forbidden("Your role may not recall memories.")


def search_out(
    memory: Memory,
    actor: Actor,
    *,
    query: str,
    limit: int,
    view: str,
    intent: str | None = None,
    trace: bool = False,
) -> dict[str, Any]:
    """The body of recall (``POST …/search`` and the MCP ``recall`` tool): the hits, and the
    ranking trace when ``trace`` (the caller decides who may see it)."""
    result = search(
        memory, actor=actor, query=query, limit=limit, view=view, intent=intent, trace=trace
    )
    hits = [hit_out(h) for h in result.hits]
    # Queued for the fold (no write here), when the policy enables recall events.
    recall_events.record(memory, [h.entry_pk for h in result.hits], actor_id=actor.id)
    body: dict[str, Any] = {"hits": hits}
    if trace:
        body["trace"] = result.trace.as_dict()
    return body


def context_pack_out(memory: Memory, actor: Actor, *, query: str, **options: Any) -> dict[str, Any]:
    """The body of a Context Pack (``POST …/context-pack`` and the MCP ``context_pack`` tool);
    ``options`` are :func:`~memory.context_pack.build_context_pack`'s."""
    pack = build_context_pack(memory, actor=actor, query=query, **options)
    recall_events.record(memory, [i.entry_id for i in pack.items], actor_id=actor.id)
    return {"text": pack.text, "items": [i.as_dict() for i in pack.items], "bytes": pack.bytes}


class SearchApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=SearchIn,
        summary="Recall: current-state (default) or historical search",
        description=(
            "Lexical (and, when configured, vector) recall with the validity filter applied "
            "before fusion, plain RRF scores, and an optional bounded quality reorder. "
            "`trace: true` returns the RankingTrace to reviewers, auditors and staff; for "
            "agents it is silently omitted. Never writes."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug, require_reader)
        data = parse(SearchIn, request)
        data["trace"] = bool(data["trace"]) and may_see_trace(actor)
        return Response(search_out(memory, actor, **data))


class ContextPackApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=ContextPackIn,
        summary="A Context Pack: labelled, cited recall inside a byte budget",
        description=(
            "At most `max_items` of the first `candidates` recall hits, each ≤ 2000 bytes, "
            "between fixed begin/end markers stating the content is untrusted history. "
            "`bytes` is the exact UTF-8 length of `text`. Never writes."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug, require_reader)
        return Response(context_pack_out(memory, actor, **parse(ContextPackIn, request)))
