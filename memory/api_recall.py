"""Recall endpoints: search and the Context Pack (API.md "Recall"). Views translate only.

``trace`` is returned only to reviewers, auditors and staff. An agent that asks for it gets the
ordinary answer with the trace silently left out (not a 403): agent code can send the same
request under any key, and the trace is a diagnostic, not a right.

Both take ``filters`` (:mod:`memory.search.filters`): an unknown key, a value of the wrong type,
an unknown kind or tier, a date that is not ISO 8601 or an empty range is 400 ``invalid`` with
the offending key named in ``details.filters``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer, parse
from lib.errors import Forbidden, ValidationFailed
from lib.wording import listed

from . import effects
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
from .models import ApiRole, Kind, Memory, Tier
from .search import FILTER_KEYS, Hit, RecallFilters, search

TAGS = ["recall"]
VIEW_CHOICES = [("current", "current"), ("history", "history")]
#: Search also offers reviewers and auditors the candidates waiting for admission review.
SEARCH_VIEWS = [*VIEW_CHOICES, ("candidates", "candidates")]
INTENT_CHOICES = [("current", "current"), ("none", "none")]
#: The header naming the caller's run when the body does not (API.md "Recall").
RUN_HEADER = "X-Steward-Run"
RUN_HELP = (
    "Your run or conversation id (ASCII, at most 128 characters; also the `X-Steward-Run` "
    "header). Recorded in the exposure ledger with the entry versions this call served, so a "
    "later correction can name the runs that were told the old text."
)


RUN_PARAMETER = OpenApiParameter(
    RUN_HEADER, str, location=OpenApiParameter.HEADER, required=False, description=RUN_HELP
)


def run_id_problem(value: object) -> str | None:
    """Why ``value`` may not be a run id (None when it may): a string of 1..128 printable
    ASCII characters."""
    if not isinstance(value, str) or not value:
        return "A non-empty string."
    if len(value) > settings.STEWARD_MAX_ID_CHARS:
        return f"At most {settings.STEWARD_MAX_ID_CHARS} characters."
    if not all(" " <= c <= "~" for c in value):
        return "Printable ASCII only."
    return None


class RunIdField(serializers.CharField):
    """``run_id``: printable ASCII, 1..128 characters, kept exactly as given."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            required=False, trim_whitespace=False, allow_blank=False, help_text=RUN_HELP, **kwargs
        )

    def to_internal_value(self, data: Any) -> str:
        problem = run_id_problem(data)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return str(data)


def run_of(request: Request, data: dict[str, Any]) -> str:
    """The run the request names: the body's ``run_id``, else the ``X-Steward-Run`` header
    (400 ``invalid`` when the header is not a valid run id, or names another run than the
    body); ``""`` when neither does."""
    body = data.pop("run_id", None)
    header = request.headers.get(RUN_HEADER)
    if header is not None:
        problem = run_id_problem(header)
        if problem is not None:
            raise ValidationFailed(details={RUN_HEADER: [problem]})
        if body is not None and body != header:
            raise ValidationFailed(
                details={"run_id": [f"Differs from the {RUN_HEADER} header; send one of them."]}
            )
    return body or header or ""


class FiltersIn(StrictSerializer):
    """Scoped recall (API.md "Recall"): each key narrows both channels before fusion."""

    session_id = serializers.CharField(
        required=False,
        max_length=settings.STEWARD_MAX_ID_CHARS,
        help_text="Only entries written in this session.",
    )
    kind = serializers.ListField(
        child=serializers.ChoiceField(choices=Kind.choices),
        required=False,
        allow_empty=False,
        max_length=len(Kind.choices),
        help_text="Only entries of one of these kinds.",
    )
    tier = serializers.ListField(
        child=serializers.ChoiceField(choices=Tier.choices),
        required=False,
        allow_empty=False,
        max_length=len(Tier.choices),
        help_text="Only entries of one of these tiers.",
    )
    effective_after = serializers.DateTimeField(
        required=False,
        help_text=(
            "Only entries effective at or after this time (ISO 8601; a date is its midnight "
            "UTC). An entry of unknown effective time never matches a time range."
        ),
    )
    effective_before = serializers.DateTimeField(
        required=False,
        help_text="Only entries effective before this time (ISO 8601, exclusive).",
    )
    source = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(max_length=128),
        required=False,
        allow_empty=False,
        max_length=32,
        help_text="Only entries whose evidence cites one of these registered sources.",
    )

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict) and (unknown := sorted(set(data) - set(FILTER_KEYS))):
            accepted = f"Unknown filter: filters are {listed(FILTER_KEYS)}."
            raise serializers.ValidationError({name: [accepted] for name in unknown})
        names = data.get("source") if isinstance(data, dict) else None
        if isinstance(names, list) and not all(isinstance(n, str) for n in names):
            raise serializers.ValidationError({"source": ["A list of source names (strings)."]})
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        after, before = attrs.get("effective_after"), attrs.get("effective_before")
        if after is not None and before is not None and after >= before:
            raise serializers.ValidationError(
                {"effective_before": ["Must be later than effective_after."]}
            )
        return attrs


FILTERS_HELP = (
    "Scope the recall: `session_id`, `kind` [..], `tier` [..], `effective_after` / "
    "`effective_before` (ISO 8601; unknown time never matches), `source` [..]. Applied in every "
    "channel before fusion, like the validity filter."
)

STRICT_FRESH_HELP = (
    "Leave out entries due for re-checking (their `review_at` has passed), in every channel "
    "before fusion. Without it they are returned, flagged `review_due: true`."
)


