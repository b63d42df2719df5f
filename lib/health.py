"""Liveness and readiness for load balancers and orchestrators (no login, no session, no CSRF).

- ``GET /healthz`` — the process answers: always 200 ``{"status": "ok"}``. Touches nothing else,
  so a slow database never gets a healthy process restarted.
- ``GET /readyz`` — the process can serve: 200 ``{"status": "ready", "checks": {...}}`` once the
  database answers a query and every registered readiness probe is ready; else 503
  ``{"status": "not_ready", ...}`` naming the check that failed, so traffic waits for a process
  still loading its model.

The apps register their probes at start-up (:func:`register_probe`, from ``AppConfig.ready()``):
``memory`` registers ``model``, ready once the embedding model is loaded (with no provider
configured there is nothing to load). This module names no app.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

log = logging.getLogger(__name__)


class Probe(NamedTuple):
    """One readiness check: what ``/readyz`` reports under its name, and whether it is ready."""

    state: str
    ready: bool


_PROBES: dict[str, Callable[[], Probe]] = {}


def register_probe(name: str, probe: Callable[[], Probe]) -> None:
    """Add a readiness check named ``name`` (registering a name again replaces it)."""
    _PROBES[name] = probe


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        log.warning("readyz: the database does not answer: %s", exc)
        return "unreachable"
    return "ok"


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    database = _database()
    probes = {name: probe() for name, probe in _PROBES.items()}
    checks = {"database": database, **{name: p.state for name, p in probes.items()}}
    ready = database == "ok" and all(p.ready for p in probes.values())
    return JsonResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status=200 if ready else 503,
    )
