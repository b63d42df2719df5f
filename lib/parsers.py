"""The JSON request parser: a nesting-depth limit and no NUL characters.

The standard library decoder recurses once per nesting level, so a body of a few hundred bytes
(``[[[[…]]]]`` a thousand deep) exhausts the interpreter stack, and anything that walks the parsed
value afterwards (serializers, the secret scanner, the audit payload) would recurse just as deep.
A NUL character is refused by PostgreSQL in every text and ``jsonb`` column. Both are refused here,
before any view sees the data, as 400 ``invalid`` in the error envelope.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

DEFAULT_MAX_DEPTH = 32


def max_depth() -> int:
    return int(getattr(settings, "STEWARD_MAX_JSON_DEPTH", DEFAULT_MAX_DEPTH))


def check_json_value(value: Any, *, limit: int | None = None) -> None:
    """Raise :class:`ParseError` when ``value`` nests deeper than ``limit`` or holds a NUL.

    Iterative (an explicit stack), so checking a hostile value cannot itself recurse.
    """
    limit = max_depth() if limit is None else limit
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                raise ParseError(f"JSON nests deeper than {limit} levels.")
            for key, child in item.items():
                if "\x00" in key:
                    raise ParseError("JSON strings may not contain NUL characters.")
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            if depth > limit:
                raise ParseError(f"JSON nests deeper than {limit} levels.")
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and "\x00" in item:
            raise ParseError("JSON strings may not contain NUL characters.")


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with a depth limit (``STEWARD_MAX_JSON_DEPTH``) and no NULs."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON nests deeper than {max_depth()} levels.") from None
        check_json_value(data)
        return data
