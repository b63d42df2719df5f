"""Actions of the memory core: the only code that writes memory models.

Lock order, everywhere: the Memory row (``select_for_update``), then proposal rows, then entry
heads. Only :func:`write_revision` changes heads; every public action here is
``@transaction.atomic(durable=True)``, validates and scans its input *before* taking the lock, and
re-checks state after taking it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lib.correlation import current_correlation_id

from . import audit, hooks, lifecycle
from .actors import Actor
from .admission import clean_body, clean_id, clean_text
from .dedupe import check_admission
from .exceptions import (
    EntryInactive,
    EntryStateConflict,
    Forbidden,
    MemoryExists,
    NotFound,
    TooLarge,
    ValidationFailed,
    VersionConflict,
)
from .models import (
    AUTHORITATIVE_RELATIONS,
    Authority,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    HeadState,
    Kind,
    Memory,
    PinCategory,
    Relation,
    RelationKind,
    Revision,
    RevisionChange,
    RevisionKind,
    Sensitivity,
    Source,
    SourceDeclaration,
    Tier,
    Verification,
)
from .text import content_hash, searchable_text

POLICY_KEYS = {
    "quality_ranking",
    "freshness",
    "retention_days",
    "importance_floor",
    "l1_enabled",
    "l1_max_per_run",
    "tau_same",
    "tau_similar",
    "capacity_low_entries",
    "approvals_required",
    "webhook_url",
    "promotion_min_sessions",
}


# --- Inputs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceInput:
    source: str
    ref: str
    observed_at: datetime | None = None
    quote: str = ""

    @property
    def identity(self) -> str:
        """What the content hash and the evidence union compare."""
        return f"{self.source}|{self.ref}"


@dataclass(frozen=True)
class ResolvedEvidence:
    input: EvidenceInput
    source: Source
    declaration: SourceDeclaration | None


def clean_evidence(raw: Any, *, field_name: str = "evidence") -> list[EvidenceInput]:
    """Validate a list of ``{source, ref, observed_at?, quote?}`` citations."""
    from django.conf import settings

    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValidationFailed(details={field_name: ["Must be a list."]})
    if len(raw) > settings.STEWARD_MAX_EVIDENCE:
        raise TooLarge(
            f"At most {settings.STEWARD_MAX_EVIDENCE} evidence references.",
            details={field_name: [f"At most {settings.STEWARD_MAX_EVIDENCE} references."]},
        )
    out: list[EvidenceInput] = []
    for i, item in enumerate(raw):
        where = f"{field_name}[{i}]"
        if not isinstance(item, dict):
            raise ValidationFailed(details={where: ["Must be an object."]})
        unknown = set(item) - {"source", "ref", "observed_at", "quote"}
        if unknown:
            raise ValidationFailed(details={where: [f"Unknown field(s): {sorted(unknown)}."]})
        source = clean_id(item.get("source"), field=f"{where}.source")
        ref = clean_text(item.get("ref"), field=f"{where}.ref", required=True, limit=2000)
        observed = item.get("observed_at")
        observed_at = None
        if observed not in (None, ""):
            observed_at = parse_datetime(observed) if isinstance(observed, str) else None
            if observed_at is None:
                raise ValidationFailed(details={f"{where}.observed_at": ["Not an ISO datetime."]})
            if timezone.is_naive(observed_at):
                observed_at = timezone.make_aware(observed_at, UTC)
        quote = clean_text(item.get("quote"), field=f"{where}.quote", limit=2000)
        out.append(EvidenceInput(source=source, ref=ref, observed_at=observed_at, quote=quote))
    return out


def resolve_evidence(items: Sequence[EvidenceInput]) -> list[ResolvedEvidence]:
    """Attach each citation to its registered source and that source's declaration *now*."""
    names = {i.source for i in items}
    sources = {s.name: s for s in Source.objects.filter(name__in=names)}
    missing = sorted(names - set(sources))
    if missing:
        raise ValidationFailed(
            f"Unknown source(s): {', '.join(missing)}. Register them first.",
            details={"evidence": [f"unknown source: {m}" for m in missing]},
        )
    latest: dict[int, SourceDeclaration] = {}
    for decl in SourceDeclaration.objects.filter(source__in=sources.values()).order_by(
        "source_id", "version"
    ):
        latest[decl.source_id] = decl
    return [ResolvedEvidence(i, sources[i.source], latest.get(sources[i.source].pk)) for i in items]


