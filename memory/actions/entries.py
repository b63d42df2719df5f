"""Entry writes: add, revise, forget, reactivate, pin."""

from __future__ import annotations

import logging
from typing import Unpack

from django.db import transaction
from django.utils import timezone

from lib.wording import one_of

from .. import audit, effects, hooks, injection
from ..actors import Actor
from ..admission import clean_body, clean_text
from ..dedupe import Admission, find_near_duplicates
from ..exceptions import (
    AdmissionRejected,
    EntryCandidate,
    EntryInactive,
    EntryQuarantined,
    EntryStateConflict,
    Forbidden,
    ValidationFailed,
    VersionConflict,
)
from ..governance import ADMISSION_PENDING, AdmissionPolicy, is_rejected_admission
from ..models import (
    Authority,
    Entry,
    Head,
    HeadState,
    Memory,
    PinCategory,
    RevisionKind,
    sensitivities_up_to,
)
from ..permissions import require_reviewer, require_writer, require_writer_or_reviewer
from ..personal_data import refused_kinds
from ..text import content_hash
from .common import (
    WriteResult,
    label_of,
    lock_entry,
    write_entry_change,
)
from .evidence import (
    EvidenceArg,
    EvidenceInput,
    ResolvedEvidence,
    check_evidence_count,
    clean_evidence,
    dedupe_evidence,
    evidence_inputs_of,
    resolve_evidence,
)
from .new_entry import EntryFields, NewEntry, clean_new_entry
from .relations import record_admission
from .writer import Change, NewBody, lock_memory, write_revision

log = logging.getLogger(__name__)


def refuse_withheld(head: Head) -> None:
    """409 for a candidate (``entry_candidate``) or a quarantined entry (``entry_quarantined``):
    only their review decides what happens to them."""
    if head.state == HeadState.CANDIDATE:
        raise EntryCandidate(details={"state": head.state, "reason": head.state_reason})
    if head.state == HeadState.QUARANTINED:
        raise EntryQuarantined(details={"state": head.state, "reason": head.state_reason})


def add_entry(
    memory: Memory,
    *,
    actor: Actor,
    dedupe: bool = True,
    near_duplicate_of: str | None = None,
    **fields: Unpack[EntryFields],
) -> WriteResult:
    """Remember something new.

    Effects: a new entry with version 1 and an ``add`` revision; or, when kind + normalized body
    + evidence equal an *active* entry, nothing (``created=False``). A body equal to an inactive
    entry makes a new entry: a write never reactivates implicitly.

    Steps: admission (validation, secret scan, evidence resolution) and the near-duplicate check
    (candidate query, embeddings, scoring) run before any lock; then one durable transaction
    holds the Memory lock for the exact-duplicate check, the write and the observations; then
    the system's proposal intake runs in its own transaction — the write always proceeds.
    """
    require_writer(actor)
    new = clean_new_entry(refuse=refused_kinds(memory.policy), **fields)
    if new.sensitivity not in sensitivities_up_to(actor.clearance):
        # The key could not read the entry back: writing above one's clearance is refused.
        raise Forbidden(
            f"Your key's clearance is {actor.clearance}; it may not write a "
            f"{new.sensitivity} entry.",
            details={"sensitivity": [f"At most {actor.clearance} for this key."]},
        )
    resolved = resolve_evidence(new.evidence)
    admission = (
        find_near_duplicates(
            memory,
            actor=actor,
            body=new.body,
            near_duplicate_of=near_duplicate_of,
            content_hash=new.content_hash,
        )
        if dedupe
        else None
    )
    # The injection scan is plain text work: before the lock, like every other admission check.
    gate = AdmissionPolicy.of(memory.policy)
    findings = injection.scan(new.body) if gate.injection_scan else []
    result = _write_entry(memory, actor, new, resolved, admission, findings)
    if result.created and result.state == HeadState.CANDIDATE:
        _file_admission(memory, actor, result, findings if gate.injection_scan else None)
    if result.created and result.state == HeadState.ACTIVE:
        _after_admission(
            memory,
            actor,
            result,
            dedupe=dedupe,
            near_duplicate_of=near_duplicate_of,
            findings=findings,
        )
    return result


