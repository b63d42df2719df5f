"""Notifications: queued in the deciding transaction, sent after commit by a Celery task.

Reviewers hear about new proposals, submitters about decisions — never the person who acted.
Email goes through Django's email backend; a Memory may also set ``policy.webhook_url``, which
receives a JSON POST signed with HMAC-SHA256 (header ``X-Steward-Signature: sha256=<hex>``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from memory.actors import Actor
from proposals.models import Proposal

from .models import Notification


def _queue(rows: list[Notification]) -> None:
    """Store the rows now (same transaction as the decision) and hand them to Celery after
    commit. ``robust``: a failing send (or broker) is logged and never turns a committed
    decision into an error for the person who made it; the row keeps the failure."""
    from .tasks import send_notification

    def send_after_commit(pk: int) -> Callable[[], None]:
        def send_notification_after_commit() -> None:
            send_notification.delay(pk)

        return send_notification_after_commit

    for row in Notification.objects.bulk_create(rows):
        transaction.on_commit(send_after_commit(row.pk), robust=True)


def _webhook(proposal: Proposal, event: str, body: str) -> list[Notification]:
    url = (proposal.memory.policy or {}).get("webhook_url")
    if not url:
        return []
    return [
        Notification(
            memory=proposal.memory,
            event=event,
            recipient=url,
            channel="webhook",
            subject=f"{event} #{proposal.pk}",
            body=body,
            proposal_id=proposal.pk,
        )
    ]


def decision_made(proposal: Proposal, *, actor: Actor) -> None:
    """Tell the submitter (the key's owner) what was decided; never the decider."""
    owner = proposal.submitted_by_owner
    verdict = proposal.status
    body = f"Proposal #{proposal.pk} ({proposal.kind}) was {verdict} by {actor.label}."
    if verdict == "changes_requested":
        body = (
            f"{actor.label} asked for changes to proposal #{proposal.pk} ({proposal.kind}):\n"
            f"{proposal.status_reason}\nAmend it to send it back for review."
        )
    if proposal.rejection_reason:
        body += f"\nReason: {proposal.rejection_reason}\nComment: {proposal.decision_comment}"
    rows: list[Notification] = []
    if owner is not None and owner.email and owner.pk != actor.user_pk:
        rows.append(
            Notification(
                memory=proposal.memory,
                event=f"proposal.{verdict}",
                recipient=owner.email,
                subject=f"[Memory Steward] Proposal #{proposal.pk} {verdict}",
                body=body,
                proposal_id=proposal.pk,
            )
        )
    rows += _webhook(proposal, f"proposal.{verdict}", body)
    if rows:
        _queue(rows)


def proposal_submitted(proposal: Proposal, *, actor: Actor) -> None:
    """Tell reviewers a proposal is waiting (not the submitter's owner)."""
    users: Any = (
        get_user_model()
        .objects.filter(groups__name="reviewer", is_active=True)
        .exclude(email="")
        .order_by("pk")
    )
    if actor.user_pk is not None:
        users = users.exclude(pk=actor.user_pk)
    body = (
        f"A {proposal.kind} proposal (#{proposal.pk}) is waiting in {proposal.memory.slug}.\n"
        f"Rationale: {proposal.rationale[:500]}"
    )
    rows = [
        Notification(
            memory=proposal.memory,
            event="proposal.submitted",
            recipient=u.email,
            subject=f"[Memory Steward] New {proposal.kind} proposal #{proposal.pk}",
            body=body,
            proposal_id=proposal.pk,
        )
        for u in users[:200]
    ]
    rows += _webhook(proposal, "proposal.submitted", body)
    if rows:
        _queue(rows)
