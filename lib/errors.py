"""The one place where errors become HTTP responses.

Every error body is ``{"error": {"code", "message", "details"}}`` with a stable code (API.md).
Domain exceptions subclass :class:`DomainError` and carry their own code and status; DRF's and
Django's exceptions are translated here too, so no view builds an error body by hand.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_default_handler

from . import unavailable
from .unavailable import database_unavailable


class DomainError(Exception):
    """Base of every domain error: a refusal the caller can act on, with a stable code."""

    code = "invalid"
    http_status = 400
    default_message = "The request was refused."

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None):
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)


class ValidationFailed(DomainError):
    """Input is well-formed JSON but a field is missing, unknown or out of range."""

    code = "invalid"
    http_status = 400
    default_message = "The request has invalid fields."


class TooLarge(DomainError):
    """A body, reason or list exceeds the documented size limit."""

    code = "too_large"
    http_status = 413


class NotFound(DomainError):
    """The object does not exist, or is outside the caller's scope or clearance."""

    code = "not_found"
    http_status = 404
    default_message = "Not found."


class Forbidden(DomainError):
    """The caller's role or ownership forbids the operation."""

    code = "forbidden"
    http_status = 403
    default_message = "You are not allowed to do that."


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _flatten_validation(detail: Any) -> dict[str, Any]:
    if isinstance(detail, dict):
        return {str(k): _flatten_validation_value(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return {"non_field_errors": [str(x) for x in detail]}
    return {"non_field_errors": [str(detail)]}


def _flatten_validation_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _flatten_validation_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [
            _flatten_validation_value(v) if isinstance(v, dict | list) else str(v) for v in value
        ]
    return [str(value)]


def _status_to_code(exc: drf_exceptions.APIException) -> tuple[str, str]:
    mapping: list[tuple[type[drf_exceptions.APIException], str]] = [
        (drf_exceptions.NotAuthenticated, "not_authenticated"),
        (drf_exceptions.AuthenticationFailed, "not_authenticated"),
        (drf_exceptions.PermissionDenied, "forbidden"),
        (drf_exceptions.NotFound, "not_found"),
        (drf_exceptions.MethodNotAllowed, "method_not_allowed"),
        (drf_exceptions.UnsupportedMediaType, "unsupported_media_type"),
        (drf_exceptions.NotAcceptable, "not_acceptable"),
        (drf_exceptions.Throttled, "throttled"),
        (drf_exceptions.ParseError, "invalid"),
        (drf_exceptions.ValidationError, "invalid"),
    ]
    for cls, code in mapping:
        if isinstance(exc, cls):
            return code, str(exc.detail) if not isinstance(exc.detail, dict | list) else ""
    return "error", str(exc.detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler producing the documented envelope for every error."""
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.http_status)
    if database_unavailable(exc):
        return Response(
            error_body("service_unavailable", unavailable.MESSAGE),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(unavailable.retry_after())},
        )
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("too_large", "The request body is over the size limit."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    response = drf_default_handler(exc, context)
    if response is None or not isinstance(exc, drf_exceptions.APIException):
        return response
    code, message = _status_to_code(exc)
    details: dict[str, Any] = {}
    if isinstance(exc, drf_exceptions.ValidationError):
        details = _flatten_validation(exc.detail)
        message = ValidationFailed.default_message
    elif isinstance(exc, drf_exceptions.ParseError):
        message = str(exc.detail)
    if response.status_code == 401:
        message = message or "Authentication credentials were not provided or are invalid."
    response.data = error_body(code, message or str(exc.detail), details)
    return response


def json_error(code: str, message: str, status_code: int) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)


def service_unavailable_json() -> JsonResponse:
    """503 ``service_unavailable`` in the envelope, with ``Retry-After`` (lib.unavailable)."""
    response = json_error("service_unavailable", unavailable.MESSAGE, 503)
    response["Retry-After"] = str(unavailable.retry_after())
    return response
