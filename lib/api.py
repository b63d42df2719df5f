"""Small helpers shared by the API views: strict input parsing and the base view."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from .auth import actor_from_request
from .errors import ValidationFailed
from .identity import Actor
from .throttling import ThrottleFirstMixin


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses unknown fields (a typo must not be silently ignored)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        # A number or a boolean where text is expected is refused too (DRF's CharField would
        # store ``123`` as ``"123"``, and a ChoiceField would match ``5`` against ``"5"``).
        not_text = {
            name: ["Not a valid string."]
            for name, field in self.fields.items()
            if _takes_text(field)
            and data.get(name) is not None
            and not isinstance(data.get(name), str)
        }
        if not_text:
            raise serializers.ValidationError(not_text)
        return super().to_internal_value(data)


def _takes_text(field: serializers.Field) -> bool:
    """A field whose value is one string: text, or one of a set of string choices."""
    if isinstance(field, serializers.CharField):
        return True
    return (
        isinstance(field, serializers.ChoiceField)
        and not isinstance(field, serializers.MultipleChoiceField)
        and all(isinstance(choice, str) for choice in field.choices)
    )


def parse(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Validate the request body with ``serializer_class`` and return the validated dict."""
    data = request.data
    if data is None or (hasattr(data, "keys") and not data and request.body == b""):
        data = {}
    return validated(serializer_class, data)


def parse_query(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Validate the query string with ``serializer_class`` and return the validated dict."""
    return validated(serializer_class, request.query_params.dict())


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``data`` checked by ``serializer_class``; 400 ``invalid`` with field details otherwise
    (the one place DRF's errors become the envelope's ``details``)."""
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        raise ValidationFailed(details=error_details(serializer.errors))
    return dict(serializer.validated_data)


def error_details(errors: Any) -> Any:
    """DRF's nested error structure as plain JSON: field → messages, nested by field."""
    if isinstance(errors, dict):
        return {str(k): error_details(v) for k, v in errors.items()}
    if isinstance(errors, list):
        return [error_details(v) if isinstance(v, dict | list) else str(v) for v in errors]
    return [str(errors)]


class ActorApiView(ThrottleFirstMixin, APIView):
    """Base for our API views: exposes the acting :class:`Actor`; throttles before permissions."""

    def actor(self, request: Request) -> Actor:
        return actor_from_request(request)
