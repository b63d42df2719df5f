"""Browser form of a job's schedule, from the maintenance page: turning a job's beat schedule on
or off files a ``policy`` proposal (``proposals.kinds.policy``) that another reviewer approves —
in the browser a live Memory's policy changes only through review.

``POST /review/memories/{slug}/jobs/{job}/schedule/`` with ``enabled`` (``on`` / ``off``):
reviewers and staff (:data:`review.web.deciders`). The proposal sets ``jobs`` to the policy's
current job settings with that one job's ``enabled`` flipped (the change carries the whole
``jobs`` object, as a ``PATCH`` merges top-level keys). Success redirects to the proposal's page
with a message; a refusal (a proposal already open for the schedule: 409
``duplicate_proposal``; nothing to change: 422 ``noop_rewrite``) redirects back to the
maintenance page with the reason.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from lib.errors import DomainError, NotFound
from memory import maintenance
from memory.actors import Actor
from memory.selectors import get_memory
from proposals.actions import submit_proposal
from proposals.serializers import parse_submission

from . import web


def schedule_change(policy: dict[str, Any], job: str, enabled: bool) -> dict[str, Any]:
    """The ``jobs`` policy key with ``job``'s schedule turned on or off, every other setting
    kept."""
    jobs = {name: dict(cfg) for name, cfg in (policy.get("jobs") or {}).items()}
    jobs[job] = {**jobs.get(job, {}), "enabled": enabled}
    return {"jobs": jobs}


@require_POST
@web.deciders
def job_schedule(request: HttpRequest, actor: Actor, slug: str, job: str) -> HttpResponse:
    try:
        memory = get_memory(actor, slug)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    back = HttpResponseRedirect(reverse("memory-maintenance", args=[memory.slug]))
    if job not in maintenance.jobs():
        return web.refuse(request, f"No maintenance job {job}.", status=404)
    enabled = request.POST.get("enabled") == "on"
    hours = maintenance.job_policy(memory.policy or {}, job).get("every_hours", 24)
    rationale = (
        f"Schedule {job} every {hours:g} h (from the maintenance page)."
        if enabled
        else f"Stop {job}'s schedule; reviewers still run it by hand (from the maintenance page)."
    )
    try:
        filed = submit_proposal(
            actor=actor,
            submission=parse_submission(
                {
                    "memory": memory.slug,
                    "kind": "policy",
                    "policy": schedule_change(memory.policy or {}, job, enabled),
                    "rationale": rationale,
                }
            ),
        )
    except DomainError as exc:
        messages.error(request, f"{job}: {exc.message}")
        return back
    messages.success(
        request,
        f"Proposal #{filed.proposal.pk} turns {job}'s schedule {'on' if enabled else 'off'} "
        "once another reviewer approves it.",
    )
    return HttpResponseRedirect(web.proposal_url(filed.proposal.pk))
