"""Decisions and maintenance operations: what an approval produces, and how it is undone.

Both are append-only. A :class:`Decision` is one reviewer's approve or reject; an approval that
completes the required count produces exactly one :class:`MaintenanceOperation` and one revision.
Compensation is recorded as its own append-only :class:`Compensation` row with its own revision.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.models import ActorType, AppendOnlyModel, Memory
from proposals.models import RejectionReason


class Verdict(models.TextChoices):
    APPROVE = "approve"
    REJECT = "reject"
    REQUEST_CHANGES = "request_changes"


#: A decision as a past event ("Approved by rita"), for the pages that list decisions.
VERDICT_OUTCOMES = {
    Verdict.APPROVE: "Approved",
    Verdict.REJECT: "Rejected",
    Verdict.REQUEST_CHANGES: "Changes requested",
}


class Decision(AppendOnlyModel):
    """One reviewer's verdict on a proposal, with the comment the submitter can read."""

    proposal = models.ForeignKey(
        "proposals.Proposal", on_delete=models.PROTECT, related_name="decisions", db_index=False
    )
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    # The proposal revision the verdict was given on: an amendment voids earlier approvals.
    proposal_revision = models.PositiveIntegerField(default=1)
    reason = models.CharField(max_length=32, choices=RejectionReason.choices, blank=True)
    comment = models.TextField(blank=True, default="")
    acknowledged_lost_details = models.JSONField(default=list, blank=True)
    actor_type = models.CharField(max_length=8, choices=ActorType.choices)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    on_behalf_of = models.CharField(max_length=200, blank=True, default="")
    decided_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # One verdict of each kind per person per proposal revision (N distinct approvals
            # means N people; an amendment opens a new revision to decide). A reviewer who asked
            # for changes (or approved, of N required) may still reject that revision.
            models.UniqueConstraint(
                fields=["proposal", "proposal_revision", "actor_id", "verdict"],
                name="one_verdict_per_actor_and_revision",
            ),
            models.CheckConstraint(
                condition=~models.Q(verdict="reject") | ~models.Q(reason=""),
                name="rejection_has_reason",
            ),
        ]
        ordering = ["proposal_id", "id"]

    def __str__(self) -> str:
        return f"{self.verdict} #{self.proposal_id} by {self.actor_label}"

    @property
    def outcome(self) -> str:
        """The decision as a past event: "Approved", "Rejected", "Changes requested"."""
        return VERDICT_OUTCOMES[Verdict(self.verdict)]


class MaintenanceOperation(AppendOnlyModel):
    """What an approval did: pre-state, produced records, derived-view impact, the plan to undo
    it and the effects that cannot be undone."""

    proposal = models.OneToOneField(
        "proposals.Proposal", on_delete=models.PROTECT, related_name="operation"
    )
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16)
    revision_number = models.PositiveBigIntegerField()
    pre_state = models.JSONField(default=list)
    produced = models.JSONField(default=dict)
    derived_view_impact = models.JSONField(default=dict)
    compensation_plan = models.JSONField(default=dict)
    irreversible_effects = models.JSONField(default=list)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"operation {self.pk} ({self.kind})"


class Compensation(AppendOnlyModel):
    """The record that an operation was undone, by which revision, by whom and why."""

    operation = models.OneToOneField(
        MaintenanceOperation, on_delete=models.PROTECT, related_name="compensation"
    )
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    revision_number = models.PositiveBigIntegerField()
    comment = models.TextField(blank=True, default="")
    actor_type = models.CharField(max_length=8, choices=ActorType.choices)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)


class Notification(models.Model):
    """An outgoing notification (email, optional webhook), queued after commit and sent by a
    Celery task. ``sent_at`` is set once when it went out."""

    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    event = models.CharField(max_length=48)
    recipient = models.CharField(max_length=254)
    channel = models.CharField(max_length=16, default="email")
    subject = models.CharField(max_length=200)
    body = models.TextField()
    proposal_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["sent_at", "id"])]


class ReviewClaim(models.Model):
    """An expiring, advisory lease a reviewer takes on a pending proposal ("Claim next"), so
    two reviewers working the queue do not open the same item. It guards nothing: the
    approval engine's locks and pre-state check are the real guard. One live claim per
    proposal and per reviewer; an expired row is simply taken over (review.claims)."""

    proposal = models.OneToOneField(
        "proposals.Proposal", on_delete=models.CASCADE, related_name="claim"
    )
    actor_id = models.CharField(max_length=200, unique=True)
    actor_label = models.CharField(max_length=200)
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return f"#{self.proposal_id} claimed by {self.actor_label}"

    def is_live(self, now: datetime | None = None) -> bool:
        return self.expires_at > (now or timezone.now())


class SavedView(models.Model):
    """A named inbox view a user saved: the inbox's filters, search and order as query
    parameters. Private to its owner (nobody lists or opens another user's views); read-only
    users (auditors) may keep views too, since a view changes nothing."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="saved_views",
        db_index=False,
    )
    name = models.CharField(max_length=80)
    #: The inbox's non-default query parameters (``InboxFilter.params()``), values as strings.
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="one_saved_view_name_per_user")
        ]
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user_id})"


class EmailMode(models.TextChoices):
    IMMEDIATE = "immediate", "Each one as it happens"
    DAILY = "daily", "One daily digest"
    OFF = "off", "No email"


class NotificationPreference(models.Model):
    """One user's notification settings: how review emails reach them (each at once, a daily
    digest, or none) and when they last marked the in-app list as seen. A user without a row
    gets immediate emails and sees every item as new."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    email = models.CharField(max_length=16, choices=EmailMode.choices, default=EmailMode.IMMEDIATE)
    seen_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(email__in=EmailMode.values), name="notification_email_mode_valid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.email}"
