"""Models of the authoritative Memory.

Entry text is immutable: an :class:`EntryVersion` is never updated or deleted, and every change
is an append-only :class:`Revision` with its :class:`RevisionChange` rows. :class:`Head` is the
manifest (current version and state per entry) and is written only by the revision writer in
``memory.actions``. :class:`LifecycleProjection` is derived and rebuildable.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone
from rest_framework_api_key.models import AbstractAPIKey

from lib.identity import Actor
from lib.models import AppendOnlyError as AppendOnlyError
from lib.models import AppendOnlyModel as AppendOnlyModel

from .choices import (  # re-exported: the vocabularies are imported from memory.models
    AUTHORITATIVE_RELATIONS as AUTHORITATIVE_RELATIONS,
)
from .choices import (
    SENSITIVITY_ORDER as SENSITIVITY_ORDER,
)
from .choices import (
    WITHHELD_STATES as WITHHELD_STATES,
)
from .choices import (
    ActorType,
    ApiRole,
    Authority,
    EvidenceStrength,
    HeadState,
    Kind,
    PinCategory,
    RelationKind,
    RevisionKind,
    Sensitivity,
    Tier,
    Validity,
    Verification,
    sensitivities_up_to,
)

# --- Scope and keys -------------------------------------------------------------------------


class MemoryQuerySet(models.QuerySet["Memory"]):
    def visible_to(self, actor: Actor) -> MemoryQuerySet:
        if actor.memory_ids is None:
            return self
        return self.filter(pk__in=actor.memory_ids)


class Memory(models.Model):
    """One scope of memory. Every other record belongs to exactly one Memory."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    policy = models.JSONField(default=dict, blank=True)
    # Number of the latest revision (the Memory's head); 0 before the first write.
    head = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "memories"

    def __str__(self) -> str:
        return self.slug


class ApiKey(AbstractAPIKey):
    """An API key: only its hash is stored (djangorestframework-api-key)."""

    role = models.CharField(max_length=16, choices=ApiRole.choices)
    clearance = models.CharField(
        max_length=16, choices=Sensitivity.choices, default=Sensitivity.INTERNAL
    )
    memories = models.ManyToManyField(Memory, blank=True, related_name="api_keys")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="api_keys",
    )

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "API key"


# --- Sources and evidence -------------------------------------------------------------------


class Source(models.Model):
    """A registered origin of evidence. Its declaration is versioned (SourceDeclaration)."""

    name = models.CharField(max_length=128, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


class SourceDeclaration(AppendOnlyModel):
    """One version of a source's evidence declaration. Missing = unknown / untrusted."""

    source = models.ForeignKey(
        Source, on_delete=models.PROTECT, related_name="declarations", db_index=False
    )
    version = models.PositiveIntegerField()
    authority = models.CharField(max_length=32, choices=Authority.choices)
    verification = models.CharField(max_length=16, choices=Verification.choices)
    declared_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "version"], name="uniq_source_decl_version")
        ]
        ordering = ["source_id", "version"]


# --- Entries --------------------------------------------------------------------------------


def new_entry_id() -> str:
    return "e_" + secrets.token_hex(8)


class EntryQuerySet(models.QuerySet["Entry"]):
    def for_memory(self, memory: Memory) -> EntryQuerySet:
        return self.filter(memory=memory)

    def visible_to(self, actor: Actor) -> EntryQuerySet:
        return self.filter(sensitivity__in=sensitivities_up_to(actor.clearance))

    def with_detail(self) -> EntryQuerySet:
        """Head, head version, its evidence with sources, and the projection: 2 queries."""
        return self.select_related("head__version", "projection__successor_entry").prefetch_related(
            models.Prefetch(
                "head__version__evidence",
                queryset=Evidence.objects.select_related("source").order_by("position"),
            )
        )


