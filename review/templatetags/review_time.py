"""``{{ when|ago }}`` / ``{{ when|ago:now }}``: how long ago, "just now" under a minute
(``review.inbox.ago``), for the review pages."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

from review.inbox import ago as _ago

register = template.Library()


@register.filter
def ago(when: datetime | None, now: datetime | None = None) -> str:
    if when is None:
        return ""
    return _ago(when, now or timezone.now())
