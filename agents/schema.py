"""JSON Schema for a tool's arguments, derived from the DRF input serializer that parses them.

The serializer is the one definition of a tool's input: the schema a client sees and the
validation the server applies come from the same fields, so they cannot disagree.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import get_override
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers


def serializer_schema(serializer: serializers.Serializer) -> dict[str, Any]:
    """An object schema: one property per writable field, ``required`` as the serializer has it,
    no additional properties (our input serializers refuse unknown fields)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        properties[name] = field_schema(field)
        if field.required:
            required.append(name)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def field_schema(field: serializers.Field) -> dict[str, Any]:
    schema = _type_of(field)
    if field.help_text:
        schema["description"] = str(field.help_text)
    default = field.default
    if default is not serializers.empty and not callable(default):
        schema["default"] = default
    if getattr(field, "allow_null", False) and "type" in schema:
        schema["type"] = [schema["type"], "null"]
    return schema


def _type_of(field: serializers.Field) -> dict[str, Any]:
    if isinstance(field, serializers.ListSerializer):
        return {"type": "array", "items": serializer_schema(field.child)}  # type: ignore[arg-type]
    if isinstance(field, serializers.Serializer):
        return serializer_schema(field)
    if isinstance(field, serializers.ChoiceField):
        return {"type": "string", "enum": [str(c) for c in field.choices]}
    if isinstance(field, serializers.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, serializers.DateTimeField):
        return {"type": "string", "format": "date-time"}
    if isinstance(field, serializers.IntegerField):
        out: dict[str, Any] = {"type": "integer"}
        if field.min_value is not None:
            out["minimum"] = field.min_value
        if field.max_value is not None:
            out["maximum"] = field.max_value
        return out
    if isinstance(field, serializers.CharField):
        out = {"type": "string"}
        if field.max_length is not None:
            out["maxLength"] = field.max_length
        if field.min_length is not None:
            out["minLength"] = field.min_length
        elif not field.allow_blank:
            out["minLength"] = 1
        return out
    if isinstance(field, serializers.DictField):
        return {"type": "object"}
    if isinstance(field, serializers.ListField):
        return {"type": "array", "items": _type_of(field.child)}
    # A field documented for OpenAPI as one of several shapes (drf-spectacular's
    # ``extend_schema_field(PolymorphicProxySerializer(...))``) is one of the same shapes here.
    proxy = get_override(type(field), "field")
    if isinstance(proxy, PolymorphicProxySerializer):
        shapes = proxy.serializers
        choices = shapes.values() if isinstance(shapes, dict) else shapes
        return {"oneOf": [serializer_schema(_instance(s)) for s in choices]}
    return {}


def _instance(serializer: Any) -> serializers.Serializer:
    return serializer() if isinstance(serializer, type) else serializer