class Entry(models.Model):
    """A stable identity inside a Memory. Its text lives in immutable versions."""

    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    # The public id (``entry_id`` in the API). Stable for the life of the entry.
    uid = models.CharField(max_length=32, default=new_entry_id)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    tier = models.CharField(max_length=16, choices=Tier.choices, default=Tier.LONG)
    session_id = models.CharField(max_length=128, blank=True, default="")
    sensitivity = models.CharField(
        max_length=16, choices=Sensitivity.choices, default=Sensitivity.INTERNAL
    )
    current_state = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    objects = EntryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            models.UniqueConstraint(fields=["memory", "uid"], name="uniq_entry_uid_per_memory")
        ]
        # A session's turns in the order they were written: the session filter, and a turn's
        # previous turn (``lexical_index.previous_turn_body``, ``search.exchanges``) found by a
        # walk of one index entry, not a sort of the whole session.
        indexes = [
            models.Index(fields=["memory", "session_id", "id"], name="memory_entry_session_turn")
        ]

    def __str__(self) -> str:
        return self.uid


class EntryVersion(AppendOnlyModel):
    """The immutable text of an entry at one point. Never updated, never deleted."""

    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_index=False)
    entry = models.ForeignKey(
        Entry, on_delete=models.PROTECT, related_name="versions", db_index=False
    )
    number = models.PositiveIntegerField()
    body = models.TextField()
    content_hash = models.CharField(max_length=64)
    predecessor = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    revision = models.ForeignKey("Revision", on_delete=models.PROTECT, related_name="+")
    effective_at = models.DateTimeField(null=True, blank=True)
    # Derived from ``body`` by the analyzer (memory.text) so every backend indexes the same
    # tokens; ``term_count`` is its number of tokens (the lexical tie-break). The only columns
    # ever rewritten, and only by the reindex (memory.search.reindex), when the analyzer changes.
    searchable_text = models.TextField(blank=True, default="")
    term_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "number"], name="uniq_version_number")
        ]
        indexes = [models.Index(fields=["memory", "content_hash"])]

    def __str__(self) -> str:
        return f"{self.entry.uid}@{self.number}"


class TermStat(models.Model):
    """How many of a Memory's indexed versions hold a term (its document frequency): the
    rarity the lexical channel weighs a match by (BM25, ``memory.search.stats``). Derived from
    the stored ``searchable_text``; only ever incremented, by the writer, under the Memory lock."""

    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_index=False)
    term = models.TextField()
    df = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "term"], name="uniq_termstat_term")
        ]


class LexicalCorpus(models.Model):
    """A Memory's indexed versions and their own tokens (``term_count``) in all: the collection
    size and mean length of BM25 (``memory.search.stats``)."""

    memory = models.OneToOneField(
        Memory, on_delete=models.PROTECT, primary_key=True, related_name="+"
    )
    versions = models.PositiveBigIntegerField(default=0)
    tokens = models.PositiveBigIntegerField(default=0)


class Evidence(AppendOnlyModel):
    """One citation on an entry version, with a snapshot of its source's declaration."""

    version = models.ForeignKey(
        EntryVersion, on_delete=models.PROTECT, related_name="evidence", db_index=False
    )
    position = models.PositiveSmallIntegerField()
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    ref = models.CharField(max_length=2000)
    observed_at = models.DateTimeField(null=True, blank=True)
    quote = models.TextField(blank=True, default="")
    # Snapshot at write time: rebuilds use this, never today's registry.
    declaration_version = models.PositiveIntegerField(null=True, blank=True)
    authority = models.CharField(
        max_length=32, choices=Authority.choices, default=Authority.UNTRUSTED
    )
    verification = models.CharField(
        max_length=16, choices=Verification.choices, default=Verification.UNKNOWN
    )

    class Meta:
        ordering = ["version_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["version", "position"], name="uniq_evidence_position")
        ]


# --- Revisions ------------------------------------------------------------------------------