def _dedupe_evidence(items: Iterable[EvidenceInput]) -> list[EvidenceInput]:
    seen: dict[str, EvidenceInput] = {}
    for item in items:
        seen.setdefault(item.identity, item)
    return list(seen.values())


def evidence_inputs_of(version: EntryVersion) -> list[EvidenceInput]:
    return [
        EvidenceInput(ev.source.name, ev.ref, ev.observed_at, ev.quote)
        for ev in version.evidence.select_related("source").order_by("position")
    ]


# --- The revision writer --------------------------------------------------------------------


@dataclass
class NewBody:
    body: str
    content_hash: str
    evidence: list[ResolvedEvidence] = field(default_factory=list)
    effective_at: datetime | None = None


@dataclass
class Change:
    """One entry's part in a revision. ``new_body`` creates a version; ``version`` points the
    head at an existing one (reactivate, compensate); neither keeps the head version."""

    entry: Entry
    to_state: str = HeadState.ACTIVE
    new_body: NewBody | None = None
    version: EntryVersion | None = None
    state_reason: str = ""
    restart_interval: bool = False
    # Restores a recorded interval start exactly (compensation); wins over restart_interval.
    interval_started_at: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class NewRelation:
    kind: str
    from_entry: Entry
    to_entry: Entry
    score: float | None = None
    evidence: list[Any] = field(default_factory=list)


def lock_memory(memory_pk: int) -> Memory:
    """Take the Memory lock (first in the lock order) and return the fresh row."""
    return Memory.objects.select_for_update().get(pk=memory_pk)


def write_revision(
    memory: Memory,
    *,
    actor: Actor,
    kind: str,
    reason: str = "",
    changes: Sequence[Change],
    relations: Sequence[NewRelation] = (),
    retire: Sequence[Relation] = (),
    proposal_id: int | None = None,
    operation_id: int | None = None,
) -> Revision:
    """Append one revision and apply it: versions, changes, heads, relations, projection.

    Precondition: the caller holds the Memory lock (``lock_memory``) inside a transaction and
    has checked its expectations against the heads. Numbers are gap-free because the Memory
    row's ``head`` is read and bumped under that lock.
    """
    now = timezone.now()
    number = memory.head + 1
    revision = Revision.objects.create(
        memory=memory,
        number=number,
        kind=kind,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_label=actor.label,
        on_behalf_of=actor.on_behalf_of,
        reason=reason,
        recorded_at=now,
        correlation_id=current_correlation_id(),
        proposal_id=proposal_id,
        operation_id=operation_id,
    )
    entry_pks = [c.entry.pk for c in changes]
    heads = {
        h.entry_id: h for h in Head.objects.filter(entry_id__in=entry_pks).select_related("version")
    }
    head_changed: list[int] = []
    change_rows: list[RevisionChange] = []
    new_heads: list[Head] = []
    updated_heads: list[Head] = []
    for change in changes:
        head = heads.get(change.entry.pk)
        from_version = head.version if head else None
        to_version = from_version
        if change.new_body is not None:
            to_version = _create_version(
                memory, change.entry, change.new_body, from_version, revision
            )
        elif change.version is not None:
            to_version = change.version
        if to_version is None:
            raise ValueError("a change to an entry without a head must bring a body")
        change_rows.append(
            RevisionChange(
                revision=revision,
                entry=change.entry,
                from_version=from_version,
                to_version=to_version,
                from_state=head.state if head else "",
                to_state=change.to_state,
                state_reason=change.state_reason,
                attributes=change.attributes,
            )
        )
        if head is None:
            head = Head(
                entry=change.entry,
                memory=memory,
                version=to_version,
                state=change.to_state,
                state_reason=change.state_reason,
                revision=revision,
                interval_started_at=now,
            )
            _apply_attributes(head, change.attributes)
            new_heads.append(head)
            head_changed.append(change.entry.pk)
            continue
        if head.version_id != to_version.pk or head.state != change.to_state:
            head_changed.append(change.entry.pk)
        head.version = to_version
        head.state = change.to_state
        head.state_reason = change.state_reason
        head.revision = revision
        if change.interval_started_at is not None:
            head.interval_started_at = change.interval_started_at
        elif change.restart_interval:
            head.interval_started_at = now
        _apply_attributes(head, change.attributes)
        updated_heads.append(head)
    RevisionChange.objects.bulk_create(change_rows)
    if new_heads:
        Head.objects.bulk_create(new_heads)
    if updated_heads:
        Head.objects.bulk_update(
            updated_heads,
            [
                "version",
                "state",
                "state_reason",
                "revision",
                "interval_started_at",
                "pinned",
                "pin_category",
                "importance_override",
            ],
        )
    touched = set(entry_pks)
    if relations:
        Relation.objects.bulk_create(
            [
                Relation(
                    memory=memory,
                    kind=r.kind,
                    from_entry=r.from_entry,
                    to_entry=r.to_entry,
                    authoritative=r.kind in AUTHORITATIVE_RELATIONS,
                    score=r.score,
                    evidence=r.evidence,
                    revision=revision,
                    created_by=actor.id,
                )
                for r in relations
            ]
        )
        touched |= {r.from_entry.pk for r in relations} | {r.to_entry.pk for r in relations}
    if retire:
        Relation.objects.filter(pk__in=[r.pk for r in retire], retired_by__isnull=True).update(
            retired_by=revision
        )
        touched |= {r.from_entry_id for r in retire} | {r.to_entry_id for r in retire}
    memory.head = number
    memory.save(update_fields=["head"])
    lifecycle.refresh(touched)
    # A new supersedes edge changes its target's validity without touching its head; pending
    # proposals built on the target's old standing must go stale too.
    superseded = [
        r.to_entry.pk
        for r in relations
        if r.kind == RelationKind.SUPERSEDES and r.to_entry.pk not in head_changed
    ]
    if head_changed or superseded:
        hooks.heads_changed(memory, revision, [*head_changed, *superseded])
    return revision


