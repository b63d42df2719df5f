"""The response bodies of the memory API, for the OpenAPI document.

Each serializer mirrors one ``*_out`` presenter (``memory.presenters``); they only document —
the views build their bodies with the presenters. ``RESPONSES`` maps (view class name, method)
to the statuses and bodies that operation answers with on success; ``lib.schema`` adds the
error responses and the schemathesis run in the suite checks every real response against them.
Fields not listed here may appear (objects are open), fields listed here must be as typed.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers as s

from ..models import HeadState

Null: dict[str, Any] = {"allow_null": True}
Opt: dict[str, Any] = {"required": False}


def cursor_page(name: str, item: type[s.Serializer]) -> type[s.Serializer]:
    """The body ``name`` of a cursor-paginated list: ``items`` of ``item``, then
    ``next_cursor`` (null on the last page)."""
    fields = {"items": item(many=True), "next_cursor": s.CharField(**Null)}
    return type(name, (s.Serializer,), {"__module__": item.__module__, **fields})


class MemoryOut(s.Serializer):
    slug = s.CharField()
    name = s.CharField()
    policy = s.JSONField(help_text="The Memory's policy (API.md, policy keys).")
    head = s.IntegerField(help_text="Number of the latest revision (0 = none yet).")
    created_at = s.DateTimeField()


class DeclarationOut(s.Serializer):
    authority = s.CharField()
    verification = s.CharField()
    declaration_version = s.IntegerField(**Null)
    declared_at = s.DateTimeField(**Opt)


class SourceOut(s.Serializer):
    name = s.CharField()
    description = s.CharField(allow_blank=True)
    declaration = DeclarationOut()
    declarations = DeclarationOut(many=True)


class DeclarationCreated(s.Serializer):
    name = s.CharField()
    declaration_version = s.IntegerField()
    authority = s.CharField()
    verification = s.CharField()


class EvidenceSnapshot(s.Serializer):
    authority = s.CharField()
    verification = s.CharField()
    declaration_version = s.IntegerField(**Null)


class EvidenceOut(s.Serializer):
    source = s.CharField()  # type: ignore[assignment]
    ref = s.CharField()
    observed_at = s.DateTimeField(**Null)
    quote = s.CharField(allow_blank=True, **Null)
    snapshot = EvidenceSnapshot()


class LifecycleOut(s.Serializer):
    validity = s.CharField()
    validity_reason = s.CharField(allow_blank=True, **Null)
    successor_entry = s.CharField(**Null)
    importance = s.IntegerField(**Null)
    evidence_strength = s.CharField(**Null)
    recorded_at = s.DateTimeField(**Null)
    effective_at = s.DateTimeField(**Null)
    time_known = s.BooleanField(**Null)
    pinned = s.BooleanField()
    auto_action_reason = s.CharField(allow_blank=True, **Null)
    recall_count = s.IntegerField(help_text="Recalls folded from recall events (when enabled).")
    last_recalled_at = s.DateTimeField(**Null)


class GovernanceOut(s.Serializer):
    """An entry's governance fields (spec 004) and whether it is due for re-checking."""

    owner = s.CharField(**Null, help_text="A user or team name.")
    confidence = s.FloatField(**Null, help_text="0..1.")
    review_at = s.DateTimeField(**Null, help_text="When the fact must be re-checked.")
    review_due = s.BooleanField(help_text="review_at has passed: re-check, then confirm.")


class EntryOut(GovernanceOut):
    entry_id = s.CharField()
    kind = s.CharField()
    tier = s.CharField()
    session_id = s.CharField(**Null)
    sensitivity = s.CharField()
    current_state = s.BooleanField()
    state = s.CharField(help_text="active · inactive · candidate · quarantined")
    state_reason = s.CharField(allow_blank=True, **Null)
    version = s.IntegerField()
    content_hash = s.CharField()
    body = s.CharField(allow_blank=True)
    evidence = EvidenceOut(many=True)
    lifecycle = LifecycleOut(**Null)


EntryPage = cursor_page("EntryPage", EntryOut)


class NearDuplicate(s.Serializer):
    entry_id = s.CharField(**Null)
    score = s.FloatField()
    relation = s.ChoiceField(choices=["duplicate_of", "near_duplicate_of"])
    method = s.ChoiceField(
        choices=["cosine", "lexical"],
        help_text="What scored the pair: the embedding model's cosine when it reads both texts, "
        "else word overlap (Jaccard); each is judged on its own thresholds.",
    )
    claimed = s.BooleanField(required=False, help_text="The entry the writer named.")


class WriteResult(s.Serializer):
    entry_id = s.CharField()
    version = s.IntegerField()
    content_hash = s.CharField()
    created = s.BooleanField()
    revision = s.IntegerField(**Opt, help_text="Absent when nothing was written.")
    reason = s.CharField(**Opt, help_text="Why nothing was written, e.g. exact_duplicate.")
    state = s.ChoiceField(
        choices=HeadState.choices,
        **Opt,
        help_text="The entry's state after the write: `candidate` under admission review.",
    )


