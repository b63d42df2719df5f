"""System checks of the review app: the public address notification mail links to.

Unset, mail still names each page by its site-relative path, so it is a warning; a malformed
address set by other means than the environment (which settings refuse at start-up) is an
error.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning, register

from lib.public_url import public_url_problem


@register()
def public_url(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from django.conf import settings

    value = getattr(settings, "STEWARD_PUBLIC_URL", "")
    if not value:
        return [
            Warning(
                "STEWARD_PUBLIC_URL is not set: the links in notification mail are "
                "site-relative paths (/review/proposals/1/), not addresses a mail reader "
                "can open.",
                hint="Set STEWARD_PUBLIC_URL to the address people reach the server at, "
                "e.g. https://steward.example.com.",
                id="review.W001",
            )
        ]
    problem = public_url_problem(value)
    if problem:
        return [
            Error(
                f"STEWARD_PUBLIC_URL={value!r} is not a public address: {problem}.",
                hint="Give the scheme and host people reach the server at, "
                "e.g. https://steward.example.com.",
                id="review.E001",
            )
        ]
    return []
