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

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import parse
from lib.errors import ValidationFailed

from ..permissions import may_see_trace, require_reader
from ..presenters import context_pack_out, search_out
from ..recall import serve_context_pack, serve_search
from ..serializers import RUN_HEADER, RUN_HELP, ContextPackIn, SearchIn, run_id_problem
from .base import MemoryApiView

TAGS = ["recall"]
RUN_PARAMETER = OpenApiParameter(
    RUN_HEADER, str, location=OpenApiParameter.HEADER, required=False, description=RUN_HELP
)


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
        result = serve_search(memory, actor, run_id=run_id, **data)
        return Response(search_out(result, trace=data["trace"]))


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
        return Response(context_pack_out(serve_context_pack(memory, actor, run_id=run_id, **data)))
