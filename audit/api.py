"""REST endpoints of the audit trail: the event list and the streamed export.

``GET /api/v1/audit/events`` pages newest-first with an opaque cursor; ``GET /api/v1/audit/export``
streams every matching event oldest-first as CSV or JSON Lines. Both take the same filters as the
``/audit/`` page (one queryset: :func:`review.events.audit_events_for`) and answer only to
reviewers, auditors and staff; a key limited to Memories reads only those Memories' events.

The export never loads the result set: it walks the table in keyset batches (``id > last``,
``LIMIT EXPORT_BATCH``), fetches each batch with ``.iterator(chunk_size=...)`` and yields text in
buffers of about 64 KiB, so memory stays bounded whatever the number of events. The upper id is
fixed when the export starts, so an export is a consistent snapshot even while events are written.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import ActorApiView
from lib.errors import Forbidden, ValidationFailed
from lib.pagination import keyset_page
from lib.schema import limit_parameter
from lib.wording import one_of
from memory.actors import Actor
from memory.audit import ACTIONS
from memory.audit_chain import COLUMNS
from memory.models import AuditEvent

from . import events

#: Events per keyset batch of the export, and rows per fetch inside a batch.
EXPORT_BATCH = 2000
EXPORT_CHUNK = 500
#: Bytes of text gathered before a chunk goes to the client.
EXPORT_BUFFER = 64 * 1024

EXPORT_FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}

#: The stored columns an export reads (no model instances are built): every stored column, the
#: ones the audit chain's digest covers.
EVENT_COLUMNS = list(COLUMNS)

#: CSV header, in order.
CSV_HEADER = [
    "id",
    "recorded_at",
    "action",
    "actor_type",
    "actor_id",
    "actor_label",
    "on_behalf_of",
    "correlation_id",
    "memory",
    "label",
    "revision",
    "proposal",
    "operation",
    "run",
    "entry_ids",
    "payload",
    "redacted",
]


def _iso(value: datetime) -> str:
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def event_out(row: Any, *, redacted: bool = False) -> dict[str, Any]:
    """One event as the API and JSON Lines show it (``row``: an event or a ``.values()`` dict)."""

    def get(name: str) -> Any:
        return row[name] if isinstance(row, dict) else getattr(row, name)

    return {
        "id": get("id"),
        "action": get("action"),
        "recorded_at": _iso(get("recorded_at")),
        "actor": {
            "type": get("actor_type"),
            "id": get("actor_id"),
            "label": get("actor_label"),
            "on_behalf_of": get("on_behalf_of") or None,
        },
        "correlation_id": get("correlation_id"),
        "memory": get("memory_label") or None,
        "label": "" if redacted else get("label"),
        "revision": get("revision_number"),
        "proposal": get("proposal_id"),
        "operation": get("operation_id"),
        "run": get("run_id"),
        "entry_ids": list(get("entry_ids") or []),
        "payload": {} if redacted else (get("payload") or {}),
        "redacted": redacted,
    }


def _require_reader(actor: Actor) -> None:
    if not events.may_read_audit(actor):
        raise Forbidden("Only reviewers, auditors and staff may read the audit trail.")


class _IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=csv`` names the export format, not a DRF renderer: errors stay JSON."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        first = next(iter(renderers))
        return first, first.media_type


_FILTER_PARAMETERS = [
    OpenApiParameter("memory", str, description="Memory slug"),
    OpenApiParameter(
        "actor",
        str,
        description="Actor id (key:<prefix>, user:<id>, system), on-behalf-of or label",
    ),
    OpenApiParameter("action", str, enum=sorted(ACTIONS)),
    OpenApiParameter("kind", str, enum=list(events.KINDS), description="Action family"),
    OpenApiParameter("since", str, description="ISO date or datetime, inclusive"),
    OpenApiParameter(
        "until", str, description="ISO datetime (exclusive) or date (through that day)"
    ),
    OpenApiParameter("q", str, description="Free text on labels"),
    OpenApiParameter("correlation", str, description="Correlation id of one request or job"),
    OpenApiParameter("entry", str, description="Events mentioning this entry_id"),
]


class AuditEventListApi(ActorApiView):
    @extend_schema(
        tags=["audit"],
        summary="Audit events, newest first (cursor pagination)",
        parameters=[
            *_FILTER_PARAMETERS,
            OpenApiParameter("cursor", str),
            limit_parameter(),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        actor = self.actor(request)
        _require_reader(actor)
        f = events.parse_audit_filter(actor, request.query_params, strict=True)
        rows, cursor = keyset_page(
            events.audit_events_for(actor, f), request.query_params, key="pk", descending=True
        )
        events.redact(rows, actor)
        return Response(
            {
                "items": [event_out(e, redacted=getattr(e, "redacted", False)) for e in rows],
                "next_cursor": cursor,
            }
        )


class AuditExportApi(ActorApiView):
    content_negotiation_class = _IgnoreFormatParameter

    @extend_schema(
        tags=["audit"],
        summary="Export audit events oldest first, streamed as CSV or JSON Lines",
        parameters=[
            OpenApiParameter("format", str, enum=sorted(EXPORT_FORMATS), required=True),
            *_FILTER_PARAMETERS,
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header"),
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="One JSON event per line"
            ),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        actor = self.actor(request)
        _require_reader(actor)
        fmt = request.query_params.get("format", "")
        if fmt not in EXPORT_FORMATS:
            raise ValidationFailed(details={"format": [one_of(sorted(EXPORT_FORMATS))]})
        f = events.parse_audit_filter(
            actor, request.query_params, strict=True, allowed_extra=("format",)
        )
        rows = export_rows(actor, events.audit_events_for(actor, f))
        body = csv_chunks(rows) if fmt == "csv" else jsonl_chunks(rows)
        response = StreamingHttpResponse(body, content_type=EXPORT_FORMATS[fmt])
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
        response["Cache-Control"] = "no-store"
        response["X-Content-Type-Options"] = "nosniff"
        return response


def export_rows(actor: Actor, qs: events.AuditEventQuerySet) -> Iterator[dict[str, Any]]:
    """Matching events, oldest first, as ``event_out`` dicts; keyset batches, bounded memory.

    Queries: one for the upper id, then one per batch (plus one per batch to find entries above
    the actor's clearance, for keys that do not see everything)."""
    upper = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first()
    if upper is None:
        return
    last = 0
    while True:
        batch = list(
            qs.filter(pk__gt=last, pk__lte=upper)
            .order_by("pk")
            .values(*EVENT_COLUMNS)[:EXPORT_BATCH]
            .iterator(chunk_size=EXPORT_CHUNK)
        )
        if not batch:
            return
        hidden = events.hidden_entry_uids(actor, batch)
        for row in batch:
            redacted = bool(hidden) and events.is_hidden(row, hidden)
            if redacted:
                row["entry_ids"] = events.visible_entry_ids(row, hidden)
            yield event_out(row, redacted=redacted)
        if len(batch) < EXPORT_BATCH:
            return
        last = batch[-1]["id"]


def _buffered(lines: Iterator[str]) -> Iterator[bytes]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= EXPORT_BUFFER:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """Neutralize spreadsheet formulas in text cells (labels are written by agents)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_lines(rows: Iterator[dict[str, Any]]) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")

    def line(values: list[Any]) -> str:
        writer.writerow(values)
        text = out.getvalue()
        out.seek(0)
        out.truncate()
        return text

    yield line(CSV_HEADER)
    for e in rows:
        actor = e["actor"]
        yield line(
            [
                e["id"],
                e["recorded_at"],
                e["action"],
                actor["type"],
                _cell(actor["id"]),
                _cell(actor["label"]),
                _cell(actor["on_behalf_of"] or ""),
                _cell(e["correlation_id"]),
                _cell(e["memory"] or ""),
                _cell(e["label"]),
                e["revision"] if e["revision"] is not None else "",
                e["proposal"] if e["proposal"] is not None else "",
                e["operation"] if e["operation"] is not None else "",
                e["run"] if e["run"] is not None else "",
                " ".join(e["entry_ids"]),
                json.dumps(e["payload"], ensure_ascii=False, sort_keys=True),
                "true" if e["redacted"] else "false",
            ]
        )


def csv_chunks(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    return _buffered(csv_lines(rows))


def jsonl_chunks(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    return _buffered(json.dumps(e, ensure_ascii=False) + "\n" for e in rows)
