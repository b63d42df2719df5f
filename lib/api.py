"""Small helpers shared by the API views: strict input parsing and the base view."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from .auth import actor_from_request
from .errors import ValidationFailed
from .throttling import ThrottleFirstMixin


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses unknown fields (a typo must not be silently ignored)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def parse(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Validate the request body with ``serializer_class`` and return the validated dict."""
    data = request.data
    if data is None or (hasattr(data, "keys") and not data and request.body == b""):
        data = {}
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        raise ValidationFailed(
            "The request has invalid fields.", details=_as_details(serializer.errors)
        )
    return dict(serializer.validated_data)


def _as_details(errors: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in errors.items():
        if isinstance(value, dict):
            out[key] = _as_details(value)
        elif isinstance(value, list):
            out[key] = [_as_details(v) if isinstance(v, dict) else str(v) for v in value]
        else:
            out[key] = [str(value)]
    return out


class ActorApiView(ThrottleFirstMixin, APIView):
    """Base for our API views: exposes the acting :class:`Actor`; throttles before permissions."""

    def actor(self, request: Request) -> Any:
        return actor_from_request(request)