class EntryCreated(WriteResult):
    near_duplicates = NearDuplicate(many=True)
    proposal = s.IntegerField(
        **Opt,
        help_text=(
            "The proposal filed for this write: the admission proposal of a candidate, or the "
            "consolidation of a duplicate."
        ),
    )


class EntryReleased(WriteResult):
    proposal = s.IntegerField(**Opt, help_text="A released candidate's new admission proposal.")


class EntryStateChanged(WriteResult):
    state = s.ChoiceField(choices=HeadState.choices)


class EntryPinned(WriteResult):
    pinned = s.BooleanField()


class VersionOut(s.Serializer):
    version = s.IntegerField()
    body = s.CharField(allow_blank=True)
    content_hash = s.CharField()
    predecessor = s.IntegerField(**Null)
    revision = s.IntegerField()
    recorded_at = s.DateTimeField()
    effective_at = s.DateTimeField(**Null)
    evidence = EvidenceOut(many=True)
    is_head = s.BooleanField()
    status = s.CharField()
    lifecycle_reason = s.CharField(allow_blank=True, **Null)
    replaced_by_revision = s.IntegerField(**Null)


class VersionDetail(VersionOut):
    entry_id = s.CharField()


class VersionList(s.Serializer):
    entry_id = s.CharField()
    state = s.CharField()
    items = VersionOut(many=True)


class SessionEnded(s.Serializer):
    session_id = s.CharField()
    revision = s.IntegerField(**Null)
    retired = s.ListField(child=s.CharField(**Null), help_text="Entry ids retired.")


class RelationOut(s.Serializer):
    id = s.IntegerField()
    kind = s.CharField()
    from_entry = s.CharField(**Null)
    to_entry = s.CharField(**Null)
    authoritative = s.BooleanField()


class ActorOut(s.Serializer):
    type = s.CharField()
    id = s.CharField()
    label = s.CharField(allow_blank=True)  # type: ignore[assignment]
    on_behalf_of = s.CharField(**Null, **Opt)


class RevisionChangeOut(s.Serializer):
    entry_id = s.CharField(**Null)
    from_version = s.IntegerField(**Null)
    to_version = s.IntegerField()
    from_state = s.CharField(**Null)
    to_state = s.CharField()
    state_reason = s.CharField(allow_blank=True, **Null)
    attributes = s.JSONField(**Opt)


class RevisionOut(s.Serializer):
    number = s.IntegerField()
    kind = s.CharField()
    actor = ActorOut()
    reason = s.CharField(allow_blank=True)
    recorded_at = s.DateTimeField()
    correlation_id = s.CharField(allow_blank=True)
    proposal = s.IntegerField(**Null)
    operation = s.IntegerField(**Null)
    changes = RevisionChangeOut(many=True)
    hidden_changes = s.IntegerField(**Opt)


class RevisionPage(s.Serializer):
    head = s.IntegerField()
    items = RevisionOut(many=True)
    next_since_revision = s.IntegerField(**Null)


class ProvenanceOut(s.Serializer):
    source = s.CharField(help_text="The registered source name.")  # type: ignore[assignment]
    authority = s.CharField(
        help_text="The source's declared authority when the evidence was written (untrusted · "
        "user_asserted · repository_attested · system_attested)."
    )
    observed_at = s.DateTimeField(**Null, help_text="When the evidence was observed, if given.")


class RecalledOut(GovernanceOut):
    """What every hit and Context Pack item says of where it came from, and whether it is due
    for re-checking."""

    kind = s.CharField()
    tier = s.CharField()
    session_id = s.CharField(**Null)
    effective_at = s.DateTimeField(
        **Null,
        help_text="When the fact took effect: the write's effective_at, else its evidence's "
        "latest observed_at; null when unknown.",
    )
    recorded_at = s.DateTimeField(**Null, help_text="When the server recorded this version.")
    provenance = ProvenanceOut(
        many=True, help_text="One per citation of the version's evidence, in evidence order."
    )


class HitOut(RecalledOut):
    entry_id = s.CharField(**Null)
    version = s.IntegerField()
    body = s.CharField(allow_blank=True)
    score = s.FloatField(help_text="The plain RRF score.")
    channels = s.JSONField()
    lifecycle = s.JSONField()


class SearchOut(s.Serializer):
    hits = HitOut(many=True)
    trace = s.JSONField(**Opt, help_text="Reviewers, auditors and staff only.")


class PackItem(RecalledOut):
    entry_id = s.CharField(**Null)
    version = s.IntegerField()
    label = s.CharField(help_text="current · history · conflict")  # type: ignore[assignment]
    bytes = s.IntegerField()
    truncated = s.BooleanField()
    lifecycle = s.JSONField()