def _apply_attributes(head: Head, attributes: dict[str, Any]) -> None:
    if "pinned" in attributes:
        head.pinned = bool(attributes["pinned"])
        head.pin_category = attributes.get("pin_category") or ""
    if "importance_override" in attributes:
        head.importance_override = attributes["importance_override"]


def _create_version(
    memory: Memory,
    entry: Entry,
    new: NewBody,
    predecessor: EntryVersion | None,
    revision: Revision,
) -> EntryVersion:
    version = EntryVersion.objects.create(
        memory=memory,
        entry=entry,
        number=(predecessor.number + 1) if predecessor else 1,
        body=new.body,
        content_hash=new.content_hash,
        predecessor=predecessor,
        revision=revision,
        effective_at=new.effective_at,
        searchable_text=searchable_text(new.body),
    )
    Evidence.objects.bulk_create(
        [
            Evidence(
                version=version,
                position=i,
                source=ev.source,
                ref=ev.input.ref,
                observed_at=ev.input.observed_at,
                quote=ev.input.quote,
                declaration_version=ev.declaration.version if ev.declaration else None,
                authority=ev.declaration.authority if ev.declaration else Authority.UNTRUSTED,
                verification=(
                    ev.declaration.verification if ev.declaration else Verification.UNKNOWN
                ),
            )
            for i, ev in enumerate(new.evidence)
        ]
    )
    return version


# --- Reads used by actions ------------------------------------------------------------------


def get_memory(actor: Actor, slug: str) -> Memory:
    """The Memory ``slug`` if the actor may see it; 404 otherwise (no existence leak)."""
    memory = Memory.objects.filter(slug=slug).first()
    if memory is None or not actor.sees_memory(memory.pk):
        raise NotFound(f"No memory '{slug}'.")
    return memory


def get_entry(actor: Actor, memory: Memory, uid: str) -> Entry:
    """The entry ``uid`` of ``memory`` if it is within the actor's clearance; 404 otherwise."""
    entry = Entry.objects.for_memory(memory).visible_to(actor).filter(uid=uid).first()
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    return entry