@transaction.atomic(durable=True)
def _write_entry(
    memory: Memory,
    actor: Actor,
    new: NewEntry,
    resolved: list[ResolvedEvidence],
    admission: Admission | None,
    findings: list[injection.Finding],
) -> WriteResult:
    """Under the Memory lock: the exact-duplicate no-op, the entry and its observations; under
    admission review (the locked row's policy decides) the entry is a candidate."""
    digest = new.content_hash
    memory = lock_memory(memory.pk)
    existing = _live_duplicate(memory, actor, digest)
    if existing is not None:
        return existing
    authorities = [
        r.declaration.authority if r.declaration else Authority.UNTRUSTED for r in resolved
    ]
    candidate = AdmissionPolicy.of(memory.policy).needs_review(authorities)
    result = _create_entry(memory, actor, new, resolved, digest, candidate=candidate)
    if admission is not None:
        result.near_duplicates = record_admission(
            memory, actor=actor, entry=result.entry, admission=admission
        )
    if candidate:
        result.authorities = authorities
    return result


def _file_admission(
    memory: Memory,
    actor: Actor,
    result: WriteResult,
    findings: list[injection.Finding] | None,
) -> None:
    """A candidate's ``admission`` proposal, right after its write committed, in its own short
    transaction and outside the Memory lock (so admission review costs the write path no lock
    time). The candidate is withheld from recall whatever happens here; should filing fail, the
    failure is logged and the inventory's ``candidates_without_admission`` alert names it."""
    try:
        with transaction.atomic():
            result.proposal_id = hooks.candidate_written(
                memory=memory,
                actor=actor,
                entry=result.entry,
                version=result.version,
                authorities=result.authorities,
                findings=findings,
                new_entry=True,
            )
    except Exception:
        log.exception("no admission proposal for candidate %s", result.entry.uid)


def _after_admission(
    memory: Memory,
    actor: Actor,
    result: WriteResult,
    *,
    dedupe: bool,
    near_duplicate_of: str | None,
    findings: list[injection.Finding],
) -> None:
    """The listeners of an admitted entry (the system's consolidation intake, the quarantine
    proposal of injection findings), after the write committed; each writes in its own
    transaction, so a failure there never undoes the write."""
    effects.entry_admitted(
        memory=memory,
        actor=actor,
        result=result,
        dedupe=dedupe,
        near_duplicate_of=near_duplicate_of,
        findings=findings,
    )


def _live_duplicate(memory: Memory, actor: Actor, digest: str) -> WriteResult | None:
    """An *active* (or candidate: the same write waiting for review) entry within the actor's
    clearance with the same content hash. One lean query on every add; the rows of a found
    duplicate (the rare case) are read with a second."""
    found = (
        Head.objects.filter(
            memory=memory,
            state__in=[HeadState.ACTIVE, HeadState.CANDIDATE],
            # The version's own Memory with its hash: both columns of the (memory, content
            # hash) index; the hash alone made PostgreSQL walk the whole index.
            version__memory=memory,
            version__content_hash=digest,
            entry__sensitivity__in=sensitivities_up_to(actor.clearance),
        )
        .order_by("entry_id")
        .values_list("entry_id", flat=True)[:1]
    )
    if not found:
        return None
    existing = Head.objects.select_related("entry", "version").get(entry_id=found[0])
    return WriteResult(
        entry=existing.entry,
        version=existing.version,
        revision=None,
        created=False,
        reason="exact_duplicate",
        state=existing.state,
    )