class ContextPackOut(s.Serializer):
    text = s.CharField(allow_blank=True)
    items = PackItem(many=True)
    bytes = s.IntegerField()


class MaintenanceStarted(s.Serializer):
    run = s.IntegerField(**Null, help_text="The finished run; null while queued.")
    job = s.CharField()
    dry_run = s.BooleanField()
    status = s.CharField(help_text="finished · queued")
    counts = s.JSONField(**Opt)
    task_id = s.CharField(**Opt)


class RunSummary(s.Serializer):
    id = s.IntegerField()
    job = s.CharField()
    dry_run = s.BooleanField()
    status = s.CharField()
    counts = s.JSONField()
    proposals = s.ListField(child=s.IntegerField())
    started_at = s.DateTimeField()
    finished_at = s.DateTimeField()


RunPage = cursor_page("RunPage", RunSummary)


class RunOut(s.Serializer):
    id = s.IntegerField()
    memory = s.CharField()
    job = s.CharField()
    dry_run = s.BooleanField()
    status = s.CharField()
    proposals = s.ListField(child=s.IntegerField())
    parameters = s.JSONField()
    counts = s.JSONField()
    items = s.ListField(child=s.JSONField())
    items_hidden = s.IntegerField()
    items_truncated = s.BooleanField()


class ConfirmedOut(WriteResult, GovernanceOut):
    """The entry after ``confirm`` or ``require-reverification``: same version, new review date."""


class DueItem(GovernanceOut):
    entry_id = s.CharField()
    kind = s.CharField()
    tier = s.CharField()
    version = s.IntegerField()
    body = s.CharField(allow_blank=True)
    recall_count = s.IntegerField()
    last_recalled_at = s.DateTimeField(**Null)


DuePage = cursor_page("DuePage", DueItem)


class InventoryOut(s.Serializer):
    memory = s.CharField()
    entries = s.IntegerField()
    active = s.IntegerField()
    inactive = s.IntegerField()
    inactive_share = s.FloatField()
    importance = s.JSONField()
    auto_deactivations = s.JSONField()
    near_duplicates = s.JSONField()
    pending_proposals = s.JSONField()
    rejected_proposals = s.JSONField(help_text="{kind: {rejection reason: n}}")
    alerts = s.ListField(child=s.JSONField())


def ok(serializer: Any, description: str = "") -> Any:
    return OpenApiResponse(serializer, description=description) if description else serializer


RESPONSES: dict[tuple[str, str], dict[int, Any]] = {
    ("MemoryCreateApi", "post"): {201: MemoryOut},
    ("MemoryDetailApi", "get"): {200: MemoryOut},
    ("MemoryDetailApi", "patch"): {200: MemoryOut},
    ("SourceCreateApi", "post"): {201: SourceOut},
    ("SourceDetailApi", "get"): {200: SourceOut},
    ("SourceDeclareApi", "post"): {201: DeclarationCreated},
    ("EntryListCreateApi", "get"): {200: EntryPage},
    ("EntryListCreateApi", "post"): {
        201: ok(EntryCreated, "A new entry (or a candidate awaiting admission)."),
        200: ok(WriteResult, "An exact duplicate of an active entry: nothing written."),
    },
    ("EntryDetailApi", "get"): {200: EntryOut},
    ("EntryReviseApi", "post"): {
        201: ok(WriteResult, "A new version."),
        200: ok(WriteResult, "Nothing changed: no version written."),
    },
    ("EntryForgetApi", "post"): {200: EntryStateChanged},
    ("EntryReactivateApi", "post"): {200: EntryStateChanged},
    ("EntryPinApi", "post"): {200: EntryPinned},
    ("EntryQuarantineApi", "post"): {200: WriteResult},
    ("EntryReleaseApi", "post"): {200: EntryReleased},
    ("EntryVersionsApi", "get"): {200: VersionList},
    ("EntryVersionDetailApi", "get"): {200: VersionDetail},
    ("SessionEndApi", "post"): {200: SessionEnded},
    ("RelationCreateApi", "post"): {201: RelationOut},
    ("RevisionListApi", "get"): {200: RevisionPage},
    ("RevisionDetailApi", "get"): {200: RevisionOut},
    ("SearchApi", "post"): {200: SearchOut},
    ("ContextPackApi", "post"): {200: ContextPackOut},
    ("MaintenanceStartApi", "post"): {202: MaintenanceStarted},
    ("MaintenanceRunListApi", "get"): {200: RunPage},
    ("MaintenanceRunDetailApi", "get"): {200: RunOut},
    ("InventoryApi", "get"): {200: InventoryOut},
    ("EntryConfirmApi", "post"): {200: ConfirmedOut},
    ("EntryRequireReverificationApi", "post"): {200: ConfirmedOut},
    ("DueListApi", "get"): {200: DuePage},
}