def _locked_head(entry: Entry) -> Head:
    return Head.objects.select_related("version").get(entry=entry)


def _require_writer(actor: Actor) -> None:
    if not actor.can_write_entries:
        raise Forbidden("Your role may not write entries.")


# --- Memories and sources -------------------------------------------------------------------


def clean_policy(policy: Any) -> dict[str, Any]:
    if policy is None:
        return {}
    if not isinstance(policy, dict):
        raise ValidationFailed(details={"policy": ["Must be an object."]})
    unknown = sorted(set(policy) - POLICY_KEYS)
    if unknown:
        raise ValidationFailed(details={"policy": [f"Unknown key(s): {unknown}."]})
    for key in ("tau_same", "tau_similar"):
        if key in policy and not (
            isinstance(policy[key], int | float) and 0 <= float(policy[key]) <= 1
        ):
            raise ValidationFailed(details={f"policy.{key}": ["A number between 0 and 1."]})
    for key in ("quality_ranking", "l1_enabled"):
        if key in policy and not isinstance(policy[key], bool):
            raise ValidationFailed(details={f"policy.{key}": ["Must be true or false."]})
    for key, low, high in (
        ("importance_floor", 0, 3),
        ("l1_max_per_run", 1, 10_000),
        ("capacity_low_entries", 1, 1_000_000),
        ("promotion_min_sessions", 2, 100),
    ):
        if key in policy and not _int_in(policy[key], low, high):
            raise ValidationFailed(details={f"policy.{key}": [f"An integer from {low} to {high}."]})
    _check_int_map(policy, "retention_days", 1, 36_500)
    _check_int_map(policy, "approvals_required", 1, 10)
    fresh = policy.get("freshness")
    if fresh is not None:
        ok = isinstance(fresh, dict) and set(fresh) <= {"alpha", "half_life_days"}
        alpha, half = (fresh or {}).get("alpha", 0.5), (fresh or {}).get("half_life_days", 30)
        ok = ok and _num_in(alpha, 0, 1) and _num_in(half, 0.001, 36_500)
        if not ok:
            raise ValidationFailed(
                details={"policy.freshness": ["{alpha: 0..1, half_life_days: > 0}."]}
            )
    url = policy.get("webhook_url")
    if url not in (None, "") and not (
        isinstance(url, str) and url.startswith(("https://", "http://")) and len(url) <= 2000
    ):
        raise ValidationFailed(details={"policy.webhook_url": ["An http(s) URL."]})
    return policy


def _int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _num_in(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def _check_int_map(policy: dict[str, Any], key: str, low: int, high: int) -> None:
    value = policy.get(key)
    if value is None:
        return
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _int_in(v, low, high) for k, v in value.items()
    ):
        raise ValidationFailed(
            details={f"policy.{key}": [f"An object of integers from {low} to {high}."]}
        )


@transaction.atomic(durable=True)
def create_memory(*, actor: Actor, slug: str, name: str, policy: Any = None) -> Memory:
    """Create a Memory. Reviewers without a Memory scope, and staff, may."""
    if not (actor.is_staff or (actor.is_reviewer and actor.memory_ids is None)):
        raise Forbidden("Only a reviewer without a Memory scope, or staff, may create a Memory.")
    cleaned = clean_policy(policy)
    if Memory.objects.filter(slug=slug).exists():
        raise MemoryExists(f"A memory '{slug}' already exists.")
    try:
        with transaction.atomic():
            memory = Memory.objects.create(slug=slug, name=name, policy=cleaned)
    except IntegrityError as exc:
        raise MemoryExists(f"A memory '{slug}' already exists.") from exc
    audit.record(
        "memory.created", actor=actor, memory=memory, label=name, payload={"policy": cleaned}
    )
    return memory


