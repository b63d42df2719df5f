"""The replay page: a reviewer tries a candidate policy on a Memory before enabling it.

``/memories/<slug>/replay/`` runs :func:`evaluation.replay.replay` — the same code as
``manage.py replay`` — as the signed-in reviewer (their clearance applies), over the Memory's
recorded queries or the queries typed in, and shows what would enter, leave or move in the
top k and the Context Pack. A plain GET form: nothing is written, not even the policy.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from lib.errors import DomainError
from memory.web import page_reader

from .replay import parse_queries, replay

LIMITS = (5, 10, 20)
DEFAULT_POLICY = '{"quality_ranking": true}'
MAX_TEXT = 20_000


@login_required
@require_safe
def replay_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Reviewers, auditors and staff (403 otherwise); unknown Memory → 404; bad input → 422."""
    actor, memory = page_reader(
        request, slug, denied="Only reviewers, auditors and staff may replay policies."
    )
    run = request.GET.get("run") == "1"
    policy_text = request.GET.get("policy", DEFAULT_POLICY)[:MAX_TEXT]
    queries_text = request.GET.get("queries", "")[:MAX_TEXT]
    try:
        limit = int(request.GET.get("limit") or 10)
    except ValueError:
        limit = 10
    limit = limit if limit in LIMITS else 10
    context: dict[str, Any] = {
        "memory": memory,
        "form": {"policy": policy_text, "queries": queries_text, "limit": limit},
        "limits": LIMITS,
        "current_policy": json.dumps(memory.policy, sort_keys=True),
        "report": None,
        "error": "",
    }
    status = 200
    if run:
        try:
            try:
                policy = json.loads(policy_text or "{}")
            except json.JSONDecodeError as exc:
                raise DomainError(f"The policy is not valid JSON: {exc.msg}.") from exc
            queries = parse_queries(queries_text) if queries_text.strip() else None
            context["report"] = replay(
                memory, actor=actor, policy=policy, queries=queries, limit=limit
            )
        except DomainError as exc:
            details = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in exc.details.items())
            context["error"] = exc.message + (f" ({details})" if details else "")
            status = 422
    return render(request, "evaluation/replay.html", context, status=status)