def _create_entry(
    memory: Memory,
    actor: Actor,
    new: NewEntry,
    resolved: list[ResolvedEvidence],
    digest: str,
    *,
    candidate: bool = False,
) -> WriteResult:
    """The entry row, its ``add`` revision (version 1) and the audit event; a ``candidate``
    head when admission review holds the write."""
    entry = Entry.objects.create(
        memory=memory,
        kind=new.kind,
        tier=new.tier,
        session_id=new.session_id,
        sensitivity=new.sensitivity,
        current_state=new.current_state,
    )
    state = HeadState.CANDIDATE if candidate else HeadState.ACTIVE
    change = Change(
        entry=entry,
        to_state=state,
        state_reason=ADMISSION_PENDING if candidate else "",
        new_body=NewBody(new.body, digest, resolved, new.effective_at),
        restart_interval=True,
        new_entry=True,
        attributes=new.governance(memory.policy, timezone.now()),
    )
    revision = write_revision(memory, actor=actor, kind=RevisionKind.ADD, changes=[change])
    assert change.result_version is not None
    audit.record(
        "entry.added",
        actor=actor,
        memory=memory,
        label=label_of(new.body),
        revision=revision,
        entry_ids=[entry.uid],
        payload={
            "kind": new.kind,
            "tier": new.tier,
            "version": 1,
            "content_hash": digest,
            **({"state": state} if candidate else {}),
        },
    )
    return WriteResult(
        entry=entry, version=change.result_version, revision=revision, created=True, state=state
    )


def _clean_revision(
    actor: Actor,
    memory: Memory,
    body: str,
    evidence: EvidenceArg | None,
    importance_override: int | None,
) -> tuple[str, list[EvidenceInput]]:
    """Who may revise, and the revision's admitted text and new evidence (before any lock):
    an importance override is a reviewer's; anything else needs a writer."""
    if importance_override is not None:
        if not actor.is_reviewer:
            raise Forbidden("Only reviewers may override an entry's importance.")
    else:
        require_writer(actor)
    refuse = refused_kinds(memory.policy)
    return clean_body(body, refuse=refuse), clean_evidence(evidence, refuse=refuse)


def _check_revisable(head: Head, expected_version: int | None) -> None:
    """409 unless the entry is active (and at ``expected_version``, when given)."""
    refuse_withheld(head)
    if head.state != HeadState.ACTIVE:
        raise EntryInactive(details={"state": head.state, "reason": head.state_reason})
    if expected_version is not None and expected_version != head.version.number:
        raise VersionConflict(
            details={"expected_version": expected_version, "head_version": head.version.number}
        )


@transaction.atomic(durable=True)
def revise_entry(
    memory: Memory,
    *,
    actor: Actor,
    entry_uid: str,
    body: str,
    evidence: EvidenceArg | None = None,
    expected_version: int | None = None,
    importance_override: int | None = None,
) -> WriteResult:
    """Correct an entry: a new version whose evidence is the predecessor's ∪ the new.

    Refuses with 409 ``entry_inactive`` when the entry is inactive, 409 ``version_conflict``
    when ``expected_version`` is not the head. Nothing changes → no version, no revision.
    ``importance_override`` is a reviewer's decision (reviewers and staff; anyone else 403),
    recorded as an explicit override on the revision; a reviewer key may change only that,
    not the text. Locks: the Memory row.
    """
    text, items = _clean_revision(actor, memory, body, evidence, importance_override)
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    _check_revisable(head, expected_version)
    union = dedupe_evidence([*evidence_inputs_of(head.version), *items])
    check_evidence_count(union, field_name="evidence")
    digest = content_hash(entry.kind, text, [i.identity for i in union])
    new_text = digest != head.version.content_hash
    override_changes = (
        importance_override is not None and importance_override != head.importance_override
    )
    if not new_text and not override_changes:
        return WriteResult(entry, head.version, None, created=False, reason="no_change")
    if new_text and not actor.can_write_entries:
        raise Forbidden("Reviewers may override importance but not rewrite an entry.")
    change = Change(entry=entry, state_reason=head.state_reason)
    if new_text:
        change.new_body = NewBody(text, digest, resolve_evidence(union), head.version.effective_at)
        change.restart_interval = True
    if override_changes:
        change.attributes = {"importance_override": importance_override}
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.REVISE,
        changes=[change],
        reason=f"importance_override:{importance_override}" if override_changes else "",
    )
    version = change.result_version
    assert version is not None
    audit.record(
        "entry.revised",
        actor=actor,
        memory=memory,
        label=label_of(text),
        revision=revision,
        entry_ids=[entry.uid],
        payload={
            "from_version": head.version.number,
            "to_version": version.number,
            **({"importance_override": importance_override} if override_changes else {}),
        },
    )
    return WriteResult(entry, version, revision, created=new_text)