class SearchIn(StrictSerializer):
    query = serializers.CharField(trim_whitespace=False, max_length=8192)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)
    view = serializers.ChoiceField(choices=SEARCH_VIEWS, required=False, default="current")
    intent = serializers.ChoiceField(choices=INTENT_CHOICES, required=False, allow_null=True)
    trace = serializers.BooleanField(required=False, default=False)
    filters = FiltersIn(required=False, allow_null=True, help_text=FILTERS_HELP)
    strict_fresh = serializers.BooleanField(
        required=False, default=False, help_text=STRICT_FRESH_HELP
    )
    run_id = RunIdField()


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
    filters = FiltersIn(required=False, allow_null=True, help_text=FILTERS_HELP)
    strict_fresh = serializers.BooleanField(
        required=False, default=False, help_text=STRICT_FRESH_HELP
    )
    run_id = RunIdField()


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
        "kind": hit.kind,
        "tier": hit.tier,
        "session_id": hit.session_id,
        "effective_at": hit.effective_at,
        "recorded_at": hit.recorded_at,
        "provenance": hit.provenance,
        "owner": hit.owner,
        "confidence": hit.confidence,
        "review_at": hit.review_at,
        "review_due": hit.review_due,
        "lifecycle": hit.lifecycle(),
    }


def recall_filters(
    filters: dict[str, Any] | None, *, strict_fresh: bool = False
) -> RecallFilters | None:
    """A request's validated ``filters`` and ``strict_fresh`` as the pipeline's filters."""
    fresh_at = timezone.now() if strict_fresh else None
    return RecallFilters.from_request(filters, fresh_at=fresh_at)


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
    filters: dict[str, Any] | None = None,
    strict_fresh: bool = False,
    run_id: str = "",
    via: str = "search",
) -> dict[str, Any]:
    """The body of recall (``POST …/search`` and the MCP ``recall`` tool): the hits, and the
    ranking trace when ``trace`` (the caller decides who may see it). ``filters``: the
    validated ``FiltersIn``; ``strict_fresh``: leave out entries due for re-checking. What it
    served is announced (``effects.served``: the recall events and the exposure ledger), as served
    to ``run_id`` through ``via``."""
    result = search(
        memory,
        actor=actor,
        query=query,
        limit=limit,
        view=view,
        intent=intent,
        trace=trace,
        filters=recall_filters(filters, strict_fresh=strict_fresh),
    )
    hits = [hit_out(h) for h in result.hits]
    effects.served(
        memory, actor, run_id=run_id, via=via, items=[(h.entry_pk, h.version) for h in result.hits]
    )
    body: dict[str, Any] = {"hits": hits}
    if trace:
        body["trace"] = result.trace.as_dict()
    return body


def context_pack_out(
    memory: Memory,
    actor: Actor,
    *,
    query: str,
    filters: dict[str, Any] | None = None,
    strict_fresh: bool = False,
    run_id: str = "",
    via: str = "context_pack",
    **options: Any,
) -> dict[str, Any]:
    """The body of a Context Pack (``POST …/context-pack`` and the MCP ``context_pack`` tool);
    ``filters``: the validated ``FiltersIn``; ``options`` are
    :func:`~memory.context_pack.build_context_pack`'s."""
    pack = build_context_pack(
        memory,
        actor=actor,
        query=query,
        filters=recall_filters(filters, strict_fresh=strict_fresh),
        **options,
    )
    effects.served(
        memory, actor, run_id=run_id, via=via, items=[(i.entry_id, i.version) for i in pack.items]
    )
    return {"text": pack.text, "items": [i.as_dict() for i in pack.items], "bytes": pack.bytes}


class SearchApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=SearchIn,
        parameters=[RUN_PARAMETER],
        summary="Recall: current-state (default) or historical search",
        description=(
            "Lexical (and, when configured, vector) recall with the validity filter and the "
            "request's `filters` applied before fusion, plain RRF scores, and an optional "
            "bounded quality reorder. Each hit carries its provenance: `kind`, `tier`, "
            "`session_id`, `effective_at`, `recorded_at` and `provenance` (the cited sources "
            "with their authority as declared when cited, and the evidence dates). "
            "`trace: true` returns the RankingTrace to reviewers, auditors and staff; for "
            "agents it is silently omitted. Never writes on the request path: the entry "
            "versions served are queued for the exposure ledger with the key and `run_id` "
            "(or the `X-Steward-Run` header)."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug, require_reader)
        data = parse(SearchIn, request)
        data["trace"] = bool(data["trace"]) and may_see_trace(actor)
        run_id = run_of(request, data)
        return Response(search_out(memory, actor, run_id=run_id, **data))


class ContextPackApi(MemoryApiView):
    @extend_schema(
        tags=TAGS,
        request=ContextPackIn,
        parameters=[RUN_PARAMETER],
        summary="A Context Pack: labelled, cited recall inside a byte budget",
        description=(
            "At most `max_items` of the first `candidates` recall hits (scoped by `filters`, "
            "as search is), each ≤ 2000 bytes and dated in its header, between fixed "
            "begin/end markers stating the content is untrusted history. Each item carries "
            "the provenance of a search hit. "
            "`bytes` is the exact UTF-8 length of `text`. Never writes on the request path: "
            "the items served are queued for the exposure ledger with the key and `run_id` "
            "(or the `X-Steward-Run` header)."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug, require_reader)
        data = parse(ContextPackIn, request)
        run_id = run_of(request, data)
        return Response(context_pack_out(memory, actor, run_id=run_id, **data))
