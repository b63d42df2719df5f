"""Liveness and readiness for load balancers and orchestrators (no login, no session, no CSRF).

- ``GET /healthz`` — the process answers: always 200 ``{"status": "ok"}``. Touches nothing else,
  so a slow database never gets a healthy process restarted.
- ``GET /readyz`` — the process can serve: 200 ``{"status": "ready", "checks": {...}}`` once the
  database answers a query and the embedding model is loaded (``memory.embeddings``; with no
  provider configured there is nothing to load); else 503 ``{"status": "not_ready", ...}`` naming
  the check that failed, so traffic waits for a process still loading its model.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from memory.embeddings import provider_loaded

log = logging.getLogger(__name__)


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
    checks = {"database": _database(), "model": "loaded" if provider_loaded() else "loading"}
    ready = checks["database"] == "ok" and checks["model"] == "loaded"
    return JsonResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status=200 if ready else 503,
    )
