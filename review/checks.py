"""System checks of the review app: the public address notification mail links to, and (with
``--deploy``) the collected static files the pages load.

Unset, mail still names each page by its site-relative path, so it is a warning; a malformed
address set by other means than the environment (which settings refuse at start-up) is an
error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning, register

from lib.public_url import public_url_problem


@register()
def public_url(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A malformed ``STEWARD_PUBLIC_URL`` set by other means than the environment: an error on
    every command."""
    from django.conf import settings

    value = getattr(settings, "STEWARD_PUBLIC_URL", "")
    problem = public_url_problem(value) if value else None
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


@register(deploy=True)
def public_url_set(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """An unset ``STEWARD_PUBLIC_URL`` is a deployment matter (``check --deploy``): on a
    laptop the site-relative links are what a developer expects, and a warning on every
    ``manage.py`` command would only be noise."""
    from django.conf import settings

    if getattr(settings, "STEWARD_PUBLIC_URL", ""):
        return []
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


@register(Tags.staticfiles, deploy=True)
def static_files_collected(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """With DEBUG off nothing serves ``STATIC_URL`` from the source folders: the files must be
    collected into ``STATIC_ROOT`` (and served from there by the web server in front). Missing
    or stale copies (an upgrade without ``collectstatic``) leave the pages without their style
    sheets and scripts."""
    from django.conf import settings
    from django.contrib.staticfiles.finders import get_finders

    if settings.DEBUG:
        return []
    root = Path(settings.STATIC_ROOT)
    missing = stale = 0
    for finder in get_finders():
        for path, storage in finder.list([]):
            copy = root / (getattr(storage, "prefix", None) or "") / path
            if not copy.is_file():
                missing += 1
            elif copy.stat().st_size != storage.size(path):
                stale += 1
    if not missing and not stale:
        return []
    return [
        Warning(
            f"Static files are not collected in STATIC_ROOT ({root}): {missing} missing, "
            f"{stale} out of date. With DEBUG off the pages would load without their style "
            "sheets and scripts.",
            hint="Run manage.py collectstatic --noinput after each install or upgrade, and "
            f"serve {root} at {settings.STATIC_URL} from the web server in front of gunicorn.",
            id="review.W002",
        )
    ]
