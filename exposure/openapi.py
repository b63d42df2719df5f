"""The response bodies of the exposure ledger's API, for the OpenAPI document (see
``memory.api.openapi``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers as s

from memory.api.openapi import Null, cursor_page

from .models import Via


class ExposureOut(s.Serializer):
    id = s.IntegerField()
    at = s.DateTimeField()
    key = s.CharField(help_text="The actor served: `key:<prefix>` or `user:<pk>`.")
    run_id = s.CharField(**Null, help_text="The caller's run id; null when it named none.")
    entry_id = s.CharField()
    version = s.IntegerField()
    via = s.ChoiceField(choices=Via.choices)


RESPONSES: dict[tuple[str, str], dict[Any, Any]] = {
    ("ExposureListApi", "get"): {200: cursor_page("ExposurePage", ExposureOut)},
}