@transaction.atomic(durable=True)
def update_memory_policy(memory: Memory, *, actor: Actor, policy: Any) -> Memory:
    """Merge ``policy`` keys into the Memory's policy (reviewers)."""
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may change a Memory's policy.")
    cleaned = clean_policy(policy)
    memory = lock_memory(memory.pk)
    before = memory.policy
    memory.policy = {**memory.policy, **cleaned}
    memory.save(update_fields=["policy"])
    audit.record(
        "memory.policy_changed",
        actor=actor,
        memory=memory,
        label=memory.name,
        payload={"before": before, "after": memory.policy},
    )
    return memory


def _clean_declaration(raw: Any) -> tuple[str, str]:
    if not isinstance(raw, dict):
        raise ValidationFailed(details={"declaration": ["Must be an object."]})
    authority = raw.get("authority", Authority.UNTRUSTED)
    verification = raw.get("verification", Verification.UNKNOWN)
    if authority not in Authority.values:
        raise ValidationFailed(details={"authority": [f"One of {Authority.values}."]})
    if verification not in Verification.values:
        raise ValidationFailed(details={"verification": [f"One of {Verification.values}."]})
    return authority, verification


def _check_may_declare(actor: Actor, authority: str, verification: str) -> None:
    # Only a human may raise a source above untrusted/unknown: an agent's own claim can
    # never make its evidence count as attested.
    raised = authority != Authority.UNTRUSTED or verification == Verification.VERIFIED
    if raised and not actor.is_reviewer:
        raise Forbidden("Only reviewers may declare a source trusted or verified.")


@transaction.atomic(durable=True)
def register_source(
    *, actor: Actor, name: str, description: str = "", declaration: Any = None
) -> Source:
    """Register a source, optionally with its first declaration."""
    if not actor.can_write_entries and not actor.is_reviewer:
        raise Forbidden("Your role may not register sources.")
    name = clean_id(name, field="name")
    description = clean_text(description, field="description")
    decl = _clean_declaration(declaration) if declaration is not None else None
    if decl:
        _check_may_declare(actor, *decl)
    if Source.objects.filter(name=name).exists():
        raise MemoryExists(f"A source '{name}' already exists.")
    source = Source.objects.create(name=name, description=description)
    if decl:
        SourceDeclaration.objects.create(
            source=source, version=1, authority=decl[0], verification=decl[1], declared_by=actor.id
        )
    audit.record(
        "source.registered",
        actor=actor,
        label=name,
        payload={"declaration": {"authority": decl[0], "verification": decl[1]} if decl else None},
    )
    return source


@transaction.atomic(durable=True)
def declare_source(source: Source, *, actor: Actor, declaration: Any) -> SourceDeclaration:
    """Append a new declaration version. Existing evidence keeps its snapshot."""
    if not actor.can_write_entries and not actor.is_reviewer:
        raise Forbidden("Your role may not declare sources.")
    authority, verification = _clean_declaration(declaration)
    _check_may_declare(actor, authority, verification)
    source = Source.objects.select_for_update().get(pk=source.pk)
    last = source.declarations.order_by("-version").first()
    decl = SourceDeclaration.objects.create(
        source=source,
        version=(last.version + 1) if last else 1,
        authority=authority,
        verification=verification,
        declared_by=actor.id,
    )
    audit.record(
        "source.declared",
        actor=actor,
        label=source.name,
        payload={"version": decl.version, "authority": authority, "verification": verification},
    )
    return decl


# --- Entry writes ---------------------------------------------------------------------------


@dataclass
class WriteResult:
    entry: Entry
    version: EntryVersion
    revision: Revision | None
    created: bool
    reason: str = ""
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)
    proposal_id: int | None = None


def _choice(value: Any, choices: type[Any], field_name: str, default: str) -> str:
    if value is None:
        return default
    if value not in choices.values:
        raise ValidationFailed(details={field_name: [f"One of {list(choices.values)}."]})
    return str(value)


def _clean_datetime(value: Any, field_name: str) -> datetime | None:
    if value in (None, ""):
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValidationFailed(details={field_name: ["Not an ISO 8601 datetime."]})
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


