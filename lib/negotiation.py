"""Content negotiation that answers an unknown ``?format=`` with 400, not DRF's bare 404.

``?format=`` names a renderer (``json``); any other value is a malformed request, so it is refused
as 400 ``invalid`` in the error envelope with the accepted values in ``details``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer

from .wording import listed


class StrictFormatNegotiation(DefaultContentNegotiation):
    def filter_renderers(self, renderers: Iterable[BaseRenderer], format: str) -> Any:
        renderers = list(renderers)
        matching = [r for r in renderers if r.format == format]
        if not matching:
            formats = sorted({str(r.format) for r in renderers})
            # ``lib.errors`` renders this as 400 ``invalid`` with ``details.format``.
            raise ValidationError(
                {"format": [f"Unknown format '{format}': one of {listed(formats)}."]}
            )
        return matching
