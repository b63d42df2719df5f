"""The dashboard at ``/``: what needs the signed-in reviewer or auditor now.

Sections: the queue (pending proposals per kind, with "Claim next" for reviewers), open proposals
assigned to them, the proposal they have claimed (a live lease), open proposals waiting for
changes, stale proposals (newest first), the alerts of their Memories
(``memory.inventory.alerts``, those of the Memory home), the latest decisions on proposals they
may see and their Memories (links to each home, entries and maintenance). Every proposal comes
from ``proposals.selectors.visible_proposals``, so nothing above the reader's scope or clearance
is listed; each list is capped and links to the inbox filter that shows all of it.

Queries: a fixed number for the proposal sections and the decisions (one each, however many
rows), plus the alerts of at most :data:`ALERT_MEMORIES` Memories (a fixed number each), so
the page costs the same with 3 proposals or 3,000. Anonymous visitors go to the login page; a
signed-in user without a review role gets a short 403 explanation (``review/refused.html``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from lib.auth import actor_from_request
from memory import inventory
from memory.actors import Actor
from memory.models import Memory
from proposals.models import OPEN_STATUSES, Proposal, ProposalStatus
from proposals.selectors import visible_proposals

from . import web
from .models import Decision
from .permissions import may_view

#: Rows shown per proposal section (the section's inbox link shows the rest).
SECTION_ROWS = 10
#: Recent decisions shown.
DECISIONS_SHOWN = 10
#: Memories whose inventory alerts are checked (by slug; the page says when there are more).
ALERT_MEMORIES = 10

NO_ROLE = (
    "The dashboard lists proposals and Memory alerts for reviewers and auditors. Your account "
    "has neither role; ask an administrator to add you to the reviewer or auditor group."
)


def _rows(qs: Any, limit: int = SECTION_ROWS) -> tuple[list[Proposal], bool]:
    """The first ``limit`` rows and whether there are more (one query)."""
    rows = list(qs.select_related("memory")[: limit + 1])
    return rows[:limit], len(rows) > limit


def sections(actor: Actor) -> dict[str, Any]:
    """Everything the dashboard shows for ``actor`` (a reviewer, auditor or staff)."""
    visible = visible_proposals(actor)
    now = timezone.now()
    assigned, assigned_more = (
        _rows(
            visible.filter(assigned_to_id=actor.user_pk, status__in=OPEN_STATUSES).order_by(
                "-assigned_at", "-pk"
            )
        )
        if actor.user_pk is not None
        else ([], False)
    )
    claimed, _ = _rows(
        visible.filter(
            claim__actor_id=actor.id, claim__expires_at__gt=now, status=ProposalStatus.PENDING
        ).order_by("-pk"),
        limit=1,
    )
    changes, changes_more = _rows(
        visible.filter(status=ProposalStatus.CHANGES_REQUESTED).order_by(
            "-status_changed_at", "-pk"
        )
    )
    stale, stale_more = _rows(
        visible.filter(status=ProposalStatus.STALE).order_by("-status_changed_at", "-pk")
    )
    queue = {
        row["kind"]: row["n"]
        for row in visible.filter(status=ProposalStatus.PENDING)
        .values("kind")
        .annotate(n=Count("pk"))
        .order_by("kind")
    }
    decisions = list(
        Decision.objects.filter(proposal__in=visible.values("pk"))
        .select_related("proposal", "memory")
        .order_by("-decided_at", "-pk")[:DECISIONS_SHOWN]
    )
    memories = list(Memory.objects.visible_to(actor).order_by("slug")[: ALERT_MEMORIES + 1])
    alerts = [
        {"memory": m, "alert": a} for m in memories[:ALERT_MEMORIES] for a in inventory.alerts(m)
    ]
    return {
        "queue": sorted(queue.items()),
        "queue_total": sum(queue.values()),
        "assigned": assigned,
        "assigned_more": assigned_more,
        "claimed": claimed[0] if claimed else None,
        "changes": changes,
        "changes_more": changes_more,
        "stale": stale,
        "stale_more": stale_more,
        "decisions": decisions,
        "alerts": alerts,
        "alert_memories": memories[:ALERT_MEMORIES],
        "memories_more": len(memories) > ALERT_MEMORIES,
        "section_rows": SECTION_ROWS,
    }


@require_safe
def dashboard(request: HttpRequest) -> HttpResponse:
    """``/``: the dashboard (login page for anonymous visitors, 403 without a review role)."""
    if not request.user.is_authenticated:
        return web.login(request)
    actor = actor_from_request(request)
    if not may_view(actor):
        return web.refuse(request, NO_ROLE)
    context = {"nav": "dashboard", "can_decide": actor.is_reviewer, **sections(actor)}
    return render(request, "review/dashboard.html", context)