@transaction.atomic(durable=True)
def add_entry(
    memory: Memory,
    *,
    actor: Actor,
    body: Any,
    kind: Any,
    tier: Any = None,
    session_id: Any = None,
    current_state: Any = False,
    effective_at: Any = None,
    sensitivity: Any = None,
    evidence: Any = None,
    dedupe: bool = True,
    near_duplicate_of: Any = None,
) -> WriteResult:
    """Remember something new.

    Effects: a new entry with version 1 and an ``add`` revision; or, when kind + normalized body
    + evidence equal an *active* entry, nothing (``created=False``). A body equal to an inactive
    entry makes a new entry: a write never reactivates implicitly.
    Locks: the Memory row.
    """
    _require_writer(actor)
    if kind is None:
        raise ValidationFailed(details={"kind": ["This field is required."]})
    kind = _choice(kind, Kind, "kind", Kind.FACT)
    tier = _choice(tier, Tier, "tier", Tier.LONG)
    sensitivity = _choice(sensitivity, Sensitivity, "sensitivity", Sensitivity.INTERNAL)
    if not isinstance(current_state, bool):
        raise ValidationFailed(details={"current_state": ["Must be true or false."]})
    session = clean_id(session_id, field="session_id") if session_id not in (None, "") else ""
    if tier == Tier.SESSION and not session:
        raise ValidationFailed(details={"session_id": ["Session-tier entries need a session_id."]})
    text = clean_body(body)
    items = _dedupe_evidence(clean_evidence(evidence))
    when = _clean_datetime(effective_at, "effective_at")
    resolved = resolve_evidence(items)
    digest = content_hash(kind, text, [i.identity for i in items])

    memory = lock_memory(memory.pk)
    existing = (
        Head.objects.filter(
            memory=memory,
            state=HeadState.ACTIVE,
            version__content_hash=digest,
            entry__sensitivity__in=_visible(actor),
        )
        .select_related("entry", "version")
        .order_by("entry_id")
        .first()
    )
    if existing is not None:
        return WriteResult(
            entry=existing.entry,
            version=existing.version,
            revision=None,
            created=False,
            reason="exact_duplicate",
        )
    entry = Entry.objects.create(
        memory=memory,
        kind=kind,
        tier=tier,
        session_id=session,
        sensitivity=sensitivity,
        current_state=current_state,
    )
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.ADD,
        changes=[
            Change(
                entry=entry,
                new_body=NewBody(text, digest, resolved, when),
                restart_interval=True,
            )
        ],
    )
    head = Head.objects.select_related("version").get(entry=entry)
    result = WriteResult(entry=entry, version=head.version, revision=revision, created=True)
    audit.record(
        "entry.added",
        actor=actor,
        memory=memory,
        label=_label(text),
        revision=revision,
        entry_ids=[entry.uid],
        payload={"kind": kind, "tier": tier, "version": 1, "content_hash": digest},
    )
    if dedupe:
        result.near_duplicates = check_admission(
            memory, actor=actor, entry=entry, body=text, near_duplicate_of=near_duplicate_of
        )
    hooks.entry_admitted(
        memory=memory,
        actor=actor,
        result=result,
        dedupe=dedupe,
        near_duplicate_of=near_duplicate_of,
    )
    return result


def _visible(actor: Actor) -> list[str]:
    from .models import sensitivities_up_to

    return sensitivities_up_to(actor.clearance)


