"""Keyset (cursor) pagination: ``?cursor=<opaque>&limit=N`` over a unique, ordered key.

Cursors are opaque base64 JSON of the last row's key, so a page costs the same at row 10 and at
row 10 million, and rows inserted meanwhile never shift a page.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet

from .errors import ValidationFailed


def encode_cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def decode_cursor(raw: str) -> Any:
    try:
        padded = raw + "=" * (-len(raw) % 4)
        return json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed(details={"cursor": ["Not a valid cursor."]}) from exc


def page_limit(params: Any) -> int:
    raw = params.get("limit")
    if raw in (None, ""):
        return int(settings.STEWARD_PAGE_SIZE)
    try:
        value = int(raw)
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(details={"limit": ["Must be an integer."]}) from exc
    if not 1 <= value <= settings.STEWARD_MAX_PAGE_SIZE:
        raise ValidationFailed(
            details={"limit": [f"Between 1 and {settings.STEWARD_MAX_PAGE_SIZE}."]}
        )
    return value


def keyset_page(
    qs: QuerySet[Any],
    params: Any,
    *,
    key: str = "pk",
    descending: bool = False,
    load: Callable[[Any], QuerySet[Any]] | None = None,
) -> tuple[list[Any], str | None]:
    """One page of ``qs`` ordered by the unique ``key`` and the cursor of the next page.

    With ``load``, the page's keys are chosen on ``qs`` first and its rows are then read through
    ``load(qs)`` limited to those keys (one more query). For a ``load`` that joins other tables
    (``select_related``): PostgreSQL may otherwise merge-join those tables in key order from
    their first row, reading every row before the cursor (at the millionth entry, all of them)."""
    limit = page_limit(params)
    raw = params.get("cursor")
    if raw:
        after = decode_cursor(raw)
        if not isinstance(after, int | str):
            raise ValidationFailed(details={"cursor": ["Not a valid cursor."]})
        try:
            qs = qs.filter(**{f"{key}__{'lt' if descending else 'gt'}": after})
        except (ValueError, TypeError, DjangoValidationError) as exc:
            raise ValidationFailed(details={"cursor": ["Not a valid cursor."]}) from exc
    ordered = qs.order_by(f"-{key}" if descending else key)
    if load is not None:
        keys = list(ordered.values_list(key, flat=True)[: limit + 1])
        more = len(keys) > limit
        found = {_attr(r, key): r for r in load(qs.filter(**{f"{key}__in": keys[:limit]}))}
        rows = [found[k] for k in keys[:limit] if k in found]
    else:
        rows = list(ordered[: limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
    next_cursor = encode_cursor(_attr(rows[-1], key)) if more and rows else None
    return rows, next_cursor


def _attr(row: Any, key: str) -> Any:
    value = row
    for part in key.split("__"):
        value = getattr(value, part)
    return value