class Revision(AppendOnlyModel):
    """The only unit of change. Append-only, numbered 1..N per Memory without gaps."""

    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="revisions", db_index=False
    )
    number = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=16, choices=RevisionKind.choices)
    actor_type = models.CharField(max_length=8, choices=ActorType.choices)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    on_behalf_of = models.CharField(max_length=200, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    recorded_at = models.DateTimeField(default=timezone.now)
    correlation_id = models.CharField(max_length=64, blank=True, default="")
    # Plain ids, not foreign keys: memory does not depend on proposals or review.
    proposal_id = models.BigIntegerField(null=True, blank=True)
    operation_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "number"], name="uniq_revision_number")
        ]
        ordering = ["memory_id", "number"]

    def __str__(self) -> str:
        return f"{self.memory_id}#{self.number} {self.kind}"


class RevisionChange(AppendOnlyModel):
    """What one revision did to one entry: version and state before and after."""

    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="changes")
    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="changes")
    from_version = models.ForeignKey(
        EntryVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to_version = models.ForeignKey(EntryVersion, on_delete=models.PROTECT, related_name="+")
    from_state = models.CharField(max_length=16, choices=HeadState.choices, blank=True)
    to_state = models.CharField(max_length=16, choices=HeadState.choices)
    state_reason = models.CharField(max_length=300, blank=True, default="")
    # Explicit per-entry settings carried by this revision (pin, importance override).
    attributes = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["revision_id", "id"]


class Head(models.Model):
    """The manifest: current version and state of one entry. Written only by the revision
    writer; reproducible by replaying revisions."""

    entry = models.OneToOneField(
        Entry, primary_key=True, on_delete=models.PROTECT, related_name="head"
    )
    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="heads", db_index=False
    )
    version = models.ForeignKey(EntryVersion, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=16, choices=HeadState.choices)
    state_reason = models.CharField(max_length=300, blank=True, default="")
    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="+")
    interval_started_at = models.DateTimeField()
    pinned = models.BooleanField(default=False)
    pin_category = models.CharField(max_length=32, choices=PinCategory.choices, blank=True)
    importance_override = models.PositiveSmallIntegerField(null=True, blank=True)
    # Governance (spec 004, memory.revalidation): admission-time metadata of the entry, set by
    # its ``add`` revision and moved on by ``confirm`` / ``require-reverification`` revisions
    # (``RevisionChange.attributes`` carries each value, so replaying revisions reproduces them).
    owner = models.CharField(max_length=200, blank=True, default="")
    confidence = models.FloatField(null=True, blank=True)
    review_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["memory", "state"]),
            # The "needs re-checking" list and the revalidation job: a Memory's due heads.
            models.Index(fields=["memory", "review_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=["active", "inactive", "candidate", "quarantined"]),
                name="head_state_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__isnull=True)
                | models.Q(confidence__gte=0, confidence__lte=1),
                name="head_confidence_0_1",
            ),
        ]


class Relation(models.Model):
    """A typed edge between entries. Observations annotate; authoritative edges are created
    only inside a revision, and retired (never deleted) by a later one."""

    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="relations", db_index=False
    )
    kind = models.CharField(max_length=32, choices=RelationKind.choices)
    from_entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="relations_out")
    to_entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="relations_in")
    authoritative = models.BooleanField(default=False)
    score = models.FloatField(null=True, blank=True)
    evidence = models.JSONField(default=list, blank=True)
    revision = models.ForeignKey(
        Revision, null=True, blank=True, on_delete=models.PROTECT, related_name="relations"
    )
    retired_by = models.ForeignKey(
        Revision, null=True, blank=True, on_delete=models.PROTECT, related_name="retired_relations"
    )
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["memory", "to_entry", "kind"]),
            models.Index(fields=["memory", "from_entry", "kind"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(from_entry=models.F("to_entry")), name="relation_not_self"
            ),
            models.CheckConstraint(
                condition=models.Q(authoritative=False) | models.Q(revision__isnull=False),
                name="authoritative_relation_has_revision",
            ),
        ]


