"""Admission checks for anything that will be stored: size limits and secret detection.

Secrets are found with detect-secrets' *pattern* plugins (cloud keys, tokens, private keys,
credentials in URLs). Its entropy heuristics are left out on purpose: memories are full of
commit hashes, UUIDs and ordinary prose, which those would flag.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import transient_settings
from django.conf import settings

from .exceptions import SecretDetected, TooLarge, ValidationFailed
from .text import normalize_body

# Plugins that judge by entropy or flag ordinary content; everything else is a pattern detector.
_EXCLUDED_PLUGINS = {
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "IPPublicDetector",
    "KeywordDetector",
}


@lru_cache(maxsize=1)
def _plugins() -> tuple[dict[str, str], ...]:
    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    names = sorted(c.__name__ for c in classes if c.__name__ not in _EXCLUDED_PLUGINS)
    return tuple({"name": n} for n in names)


def find_secrets(text: str) -> list[str]:
    """Secret types found in ``text`` (empty when clean)."""
    found: list[str] = []
    with transient_settings({"plugins_used": list(_plugins())}):
        for line in text.splitlines() or [text]:
            for secret in scan_line(line):
                if secret.type not in found:
                    found.append(secret.type)
    return found


def check_no_secrets(field: str, text: str) -> None:
    types = find_secrets(text)
    if types:
        raise SecretDetected(
            f"The {field} contains what looks like a secret ({', '.join(types)}); "
            "nothing was stored.",
            details={field: [f"secret detected: {t}" for t in types]},
        )


def clean_body(body: Any, *, field: str = "body") -> str:
    """Normalize and check a body: non-empty, within the byte limit, no secrets."""
    if not isinstance(body, str):
        raise ValidationFailed(details={field: ["Must be a string."]})
    normalized = normalize_body(body)
    if not normalized:
        raise ValidationFailed(details={field: ["Must not be empty."]})
    size = len(normalized.encode("utf-8"))
    limit = settings.STEWARD_MAX_BODY_BYTES
    if size > limit:
        raise TooLarge(
            f"The {field} is {size} bytes; the limit is {limit} UTF-8 bytes.",
            details={field: [f"At most {limit} UTF-8 bytes (got {size})."]},
        )
    check_no_secrets(field, normalized)
    return normalized


def clean_text(value: Any, *, field: str, required: bool = False, limit: int | None = None) -> str:
    """A reason or comment: normalized, within the character limit, no secrets."""
    if value is None or value == "":
        if required:
            raise ValidationFailed(details={field: ["This field is required."]})
        return ""
    if not isinstance(value, str):
        raise ValidationFailed(details={field: ["Must be a string."]})
    normalized = normalize_body(value)
    if required and not normalized:
        raise ValidationFailed(details={field: ["This field is required."]})
    limit = limit or settings.STEWARD_MAX_REASON_CHARS
    if len(normalized) > limit:
        raise TooLarge(
            f"The {field} is {len(normalized)} characters; the limit is {limit}.",
            details={field: [f"At most {limit} characters."]},
        )
    check_no_secrets(field, normalized)
    return normalized


def clean_id(value: Any, *, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationFailed(details={field: ["Must be a non-empty string."]})
    if not value.isascii() or len(value) > settings.STEWARD_MAX_ID_CHARS:
        raise ValidationFailed(
            details={field: [f"ASCII, at most {settings.STEWARD_MAX_ID_CHARS} characters."]}
        )
    return value
