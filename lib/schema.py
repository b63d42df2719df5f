"""OpenAPI generation: the shared error envelope on every operation, and honest descriptions.

:class:`StewardAutoSchema` is drf-spectacular's ``AutoSchema`` with three changes:

- every operation documents the errors it can answer, each with the one ``Error`` component
  (``{"error": {"code", "message", "details"}}``, API.md "Errors"): 400/401/403/404/406/422/
  429/503 for every operation, 409/413/415 when it takes a body;
- a request body read by a :class:`lib.api.StrictSerializer` is ``additionalProperties: false``
  (the server refuses an unknown field with 400), nested strict objects too;
- descriptions come from the view's own docstrings only (never a base class's);
- a GET on a collection gets the operation id ``…_list`` and on an object ``…_retrieve``, so
  ``/entries`` and ``/entries/{entry_id}`` no longer collide.

Success bodies come from each app's ``openapi.RESPONSES`` table (view class name, method →
status → serializer; the modules are listed in ``settings.STEWARD_OPENAPI_RESPONSES``), which
takes precedence over a view's own ``responses=``; keying by class name keeps the table valid
when views move between modules. An operation in none of the tables keeps drf-spectacular's
behaviour — and its warning, which the suite turns into a failure.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import Any

from django.conf import settings
from drf_spectacular.drainage import warn
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from .api import StrictSerializer

ERRORS = {
    400: "Malformed JSON, an unknown field or query parameter, or an invalid value (`invalid`).",
    401: "No key, or a bad or revoked key (`not_authenticated`).",
    403: "The role or ownership forbids it (`forbidden`, `self_approval`, …).",
    404: "No such object, or outside the key's Memories or clearance (`not_found`).",
    406: "The Accept header asks for something other than JSON (`not_acceptable`).",
    409: "A state conflict: stale pre-state, version mismatch, already decided, inactive entry.",
    413: "The body or a field is over its size limit (`too_large`).",
    415: "The body is not `application/json` (`unsupported_media_type`).",
    422: "Well-formed but refused: a secret or personal data, lost details not acknowledged, …",
    429: "Throttled (`throttled`); `Retry-After` says when to try again.",
    503: "The database cannot be reached just now (`service_unavailable`); retry after "
    "`Retry-After` seconds.",
}
# 404: a path or a filter may name an unknown object; 422: a read may be refused too (a
# ``since_revision`` above the head).
ALWAYS = (400, 401, 403, 404, 406, 422, 429, 503)
WITH_BODY = (409, 413, 415)


class ErrorBody(serializers.Serializer):
    code = serializers.CharField(help_text="A stable code, e.g. `invalid`, `not_found`.")
    message = serializers.CharField(help_text="For people; may change.")
    details = serializers.DictField(
        help_text="Field → messages for validation errors; other context otherwise."
    )


class Error(serializers.Serializer):
    """The error envelope every error response carries."""

    error = ErrorBody()


@cache
def contracts() -> dict[tuple[str, str], dict[Any, Any]]:
    table: dict[tuple[str, str], dict[Any, Any]] = {}
    for module in getattr(settings, "STEWARD_OPENAPI_RESPONSES", []):
        table.update(import_module(module).RESPONSES)
    return table


def limit_parameter(maximum: int | None = None) -> OpenApiParameter:
    """The ``limit`` query parameter of a list with the bounds the server enforces (keyset pages:
    ``lib.pagination.page_limit``, 1..``STEWARD_MAX_PAGE_SIZE``)."""
    top = maximum if maximum is not None else settings.STEWARD_MAX_PAGE_SIZE
    return OpenApiParameter(
        "limit", {"type": "integer", "minimum": 1, "maximum": top}, description="Page size"
    )


class StewardAutoSchema(AutoSchema):
    def get_description(self) -> str:  # type: ignore[override]
        method = getattr(self.view, getattr(self.view, "action", self.method.lower()), None)
        own = (getattr(method, "__doc__", None) or "").strip()
        return own or (type(self.view).__dict__.get("__doc__") or "").strip()

    def get_summary(self) -> str | None:
        description = self.get_description()
        return description.split("\n", 1)[0].rstrip(".") if description else None

    def get_operation_id(self) -> str:
        tokens = [t.replace("-", "_") for t in self._tokenize_path()]
        if self.method == "GET":
            action = "retrieve" if self.path.rstrip("/").endswith("}") else "list"
        else:
            action = self.method_mapping[self.method.lower()]
        return "_".join([*tokens, action])

    def error_statuses(self) -> list[int]:
        statuses = set(ALWAYS)
        if self.method in ("POST", "PUT", "PATCH"):
            statuses.update(WITH_BODY)
        return sorted(statuses)

    def _get_serializer(self) -> Any:
        # Our views are plain APIViews with explicit input serializers (``request=``) and the
        # response tables above; there is no view serializer to guess.
        if not hasattr(self.view, "get_serializer") and not hasattr(self.view, "serializer_class"):
            return None
        return super()._get_serializer()

    def _map_serializer(
        self, serializer: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        # A strict input (lib.api.StrictSerializer) refuses any field it does not name: say so.
        schema: dict[str, Any] = super()._map_serializer(serializer, direction, bypass_extensions)
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
        return schema

    def contract(self) -> dict[Any, Any] | None:
        return contracts().get((type(self.view).__name__, self.method.lower()))

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        contract = self.contract()
        if contract is None:
            if direction == "response" and self.get_response_serializers() is None:
                warn(f"{type(self.view).__name__}.{self.method.lower()}: no response body")
            responses = super()._get_response_bodies(direction)
        else:
            responses = {}
            for key, serializer in contract.items():
                code, media = (str(key[0]), key[1:]) if isinstance(key, tuple) else (str(key), None)
                body = self._get_response_for_code(serializer, code, media, direction)
                if code in responses:
                    responses[code]["content"].update(body["content"])
                else:
                    responses[code] = body
        if direction != "response":
            return responses
        component = self.resolve_serializer(Error, "response")
        for status in self.error_statuses():
            body = {
                "description": ERRORS[status],
                "content": {"application/json": {"schema": component.ref}},
            }
            if status in (429, 503):
                body["headers"] = {
                    "Retry-After": {
                        "schema": {"type": "integer"},
                        "description": "Seconds until a request may be tried again.",
                    }
                }
            responses.setdefault(str(status), body)
        return responses