class LifecycleProjection(models.Model):
    """Derived, rebuildable lifecycle metadata per entry head. Never holds body text."""

    entry = models.OneToOneField(
        Entry, primary_key=True, on_delete=models.PROTECT, related_name="projection"
    )
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_index=False)
    version = models.ForeignKey(EntryVersion, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=16, choices=HeadState.choices)
    importance = models.PositiveSmallIntegerField()
    evidence_strength = models.CharField(max_length=8, choices=EvidenceStrength.choices)
    provenance = models.JSONField(default=dict)
    validity = models.CharField(max_length=24, choices=Validity.choices)
    validity_reason = models.CharField(max_length=300, blank=True, default="")
    successor_entry = models.ForeignKey(
        Entry, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField(null=True, blank=True)
    effective_at = models.DateTimeField(null=True, blank=True)
    time_known = models.BooleanField(default=True)
    tier = models.CharField(max_length=16, choices=Tier.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    sensitivity = models.CharField(max_length=16, choices=Sensitivity.choices)
    current_state = models.BooleanField(default=False)
    pinned = models.BooleanField(default=False)
    pin_category = models.CharField(max_length=32, blank=True, default="")
    protected = models.BooleanField(default=False)
    interval_started_at = models.DateTimeField(null=True, blank=True)
    auto_action_reason = models.CharField(max_length=64, blank=True, default="")
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    rule_version = models.PositiveSmallIntegerField()
    #: The UTF-8 size of the head version's body, so a Memory's size in bytes is a sum over
    #: these rows (``memory.inventory.manifest_bytes``) that reads no entry text.
    body_bytes = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["memory", "validity"]),
            models.Index(fields=["memory", "state", "tier"]),
            # Scoped recall's time range (memory.search.filters): without it a narrow range
            # read every projection row of the table (EXPLAIN on PostgreSQL, docs/recall.md).
            models.Index(fields=["memory", "effective_at"]),
        ]


class MaintenanceLock(models.Model):
    """The (Memory, job) lock of a running maintenance job: at most one row per pair, so two
    runs of one job never overlap on one Memory. Taken and released by
    ``memory.maintenance.job_lock``; a row past ``expires_at`` belongs to a dead worker and is
    taken over."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+", db_index=False)
    job = models.CharField(max_length=32)
    holder = models.CharField(max_length=200)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "job"], name="uniq_maintenance_lock")
        ]


class AuditEvent(AppendOnlyModel):
    """One append-only audit record, written by the actions themselves (never by signals).

    Links are plain ids, not cascading foreign keys, and a label is copied so history reads
    the same after renames. PostgreSQL refuses UPDATE and DELETE on this table (trigger).
    """

    action = models.CharField(max_length=48)
    recorded_at = models.DateTimeField(default=timezone.now)
    actor_type = models.CharField(max_length=8, choices=ActorType.choices)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    on_behalf_of = models.CharField(max_length=200, blank=True, default="")
    correlation_id = models.CharField(max_length=64)
    memory_id = models.BigIntegerField(null=True, blank=True)
    memory_label = models.CharField(max_length=64, blank=True, default="")
    label = models.CharField(max_length=300, blank=True, default="")
    revision_number = models.BigIntegerField(null=True, blank=True)
    proposal_id = models.BigIntegerField(null=True, blank=True)
    operation_id = models.BigIntegerField(null=True, blank=True)
    run_id = models.BigIntegerField(null=True, blank=True)
    entry_ids = models.JSONField(default=list, blank=True)
    payload = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["memory_id", "id"]),
            # A revision's and a proposal's events (the revision page, the entry timeline).
            models.Index(fields=["memory_id", "revision_number"]),
            models.Index(fields=["memory_id", "proposal_id"]),
            models.Index(fields=["action", "id"]),
            models.Index(fields=["actor_id", "id"]),
            models.Index(fields=["recorded_at"]),
            models.Index(fields=["correlation_id"]),
        ]


class AuditSeal(AppendOnlyModel):
    """The audit hash chain (``memory.audit_chain``): one seal per event, in sealing order —
    the digest of the event's stored columns and the chain hash over the seal before. No
    foreign-key constraint: a deleted event must leave its seal behind to be found."""

    #: Position in the chain; NULL until chained (PostgreSQL: at the event's commit).
    seq = models.BigIntegerField(null=True, blank=True, unique=True)
    event = models.OneToOneField(
        AuditEvent, on_delete=models.DO_NOTHING, db_constraint=False, related_name="seal"
    )
    digest = models.CharField(max_length=64)
    chain = models.CharField(max_length=64, blank=True, default="")


# The derived vector projection (made by ``memory.vectors`` with ``memory.embeddings``).


class EntryEmbedding(models.Model):
    """One derived vector: the embedding of a version's body under one provider."""

    provider = models.CharField(max_length=64)
    content_hash = models.CharField(max_length=64)
    dimensions = models.PositiveSmallIntegerField()
    # float32, little-endian, unit length.
    vector = models.BinaryField()

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "content_hash"], name="uniq_embedding_per_content"
            )
        ]