@transaction.atomic(durable=True)
def revise_entry(
    memory: Memory,
    *,
    actor: Actor,
    entry_uid: str,
    body: Any,
    evidence: Any = None,
    expected_version: Any = None,
    importance_override: Any = None,
) -> WriteResult:
    """Correct an entry: a new version whose evidence is the predecessor's ∪ the new.

    Refuses with 409 ``entry_inactive`` when the entry is inactive, 409 ``version_conflict``
    when ``expected_version`` is not the head. Nothing changes → no version, no revision.
    Locks: the Memory row.
    """
    _require_writer(actor)
    text = clean_body(body)
    items = clean_evidence(evidence)
    if expected_version is not None and (
        isinstance(expected_version, bool) or not isinstance(expected_version, int)
    ):
        raise ValidationFailed(details={"expected_version": ["Must be an integer."]})
    if importance_override is not None and (
        isinstance(importance_override, bool)
        or not isinstance(importance_override, int)
        or not 0 <= importance_override <= 3
    ):
        raise ValidationFailed(details={"importance_override": ["An integer from 0 to 3."]})

    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, entry_uid)
    head = _locked_head(entry)
    if head.state != HeadState.ACTIVE:
        raise EntryInactive(details={"state": head.state, "reason": head.state_reason})
    if expected_version is not None and expected_version != head.version.number:
        raise VersionConflict(
            details={"expected_version": expected_version, "head_version": head.version.number}
        )
    union = _dedupe_evidence([*evidence_inputs_of(head.version), *items])
    digest = content_hash(entry.kind, text, [i.identity for i in union])
    override_changes = (
        importance_override is not None and importance_override != head.importance_override
    )
    if digest == head.version.content_hash and not override_changes:
        return WriteResult(entry, head.version, None, created=False, reason="no_change")
    change = Change(entry=entry, state_reason=head.state_reason)
    if digest != head.version.content_hash:
        change.new_body = NewBody(text, digest, resolve_evidence(union), head.version.effective_at)
        change.restart_interval = True
    if override_changes:
        change.attributes = {"importance_override": importance_override}
    from_number = head.version.number
    revision = write_revision(memory, actor=actor, kind=RevisionKind.REVISE, changes=[change])
    head.refresh_from_db()
    audit.record(
        "entry.revised",
        actor=actor,
        memory=memory,
        label=_label(text),
        revision=revision,
        entry_ids=[entry.uid],
        payload={
            "from_version": from_number,
            "to_version": head.version.number,
            **({"importance_override": importance_override} if override_changes else {}),
        },
    )
    return WriteResult(entry, head.version, revision, created=change.new_body is not None)


@transaction.atomic(durable=True)
def forget_entry(memory: Memory, *, actor: Actor, entry_uid: str, reason: Any) -> WriteResult:
    """Retire an entry (head becomes inactive, same version). Undone by ``reactivate_entry``."""
    _require_writer(actor)
    why = clean_text(reason, field="reason", required=True)
    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, entry_uid)
    head = _locked_head(entry)
    if head.state != HeadState.ACTIVE:
        raise EntryInactive("The entry is already inactive.", details={"reason": head.state_reason})
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.FORGET,
        reason=why,
        changes=[Change(entry=entry, to_state=HeadState.INACTIVE, state_reason=why)],
    )
    audit.record(
        "entry.forgotten",
        actor=actor,
        memory=memory,
        label=_label(head.version.body),
        revision=revision,
        entry_ids=[entry.uid],
        payload={"version": head.version.number, "reason": why},
    )
    return WriteResult(entry, head.version, revision, created=False)


@transaction.atomic(durable=True)
def reactivate_entry(
    memory: Memory, *, actor: Actor, entry_uid: str, reason: Any = None
) -> WriteResult:
    """Make an inactive entry active again with the exact same version, in a new interval."""
    _require_writer(actor)
    why = clean_text(reason, field="reason")
    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, entry_uid)
    head = _locked_head(entry)
    if head.state == HeadState.ACTIVE:
        raise EntryStateConflict("The entry is already active.")
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.REACTIVATE,
        reason=why,
        changes=[Change(entry=entry, version=head.version, restart_interval=True)],
    )
    audit.record(
        "entry.reactivated",
        actor=actor,
        memory=memory,
        label=_label(head.version.body),
        revision=revision,
        entry_ids=[entry.uid],
        payload={"version": head.version.number, "reason": why, "was": head.state_reason},
    )
    return WriteResult(entry, head.version, revision, created=False)


