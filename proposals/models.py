"""L2 proposals: risky maintenance steps an agent asks a human to approve (DESIGN.md §9).

A :class:`Proposal` is written by ``proposals.actions`` only. Its exact pre-state lives in
:class:`ProposalTarget` rows (entry, version, state, content hash, role), written once at
submission and never changed. The status moves only along :data:`TRANSITIONS`, through
:meth:`Proposal.transition_to`; the database keeps the invariants true for the admin and scripts
too:

- at most one *pending* proposal per (Memory, kind, set of affected entries) — a partial unique
  constraint on ``affected_key``;
- a rejected proposal carries a rejection reason code, and only a rejected one does;
- a stale proposal names the revision that made it stale.

For the review app (approval engine): lock order is the Memory row, then proposal rows
(``Proposal.objects.select_for_update()``), then entry heads. Approve / reject / stale /
compensate go through ``transition_to`` and a save with ``update_fields``; a revision written for
an approval must carry ``proposal_id`` so the staleness hook does not mark that very proposal
stale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory.models import (
    ApiKey,
    AppendOnlyModel,
    Entry,
    EntryVersion,
    HeadState,
    Memory,
    Revision,
    Sensitivity,
    sensitivities_up_to,
)

if TYPE_CHECKING:
    from memory.actors import Actor

#: Most entries one proposal may affect (a bounded cleanup list, a large consolidation).
MAX_AFFECTED_ENTRIES = 50
#: Idempotency keys are honoured at least this long (API.md: kept at least 24 h).
IDEMPOTENCY_TTL_HOURS = 24


class ProposalKind(models.TextChoices):
    CONSOLIDATION = "consolidation"
    SUPERSESSION = "supersession"
    PROMOTION = "promotion"
    CLEANUP = "cleanup"
    ADMISSION = "admission"
    QUARANTINE = "quarantine"
    POLICY = "policy"


class ProposalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"
    STALE = "stale"
    COMPENSATED = "compensated"
    CHANGES_REQUESTED = "changes_requested"


#: Statuses in which a proposal is still open: it may be decided (pending) or amended
#: (changes requested), goes stale when its entries move, and blocks a second proposal on the
#: same set of entries.
OPEN_STATUSES = (ProposalStatus.PENDING, ProposalStatus.CHANGES_REQUESTED)

#: The only legal status changes. Everything not listed here is refused.
TRANSITIONS: dict[str, frozenset[str]] = {
    ProposalStatus.PENDING: frozenset(
        {
            ProposalStatus.APPROVED,
            ProposalStatus.REJECTED,
            ProposalStatus.WITHDRAWN,
            ProposalStatus.STALE,
            ProposalStatus.CHANGES_REQUESTED,
        }
    ),
    ProposalStatus.CHANGES_REQUESTED: frozenset(
        {
            ProposalStatus.PENDING,  # the submitter (or a reviewer) amended it
            ProposalStatus.REJECTED,
            ProposalStatus.WITHDRAWN,
            ProposalStatus.STALE,
        }
    ),
    ProposalStatus.APPROVED: frozenset({ProposalStatus.COMPENSATED}),
    ProposalStatus.REJECTED: frozenset(),
    ProposalStatus.WITHDRAWN: frozenset(),
    # A reviewer closes a stale proposal ("Close as stale"): it leaves every queue; or the
    # submitter or a reviewer rebases it onto the current heads: it is pending again.
    ProposalStatus.STALE: frozenset({ProposalStatus.REJECTED, ProposalStatus.PENDING}),
    ProposalStatus.COMPENSATED: frozenset(),
}


class RejectionReason(models.TextChoices):
    """Why a reviewer rejected: the labels are what the reject forms, pages and exports say."""

    DUPLICATE_OF_OTHER = "duplicate_of_other", "Duplicate of another proposal"
    WRONG = "wrong", "Wrong"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence", "Insufficient evidence"
    LOSES_DETAIL = "loses_detail", "Loses a detail"
    OTHER = "other", "Other"


class TargetRole(models.TextChoices):
    """What an affected entry is to its proposal."""

    TARGET = "target"  # consolidation: the entry that receives the merged body
    REDUNDANT = "redundant"  # consolidation: entries forgotten into the target
    OLD = "old"  # supersession: the entry being superseded
    SUCCESSOR = "successor"  # supersession: an existing successor entry
    NOTE = "note"  # promotion: a working note
    ENTRY = "entry"  # cleanup: a low-value entry; quarantine: an entry to withhold
    CANDIDATE = "candidate"  # admission: the entry waiting to be admitted


def affected_key(entry_pks: Iterable[int]) -> str:
    """A stable key for a *set* of affected entries (order and repeats do not matter)."""
    joined = ",".join(str(pk) for pk in sorted(set(entry_pks)))
    return hashlib.sha256(joined.encode()).hexdigest()


class ProposalQuerySet(models.QuerySet["Proposal"]):
    def pending(self) -> ProposalQuerySet:
        return self.filter(status=ProposalStatus.PENDING)

    def open(self) -> ProposalQuerySet:
        """Pending or waiting for changes (:data:`OPEN_STATUSES`)."""
        return self.filter(status__in=OPEN_STATUSES)

    def for_memory(self, memory: Memory) -> ProposalQuerySet:
        return self.filter(memory=memory)

    def visible_to(self, actor: Actor) -> ProposalQuerySet:
        """Proposals in the actor's Memories whose every affected entry is within its clearance
        (a proposal touching an entry the actor may not see does not exist for it)."""
        qs = self
        if actor.memory_ids is not None:
            qs = qs.filter(memory_id__in=actor.memory_ids)
        allowed = sensitivities_up_to(actor.clearance)
        if len(allowed) == len(Sensitivity.values):
            # Top clearance: nothing can be hidden, so skip the anti-join (it scans every
            # target row on a large queue).
            return qs
        hidden = ProposalTarget.objects.filter(proposal=models.OuterRef("pk")).exclude(
            entry__sensitivity__in=allowed
        )
        return qs.filter(~models.Exists(hidden))

    def touching(self, entry_pks: Iterable[int]) -> ProposalQuerySet:
        return self.filter(
            pk__in=ProposalTarget.objects.filter(entry_id__in=list(entry_pks)).values("proposal_id")
        )

    def with_detail(self) -> ProposalQuerySet:
        """Memory, stale revision, assignee, the operation an approval performed and its
        compensation (review's records), and targets with their entries and versions, comments
        with their resolutions, decisions (review's verdicts) and amendments: 5 queries."""
        return self.select_related(
            "memory", "stale_revision", "assigned_to", "operation__compensation"
        ).prefetch_related(
            models.Prefetch(
                "targets",
                queryset=ProposalTarget.objects.select_related("entry", "version").order_by(
                    "position"
                ),
            ),
            models.Prefetch(
                "comments",
                queryset=ProposalComment.objects.select_related("resolution").order_by("id"),
            ),
            "decisions",
            models.Prefetch("amendments", queryset=ProposalAmendment.objects.order_by("number")),
        )


class Proposal(models.Model):
    """An L2 maintenance request, pending until a reviewer decides (or it goes stale)."""

    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="proposals", db_index=False
    )
    kind = models.CharField(max_length=16, choices=ProposalKind.choices)
    status = models.CharField(
        max_length=24, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    # sha256 of the sorted pks of every affected entry: the "set of affected entries".
    affected_key = models.CharField(max_length=64)

    # Who submitted it: the actor (key, user or system), the key and the key's owner.
    submitted_by = models.CharField(max_length=200)
    submitted_by_type = models.CharField(max_length=8)
    submitted_by_label = models.CharField(max_length=200)
    submitted_on_behalf_of = models.CharField(max_length=200, blank=True, default="")
    submitted_by_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    submitted_by_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    rationale = models.TextField()
    # Citations: [{source, ref, observed_at, quote, snapshot: {authority, verification,
    # declaration_version}}], at most STEWARD_MAX_EVIDENCE.
    evidence = models.JSONField(default=list, blank=True)
    # The Memory's policy version at submission (proposals.verify.policy_version).
    policy_version = models.CharField(max_length=40)
    # The kind-specific request, normalized: bodies cleaned, entries as {entry_id, version}.
    payload = models.JSONField(default=dict)
    # What the server verified: {similarity, similarity_method, pairs, lost_details,
    # lost_detail_info, checks}.
    verification = models.JSONField(default=dict)

    created_at = models.DateTimeField(default=timezone.now)
    status_changed_at = models.DateTimeField(default=timezone.now)
    # Why the status last changed (withdraw reason, "stale: revision N changed e_…").
    status_reason = models.CharField(max_length=2000, blank=True, default="")
    stale_revision = models.ForeignKey(
        Revision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    correlation_id = models.CharField(max_length=64, blank=True, default="")

    # Filled by the review app when a reviewer decides.
    decided_by = models.CharField(max_length=200, blank=True, default="")
    decided_by_label = models.CharField(max_length=200, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    rejection_reason = models.CharField(
        max_length=24, choices=RejectionReason.choices, blank=True, default=""
    )
    decision_comment = models.TextField(blank=True, default="")

    # The proposal's revision: 1 as submitted, +1 per amendment (approvals count only for the
    # revision they were given on).
    revision = models.PositiveIntegerField(default=1)
    # Identities (actor ids, ``user:<pk>``) of everyone who amended it: they count as "self".
    editors = models.JSONField(default=list, blank=True)
    # Which set of targets is the proposal's pre-state: 1 as submitted, +1 per rebase (the
    # targets of earlier bases stay on record; ``ProposalTarget.objects`` reads the current).
    target_base = models.PositiveSmallIntegerField(default=1)
    # The reviewer it is assigned to (advisory, like claims), who assigned it and when.
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    assigned_by_label = models.CharField(max_length=200, blank=True, default="")
    assigned_at = models.DateTimeField(null=True, blank=True)

    objects = ProposalQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["memory", "status", "kind"]),
            models.Index(fields=["status", "id"]),
            models.Index(fields=["submitted_by", "id"]),
            models.Index(fields=["memory", "status", "id"]),
            models.Index(fields=["status", "kind", "id"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "kind", "affected_key"],
                condition=Q(status__in=["pending", "changes_requested"]),
                name="one_open_proposal_per_affected_set",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=ProposalKind.values), name="proposal_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ProposalStatus.values), name="proposal_status_valid"
            ),
            models.CheckConstraint(
                condition=(
                    Q(status="rejected", rejection_reason__in=RejectionReason.values)
                    | (~Q(status="rejected") & Q(rejection_reason=""))
                ),
                name="proposal_rejection_reason_iff_rejected",
            ),
            models.CheckConstraint(
                condition=~Q(status="stale") | Q(stale_revision__isnull=False),
                name="proposal_stale_names_revision",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} ({self.status})"

    @property
    def is_open(self) -> bool:
        """Pending or waiting for changes (:data:`OPEN_STATUSES`): it may still be commented on,
        amended, assigned or decided. The one test of "open"; ``.open()`` is its query."""
        return self.status in OPEN_STATUSES

    def can_transition_to(self, status: str) -> bool:
        return status in TRANSITIONS.get(self.status, frozenset())

    def transition_to(
        self, status: str, *, reason: str = "", at: datetime | None = None
    ) -> list[str]:
        """Move to ``status`` if the transition table allows it (else ``IllegalTransition``,
        409 ``already_decided``). Sets the fields in memory and returns the ``update_fields``
        the caller saves — together with its own (decision fields, ``stale_revision``), under
        the locks it holds."""
        from .exceptions import IllegalTransition

        if not self.can_transition_to(status):
            raise IllegalTransition(
                f"The proposal is {self.status}; it cannot become {status}.",
                details={"proposal": self.pk, "status": self.status, "requested": status},
            )
        self.status = status
        self.status_changed_at = at or timezone.now()
        # The reason belongs to this status: one left by an earlier status (a request for
        # changes, "amended") would read as the reason for this one.
        self.status_reason = reason[:2000]
        return ["status", "status_changed_at", "status_reason"]

    def is_submitter(self, actor: Actor) -> bool:
        """Whether ``actor`` submitted it: the same key, the key's owner, or the same actor id."""
        if actor.id == self.submitted_by:
            return True
        if actor.key_pk is not None and actor.key_pk == self.submitted_by_key_id:
            return True
        return actor.user_pk is not None and actor.user_pk == self.submitted_by_owner_id

    def is_self(self, actor: Actor) -> bool:
        """Whether ``actor`` counts as self (DESIGN.md §9: nobody approves what they submitted
        or edited): the submitter, or anyone who amended it."""
        return self.is_submitter(actor) or bool(actor.identities() & set(self.editors or []))


class ProposalContribution(AppendOnlyModel):
    """What somebody added to a proposal (a comment or an amendment): written once, in the
    proposal's Memory, by one actor, stored as ``Actor.columns("author")``."""

    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    author_id = models.CharField(max_length=200)
    author_type = models.CharField(max_length=8)
    author_label = models.CharField(max_length=200)
    on_behalf_of = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class ProposalComment(ProposalContribution):
    """One message in a proposal's discussion (reviewers and the submitting agent)."""

    proposal = models.ForeignKey(
        Proposal, on_delete=models.PROTECT, related_name="comments", db_index=False
    )
    # The proposal revision the comment was written on.
    proposal_revision = models.PositiveIntegerField()
    body = models.TextField()
    # A passage of the proposed text the comment is about, as on ``proposal_revision``:
    # ``{quote, start, end}`` (character offsets); empty for a comment on the whole proposal.
    anchor = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["proposal_id", "id"]
        indexes = [models.Index(fields=["proposal", "id"])]

    def __str__(self) -> str:
        return f"comment on #{self.proposal_id} by {self.author_label}"

    def resolution_or_none(self) -> CommentResolution | None:
        """Its resolution (``select_related("resolution")`` reads it with the comment), or
        None while it is open."""
        try:
            return self.resolution
        except CommentResolution.DoesNotExist:
            return None


class CommentResolution(ProposalContribution):
    """A comment marked resolved, as in a code review: the point it raised is settled. A record
    of its own, written once; the comment itself is never updated. One per comment (the
    one-to-one column is unique: a second resolution is refused, ``already_resolved``). The
    author is the person who resolved it."""

    comment = models.OneToOneField(
        ProposalComment, on_delete=models.PROTECT, related_name="resolution"
    )
    # The proposal revision it was resolved on (an amendment usually settles a comment).
    proposal_revision = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"comment {self.comment_id} resolved by {self.author_label}"


class ProposalAmendment(ProposalContribution):
    """One amendment: the proposal's revision ``number`` replaced revision ``number - 1``.
    ``before`` and ``after`` hold the amended fields (rationale, evidence, payload,
    verification) so the change can be shown as a diff."""

    proposal = models.ForeignKey(
        Proposal, on_delete=models.PROTECT, related_name="amendments", db_index=False
    )
    number = models.PositiveIntegerField()
    comment = models.TextField(blank=True, default="")
    before = models.JSONField()
    after = models.JSONField()

    class Meta:
        ordering = ["proposal_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["proposal", "number"], name="uniq_amendment_number")
        ]

    def __str__(self) -> str:
        return f"#{self.proposal_id} r{self.number} by {self.author_label}"


class CurrentTargetManager(models.Manager["ProposalTarget"]):
    """Targets of their proposal's current base (``Proposal.target_base``): the pre-state
    approval checks. A rebase writes a new base; the earlier ones stay on record
    (``ProposalTarget.every_base``)."""

    def get_queryset(self) -> models.QuerySet[ProposalTarget]:
        return super().get_queryset().filter(base=models.F("proposal__target_base"))


class ProposalTarget(AppendOnlyModel):
    """One affected entry with its exact pre-state at submission (or at a rebase: ``base``).
    Written once."""

    proposal = models.ForeignKey(
        Proposal, on_delete=models.PROTECT, related_name="targets", db_index=False
    )
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    role = models.CharField(max_length=16, choices=TargetRole.choices)
    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="proposal_targets")
    version = models.ForeignKey(EntryVersion, on_delete=models.PROTECT, related_name="+")
    version_number = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=HeadState.choices)
    content_hash = models.CharField(max_length=64)
    # The proposal's target base this row belongs to (1 as submitted, +1 per rebase).
    base = models.PositiveSmallIntegerField(default=1)

    objects = CurrentTargetManager()
    every_base = models.Manager()

    class Meta:
        ordering = ["proposal_id", "position"]
        base_manager_name = "every_base"
        constraints = [
            models.UniqueConstraint(
                fields=["proposal", "base", "entry"], name="uniq_target_base_entry"
            ),
            models.UniqueConstraint(
                fields=["proposal", "base", "position"], name="uniq_target_base_position"
            ),
            models.CheckConstraint(
                condition=Q(role__in=TargetRole.values), name="proposal_target_role_valid"
            ),
            models.CheckConstraint(
                condition=Q(state__in=HeadState.values), name="proposal_target_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role} {self.entry_id}@{self.version_number}"


class IdempotencyKeyQuerySet(models.QuerySet["IdempotencyKey"]):
    def live(self, now: datetime | None = None) -> IdempotencyKeyQuerySet:
        return self.filter(expires_at__gt=now or timezone.now())


class IdempotencyKey(models.Model):
    """An ``Idempotency-Key`` a submitter used, the hash of its request and the proposal it
    created. Honoured for at least :data:`IDEMPOTENCY_TTL_HOURS`; purged after expiry."""

    submitted_by = models.CharField(max_length=200)
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    objects = IdempotencyKeyQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submitted_by", "key"], name="uniq_idempotency_key")
        ]
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return f"{self.submitted_by}:{self.key}"


def target_map(targets: Iterable[ProposalTarget]) -> dict[str, list[ProposalTarget]]:
    """Targets grouped by role, in position order."""
    out: dict[str, list[ProposalTarget]] = {}
    for t in sorted(targets, key=lambda t: t.position):
        out.setdefault(t.role, []).append(t)
    return out