class IndexedVector(models.Model):
    """A version whose vector the index holds, and the provider that made it."""

    version = models.OneToOneField(
        "memory.EntryVersion",
        primary_key=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    memory_id = models.BigIntegerField(db_index=True)
    provider = models.CharField(max_length=64)

    class Meta:
        app_label = "memory"


class MaintenanceRunQuerySet(models.QuerySet["MaintenanceRun"]):
    def for_memory(self, memory: Memory) -> MaintenanceRunQuerySet:
        return self.filter(memory=memory)

    def visible_to(self, actor: Actor) -> MaintenanceRunQuerySet:
        if actor.memory_ids is None:
            return self
        return self.filter(memory_id__in=actor.memory_ids)


class MaintenanceRun(AppendOnlyModel):
    """One execution of a background job (L1 decay scan, projection rebuild, …).

    Written exactly once, when the run has finished: the job works first (its revisions are
    the authoritative record of what changed) and then appends this row with its counts and a
    bounded list of candidates / actions. So the row is append-only like every other record
    (PostgreSQL refuses UPDATE and DELETE by trigger) and a run that crashed leaves no row,
    only whatever revisions it had committed, each of which is complete on its own.
    """

    #: Most candidates / actions kept on one run (the counts cover everything).
    MAX_ITEMS = 200

    memory = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="maintenance_runs", db_index=False
    )
    job = models.CharField(max_length=32)
    dry_run = models.BooleanField(default=True)
    parameters = models.JSONField(default=dict, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    # At most MAX_ITEMS dicts: {entry_id, version, score?, action}.
    items = models.JSONField(default=list, blank=True)
    items_truncated = models.BooleanField(default=False)
    actor_type = models.CharField(max_length=8, choices=ActorType.choices)
    actor_id = models.CharField(max_length=200)
    actor_label = models.CharField(max_length=200)
    correlation_id = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()

    objects = MaintenanceRunQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["memory", "job", "id"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(finished_at__gte=models.F("started_at")),
                name="maintenance_run_finished_after_start",
            )
        ]

    def __str__(self) -> str:
        return f"run {self.pk} {self.job} ({'dry' if self.dry_run else 'real'})"


class BatchImportKey(models.Model):
    """An ``Idempotency-Key`` a writer sent with a batch add (``entries/batch``), the hash of
    its request and the response it got: the same key and body answer the same response again,
    another body under the key is 409 ``idempotency_key_reused``. Honoured at least
    :data:`BATCH_KEY_TTL_HOURS`; a batch that stores a key deletes the expired ones."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+", db_index=False)
    submitted_by = models.CharField(max_length=200)
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    response = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "submitted_by", "key"], name="uniq_batch_import_key"
            )
        ]
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return f"{self.submitted_by}:{self.key}"


#: How long a batch's ``Idempotency-Key`` is honoured at least.
BATCH_KEY_TTL_HOURS = 24
