"""The server's public address (``STEWARD_PUBLIC_URL``) and the absolute links built on it.

Mail is read away from the server, so a link in it must carry the address people reach the
server at — which the server cannot know from a request: mail is built in Celery tasks and
management commands too. The address is a scheme and a host (and port), nothing after it:
every path comes from ``reverse()``, which already carries a script prefix when there is one.

Unset, :func:`absolute` gives the site-relative path (``/review/proposals/1/``), still useful to
someone who knows the server; ``manage.py check`` warns about it once (``review.W001``).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

#: A host name or IPv4 address, or a bracketed IPv6 address, with an optional port.
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def public_url_problem(value: str) -> str:
    """What is wrong with ``value`` as the public address, or ``""`` when nothing is."""
    if not value:
        return ""
    if any(c.isspace() or not c.isprintable() for c in value):
        return "it contains spaces or control characters"
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not value.lower().startswith(
        f"{parts.scheme.lower()}://"
    ):
        return "it must start with https:// (or http://)"
    if "@" in parts.netloc:
        return "it must not carry a user name or password"
    if not _HOST.fullmatch(parts.netloc.lower()):
        return "it must name a host, like steward.example.com or 10.0.0.5:8000"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        return "its port must be a number from 1 to 65535"
    if parts.path not in ("", "/") or "?" in value or "#" in value:
        return "it must end after the host (and port): no path, query or fragment"
    return ""


def clean_public_url(value: str, *, name: str = "STEWARD_PUBLIC_URL") -> str:
    """``value`` as the public address: ``""`` when empty, else ``scheme://host[:port]`` in
    lower case without a trailing slash. Anything else raises ``ImproperlyConfigured`` naming
    ``name``, the value and what is wrong with it."""
    value = value.strip()
    problem = public_url_problem(value)
    if problem:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a public address: {problem}. "
            "Give the scheme and host people reach the server at, "
            "e.g. https://steward.example.com."
        )
    if not value:
        return ""
    parts = urlsplit(value)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def absolute(path: str) -> str:
    """``path`` (from ``reverse()``, starting with ``/``) under ``STEWARD_PUBLIC_URL``; the path
    itself when the setting is empty."""
    from django.conf import settings

    return getattr(settings, "STEWARD_PUBLIC_URL", "").rstrip("/") + path