@transaction.atomic(durable=True)
def forget_entry(
    memory: Memory, *, actor: Actor, entry_uid: str, reason: str, as_reviewer: bool = False
) -> WriteResult:
    """Retire an entry (head becomes inactive, same version). Undone by ``reactivate_entry``.

    ``as_reviewer=True`` is a reviewer's decision from the entry page (``review.entry_views``):
    the actor must then be a reviewer (not a writer) and the revision is attributed to them.
    """
    require_writer_or_reviewer(actor, as_reviewer=as_reviewer)
    why = clean_text(reason, field="reason", required=True, refuse=refused_kinds(memory.policy))
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    refuse_withheld(head)
    if head.state != HeadState.ACTIVE:
        raise EntryInactive("The entry is already inactive.", details={"reason": head.state_reason})
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=Change(entry=entry, to_state=HeadState.INACTIVE, state_reason=why),
        kind=RevisionKind.FORGET,
        reason=why,
        action="entry.forgotten",
        payload={"version": head.version.number, "reason": why},
    )
    effects.retired.after_commit(
        memory,
        revision=revision.number,
        kind="forget",
        versions=[(entry.uid, head.version.number)],
        at=revision.recorded_at,
    )
    return WriteResult(entry, head.version, revision, created=False)


@transaction.atomic(durable=True)
def reactivate_entry(
    memory: Memory, *, actor: Actor, entry_uid: str, reason: str = "", as_reviewer: bool = False
) -> WriteResult:
    """Make an inactive entry active again with the exact same version, in a new interval.

    ``as_reviewer=True``: a reviewer's decision from the entry page, as for ``forget_entry``;
    the reason is then required (a human decision is always explained).
    """
    require_writer_or_reviewer(actor, as_reviewer=as_reviewer)
    why = clean_text(
        reason, field="reason", required=as_reviewer, refuse=refused_kinds(memory.policy)
    )
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    refuse_withheld(head)
    if head.state == HeadState.ACTIVE:
        raise EntryStateConflict("The entry is already active.")
    if is_rejected_admission(head.state_reason):
        raise AdmissionRejected(details={"reason": head.state_reason})
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=Change(entry=entry, version=head.version, restart_interval=True),
        kind=RevisionKind.REACTIVATE,
        reason=why,
        action="entry.reactivated",
        payload={"version": head.version.number, "reason": why, "was": head.state_reason},
    )
    return WriteResult(entry, head.version, revision, created=False)


@transaction.atomic(durable=True)
def pin_entry(
    memory: Memory,
    *,
    actor: Actor,
    entry_uid: str,
    pinned: bool,
    category: str | None = None,
    reason: str,
) -> WriteResult:
    """Pin or unpin an entry with a category. Pinning is a human decision: reviewers only.
    Pinning needs a category (the REST body may leave it out; the entry page sends any text)."""
    require_reviewer(actor, "pin")
    if pinned and category not in PinCategory.values:
        raise ValidationFailed(details={"category": [one_of(PinCategory.values)]})
    why = clean_text(reason, field="reason", required=True, refuse=refused_kinds(memory.policy))
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    refuse_withheld(head)
    attributes = {"pinned": pinned, "pin_category": category if pinned else ""}
    if head.pinned == pinned and head.pin_category == attributes["pin_category"]:
        return WriteResult(entry, head.version, None, created=False, reason="no_change")
    change = Change(
        entry=entry, to_state=head.state, state_reason=head.state_reason, attributes=attributes
    )
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=change,
        kind=RevisionKind.PIN,
        reason=why,
        action="entry.pinned",
        payload={**attributes, "reason": why},
    )
    return WriteResult(entry, head.version, revision, created=False)
