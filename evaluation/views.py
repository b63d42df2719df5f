"""The replay page: a reviewer tries a candidate policy on a Memory before enabling it.

``/memories/<slug>/replay/`` runs :func:`evaluation.replay.replay` — the same code as
``manage.py replay`` — as the signed-in reviewer (their clearance applies), over the Memory's
recorded queries or the queries typed in, and shows what would enter, leave or move in the
top k and the Context Pack. A plain GET form: nothing is written, not even the policy.

Under a replay's report a reviewer may enable the candidate they just replayed
(``POST /memories/<slug>/replay/enable/``): that files a ``policy`` proposal
(``proposals.kinds.policy``) which another reviewer approves on its proposal page — in the
browser a live Memory's policy changes only that way. It is refused with 409
``policy_changed`` when the policy is no longer the one the replay compared against. Auditors
see the report without the button and are refused the POST.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from lib.errors import DomainError, Forbidden, NotFound
from memory import selectors
from memory.actors import Actor
from memory.exceptions import PolicyChanged
from memory.models import Memory
from memory.web.common import page_reader
from proposals.actions import submit_proposal
from proposals.serializers import parse_submission
from review.permissions import may_decide
from review.web import guard, refuse

from .replay import parse_queries, replay

LIMITS = (5, 10, 20)
DEFAULT_POLICY = '{"quality_ranking": true}'
MAX_TEXT = 20_000


#: Reviewers and staff enable a replayed policy; auditors only read it.
policy_changers = guard(may_decide, "Only reviewers may change a Memory's policy.")


def _candidate(policy_text: str) -> dict[str, Any]:
    """The candidate policy typed in: a JSON object (400 ``invalid`` otherwise)."""
    try:
        policy = json.loads(policy_text or "{}")
    except json.JSONDecodeError as exc:
        raise DomainError(f"The policy is not valid JSON: {exc.msg}.") from exc
    if not isinstance(policy, dict):
        raise DomainError("The candidate policy must be a JSON object of policy keys.")
    return policy


def _problem(exc: DomainError) -> str:
    details = "; ".join(
        f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in exc.details.items()
    )
    return exc.message + (f" ({details})" if details else "")


def _page(
    request: HttpRequest,
    actor: Actor,
    memory: Memory,
    *,
    policy_text: str,
    queries_text: str = "",
    limit: int = 10,
    run: bool = False,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    context: dict[str, Any] = {
        "memory": memory,
        "form": {"policy": policy_text, "queries": queries_text, "limit": limit},
        "limits": LIMITS,
        "current_policy": json.dumps(memory.policy, sort_keys=True),
        "may_enable": may_decide(actor),
        "report": None,
        "error": error,
    }
    if run and not error:
        try:
            policy = _candidate(policy_text)
            queries = parse_queries(queries_text) if queries_text.strip() else None
            context["report"] = replay(
                memory, actor=actor, policy=policy, queries=queries, limit=limit
            )
        except DomainError as exc:
            context["error"] = _problem(exc)
            status = 422
    return render(request, "evaluation/replay.html", context, status=status)


@login_required
@require_safe
def replay_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Reviewers, auditors and staff (403 otherwise); unknown Memory → 404; bad input → 422."""
    actor, memory = page_reader(
        request, slug, denied="Only reviewers, auditors and staff may replay policies."
    )
    try:
        limit = int(request.GET.get("limit") or 10)
    except ValueError:
        limit = 10
    return _page(
        request,
        actor,
        memory,
        policy_text=request.GET.get("policy", DEFAULT_POLICY)[:MAX_TEXT],
        queries_text=request.GET.get("queries", "")[:MAX_TEXT],
        limit=limit if limit in LIMITS else 10,
        run=request.GET.get("run") == "1",
    )


@require_POST
@policy_changers
def enable_policy(request: HttpRequest, actor: Actor, slug: str) -> HttpResponse:
    """``POST /memories/<slug>/replay/enable/`` (``policy``: the candidate replayed,
    ``current``: the policy it was compared with, ``rationale``: optional): file a ``policy``
    proposal for the candidate. Success redirects to the proposal's page with a message; a
    refusal shows the page again with the error under its status (400 invalid, 409
    ``policy_changed`` / ``duplicate_proposal``, 422 ``noop_rewrite``)."""
    policy_text = request.POST.get("policy", "")[:MAX_TEXT]
    try:
        memory = selectors.get_memory(actor, slug)
    except NotFound as exc:
        return refuse(request, exc.message, status=404)
    try:
        candidate = _candidate(policy_text)
        if not candidate:
            raise DomainError("The candidate policy sets no key; there is nothing to enable.")
        try:
            expected = json.loads(request.POST.get("current", ""))
        except json.JSONDecodeError as exc:
            raise DomainError("Replay the candidate before enabling it.") from exc
        if memory.policy != expected:
            raise PolicyChanged()
        rationale = (request.POST.get("rationale") or "").strip() or (
            f"Enable the candidate replayed on {memory.slug}: {', '.join(sorted(candidate))}."
        )
        filed = submit_proposal(
            actor=actor,
            submission=parse_submission(
                {
                    "memory": memory.slug,
                    "kind": "policy",
                    "policy": candidate,
                    "rationale": rationale[:MAX_TEXT],
                }
            ),
        )
    except Forbidden as exc:
        return refuse(request, exc.message, status=403)
    except DomainError as exc:
        memory.refresh_from_db(fields=["policy"])
        return _page(
            request,
            actor,
            memory,
            policy_text=policy_text,
            error=_problem(exc),
            status=exc.http_status,
        )
    keys = ", ".join(sorted(candidate))
    number = filed.proposal.pk
    messages.success(
        request,
        f"Proposal #{number} files the change ({keys}); the policy changes when another "
        "reviewer approves it.",
    )
    return HttpResponseRedirect(reverse("review-proposal", args=[number]))