@transaction.atomic(durable=True)
def pin_entry(
    memory: Memory,
    *,
    actor: Actor,
    entry_uid: str,
    pinned: Any,
    category: Any = None,
    reason: Any,
) -> WriteResult:
    """Pin or unpin an entry with a category. Pinning is a human decision: reviewers only."""
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may pin entries.")
    if not isinstance(pinned, bool):
        raise ValidationFailed(details={"pinned": ["Must be true or false."]})
    if pinned and category not in PinCategory.values:
        raise ValidationFailed(details={"category": [f"One of {list(PinCategory.values)}."]})
    why = clean_text(reason, field="reason", required=True)
    memory = lock_memory(memory.pk)
    entry = get_entry(actor, memory, entry_uid)
    head = _locked_head(entry)
    attributes = {"pinned": pinned, "pin_category": category if pinned else ""}
    if head.pinned == pinned and head.pin_category == attributes["pin_category"]:
        return WriteResult(entry, head.version, None, created=False, reason="no_change")
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.PIN,
        reason=why,
        changes=[
            Change(
                entry=entry,
                to_state=head.state,
                state_reason=head.state_reason,
                attributes=attributes,
            )
        ],
    )
    audit.record(
        "entry.pinned",
        actor=actor,
        memory=memory,
        label=_label(head.version.body),
        revision=revision,
        entry_ids=[entry.uid],
        payload={**attributes, "reason": why},
    )
    return WriteResult(entry, head.version, revision, created=False)


@dataclass
class SessionEndResult:
    revision: Revision | None
    retired: list[str]


@transaction.atomic(durable=True)
def end_session(memory: Memory, *, actor: Actor, session_id: Any) -> SessionEndResult:
    """Retire the session's active session-tier entries with reason ``session_end`` (one
    revision). Ending a session with nothing left to retire writes nothing."""
    _require_writer(actor)
    session = clean_id(session_id, field="session_id")
    memory = lock_memory(memory.pk)
    heads = list(
        Head.objects.filter(
            memory=memory,
            state=HeadState.ACTIVE,
            entry__session_id=session,
            entry__tier=Tier.SESSION,
        )
        .select_related("entry")
        .order_by("entry_id")
    )
    if not heads:
        return SessionEndResult(None, [])
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.SESSION_END,
        reason=f"session_end:{session}",
        changes=[
            Change(entry=h.entry, to_state=HeadState.INACTIVE, state_reason="session_end")
            for h in heads
        ],
    )
    retired = [h.entry.uid for h in heads]
    audit.record(
        "session.ended",
        actor=actor,
        memory=memory,
        label=session,
        revision=revision,
        entry_ids=retired,
        payload={"session_id": session, "retired": len(retired)},
    )
    return SessionEndResult(revision, retired)


@transaction.atomic(durable=True)
def record_conflict(
    memory: Memory, *, actor: Actor, from_entry: Any, to_entry: Any, evidence: Any = None
) -> Relation:
    """Record a ``conflicts_with`` observation. It annotates (validity becomes
    unresolved_conflict) but never changes heads, so it writes no revision."""
    _require_writer(actor)
    a_uid = clean_id(from_entry, field="from_entry")
    b_uid = clean_id(to_entry, field="to_entry")
    if a_uid == b_uid:
        raise ValidationFailed(details={"to_entry": ["An entry cannot conflict with itself."]})
    items = clean_evidence(evidence)
    resolve_evidence(items)
    memory = lock_memory(memory.pk)
    a = get_entry(actor, memory, a_uid)
    b = get_entry(actor, memory, b_uid)
    existing = Relation.objects.filter(
        memory=memory,
        kind=RelationKind.CONFLICTS_WITH,
        from_entry=a,
        to_entry=b,
        retired_by__isnull=True,
    ).first()
    if existing is not None:
        return existing
    relation = Relation.objects.create(
        memory=memory,
        kind=RelationKind.CONFLICTS_WITH,
        from_entry=a,
        to_entry=b,
        authoritative=False,
        evidence=[dataclasses.asdict(i) | {"observed_at": _iso(i.observed_at)} for i in items],
        created_by=actor.id,
    )
    lifecycle.refresh([a.pk, b.pk])
    audit.record(
        "relation.observed",
        actor=actor,
        memory=memory,
        label=f"{a.uid} conflicts_with {b.uid}",
        entry_ids=[a.uid, b.uid],
        payload={"relation": relation.pk, "kind": relation.kind, "evidence": len(items)},
    )
    return relation


def _label(body: str) -> str:
    """A short copied label for audit rows (the first line, trimmed)."""
    first = body.splitlines()[0] if body else ""
    return first[:117] + "…" if len(first) > 120 else first


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
