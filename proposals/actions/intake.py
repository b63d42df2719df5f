"""Proposal intake: the only code that creates proposals (DESIGN.md §9).

:func:`submit_proposal` — visibility, pre-state, the kind's verification, the one-open rule and
idempotency, then one proposal with its exact pre-state. Nothing about memory changes: no
revision, no head, no projection, no recall change (approval is the only way a proposal writes
a revision — that is the review app's job).

Lock order, as everywhere: the Memory row, then proposal rows, then entry heads. Submissions
take the Memory lock so that checking the heads and inserting the proposal cannot interleave
with a write that changes those heads (whose staleness hook would otherwise miss the proposal).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from lib.correlation import current_correlation_id
from memory import audit
from memory.actions import clean_evidence, lock_memory, resolve_evidence
from memory.actors import Actor
from memory.admission import check_no_secrets, check_stored_text, clean_text, memory_policy
from memory.exceptions import (
    EntryCandidate,
    EntryInactive,
    EntryQuarantined,
    EntryStateConflict,
)
from memory.models import Entry, Head, HeadState, Memory
from memory.selectors import get_memory

from .. import hooks, verify
from ..evidence import evidence_json
from ..exceptions import (
    DuplicateProposal,
    IdempotencyKeyReused,
    NotFound,
    StaleProposal,
    TooLarge,
    ValidationFailed,
)
from ..kinds import Draft, Ref, Resolved, Submission, kind_of
from ..models import (
    IDEMPOTENCY_TTL_HOURS,
    MAX_AFFECTED_ENTRIES,
    IdempotencyKey,
    Proposal,
    ProposalStatus,
    ProposalTarget,
    affected_key,
)
from ..permissions import require_may_file, require_submitter

log = logging.getLogger(__name__)


@dataclass
class SubmitResult:
    proposal: Proposal
    created: bool  # False: an idempotent replay returned the original proposal
    #: The targets written with a new proposal (with their entries and versions), so its
    #: representation is built from what was written; empty for a replay.
    targets: list[ProposalTarget] = field(default_factory=list)


def clean_idempotency_key(value: Any, *, field: str = "Idempotency-Key") -> str | None:
    """The key as stored, or ``None``; 400 ``invalid`` / 422 ``secret_detected`` naming
    ``field`` (the REST header, or the argument that carries the key over MCP)."""
    if value is None or value == "":
        return None
    if (
        not isinstance(value, str)
        or len(value) > 128
        or not value.isascii()
        or not value.isprintable()
    ):
        raise ValidationFailed(details={field: ["Printable ASCII, at most 128 characters."]})
    # Stored with the proposal's idempotency record and copied into its audit payload.
    check_no_secrets(field, value)
    return value


def _replay(actor: Actor, key: str, request_hash: str) -> SubmitResult | None:
    record = (
        IdempotencyKey.objects.live()
        .filter(submitted_by=actor.id, key=key)
        .select_related("proposal")
        .first()
    )
    if record is None:
        return None
    if record.request_hash != request_hash:
        raise IdempotencyKeyReused(details={"proposal": record.proposal_id})
    return SubmitResult(record.proposal, created=False)


def _refs(kind: str, parsed: dict[str, Any]) -> list[Ref]:
    refs = kind_of(kind).refs(parsed)
    if len(refs) > MAX_AFFECTED_ENTRIES:
        raise TooLarge(
            f"A proposal affects at most {MAX_AFFECTED_ENTRIES} entries.",
            details={"entries": [f"At most {MAX_AFFECTED_ENTRIES} (got {len(refs)})."]},
        )
    seen: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    for ref in refs:
        if ref.entry_id in seen:
            errors[ref.path] = [
                f"Entry '{ref.entry_id}' is already referenced as {seen[ref.entry_id]}."
            ]
        seen.setdefault(ref.entry_id, ref.path)
    if errors:
        raise ValidationFailed("An entry is referenced more than once.", details=errors)
    return refs


def _clean(kind: str, parsed: dict[str, Any]) -> Draft:
    """Text checks (limits, secrets) and evidence resolution — all before any lock."""
    rationale = clean_text(parsed.get("rationale"), field="rationale", required=True)
    evidence = resolve_evidence(clean_evidence(parsed.get("evidence")))
    if parsed.get("policy_version") is not None:  # echoed in the verification report
        check_stored_text("policy_version", parsed["policy_version"])
    draft = Draft(
        kind=kind,
        memory_slug=parsed["memory"],
        rationale=rationale,
        evidence=evidence,
        claimed_policy_version=parsed.get("policy_version"),
        refs=_refs(kind, parsed),
    )
    kind_of(kind).clean(parsed, draft)
    return draft


def _resolve(actor: Actor, memory: Memory, refs: Sequence[Ref]) -> list[Resolved]:
    """Entries of ``memory`` within the actor's clearance with their heads; 404 for any other."""
    entries = {
        e.uid: e
        for e in Entry.objects.for_memory(memory)
        .visible_to(actor)
        .filter(uid__in=[r.entry_id for r in refs])
        .select_related("head__version", "projection")
    }
    missing = {
        r.path: [f"No entry '{r.entry_id}' in memory '{memory.slug}'."]
        for r in refs
        if r.entry_id not in entries
    }
    if missing:
        raise NotFound("A referenced entry does not exist in this memory.", details=missing)
    return [Resolved(r, entries[r.entry_id], entries[r.entry_id].head) for r in refs]


def _check_heads(kind: str, resolved: Sequence[Resolved]) -> None:
    """Each given version must be the head (409 ``stale_proposal``) and, except in the roles the
    kind allows inactive (promotion notes: a finished session retires its notes), the entry must
    be active (409 ``entry_inactive``)."""
    spec = kind_of(kind)
    stale = {
        r.ref.path: {
            "entry_id": r.ref.entry_id,
            "version": r.ref.version,
            "head_version": r.head.version.number,
        }
        for r in resolved
        if r.head.version.number != r.ref.version
    }
    if stale:
        raise StaleProposal(
            "A referenced version is not the entry's head; re-read and propose again.",
            details=stale,
        )
    refused = [r for r in resolved if not spec.accepts(r.ref.role, r.head.state)]
    if not refused:
        return
    details = {
        r.ref.path: {
            "entry_id": r.ref.entry_id,
            "state": r.head.state,
            "reason": r.head.state_reason,
        }
        for r in refused
    }
    states = {r.head.state for r in refused}
    if HeadState.QUARANTINED in states:
        raise EntryQuarantined("A referenced entry is quarantined.", details=details)
    if HeadState.CANDIDATE in states:
        raise EntryCandidate(
            "A referenced entry is a candidate waiting for admission review.", details=details
        )
    if HeadState.ACTIVE in states:
        raise EntryStateConflict(
            "A referenced entry is not in the state this kind takes.", details=details
        )
    raise EntryInactive("A referenced entry is inactive.", details=details)


def _verify(
    memory: Memory, draft: Draft, resolved: Sequence[Resolved]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Kind rules and the verification report; returns ``(payload, verification)``."""
    report = _report()
    by_role: dict[str, list[Resolved]] = {}
    for r in resolved:
        by_role.setdefault(r.ref.role, []).append(r)
    payload = kind_of(draft.kind).verify(memory, draft, by_role, report)
    return payload, _finish(memory, draft, report)


def _report() -> verify.Report:
    report = verify.Report()
    report.check(
        "heads_match",
        "pass",
        "Every referenced version is its entry's head in this memory.",
    )
    return report


def _finish(memory: Memory, draft: Draft, report: verify.Report) -> dict[str, Any]:
    """The policy-version check, and the report as stored."""
    version = verify.policy_version(memory)
    if draft.claimed_policy_version is None:
        report.check("policy_version", "pass", f"Verified under policy {version}.")
    elif draft.claimed_policy_version == version:
        report.check("policy_version", "pass", f"The submitter's policy {version} is in force.")
    else:
        report.check(
            "policy_version",
            "warn",
            f"Submitted under policy {draft.claimed_policy_version}; {version} is in force.",
            claimed=draft.claimed_policy_version,
        )
    return report.as_json()


def recheck_heads_locked(kind: str, resolved: Sequence[Resolved]) -> None:
    """Under the Memory lock: the heads read before locking are still the heads."""
    fresh = {
        h.entry_id: h
        for h in Head.objects.filter(entry_id__in=[r.entry.pk for r in resolved]).select_related(
            "version"
        )
    }
    for r in resolved:
        r.head = fresh[r.entry.pk]
    _check_heads(kind, resolved)


@dataclass
class Checked:
    """A submission checked before any lock: the draft, the referenced entries with their heads,
    and the kind's normalized payload and verification report."""

    draft: Draft
    resolved: list[Resolved]
    payload: dict[str, Any]
    verification: dict[str, Any]


def check_submission(actor: Actor, memory: Memory, kind: str, parsed: dict[str, Any]) -> Checked:
    """Text checks, references, heads and the kind's verification (no lock; intake and
    amendments share it). Raises the precise intake errors."""
    with memory_policy(memory.policy):  # every field refuses what the Memory refuses
        draft = _clean(kind, parsed)
    resolved = _resolve(actor, memory, draft.refs)
    _check_heads(kind, resolved)
    payload, verification = _verify(memory, draft, resolved)
    return Checked(draft, resolved, payload, verification)


@transaction.atomic(durable=True)
def submit_proposal(
    *, actor: Actor, submission: Submission, idempotency_key: str | None = None
) -> SubmitResult:
    """Submit an L2 proposal (API.md "Proposals").

    Preconditions: ``submission`` passed its kind's schema (``proposals.serializers.
    parse_submission``; unknown fields and wrong types were refused there with 400).
    Effects: one pending proposal, its pre-state targets, an idempotency record (when a key is
    given) and a ``proposal.submitted`` audit event — or nothing, with a precise error:
    400 ``invalid`` (evidence, duplicate references), 404 ``not_found`` (memory, entries),
    409 ``stale_proposal`` / ``entry_inactive`` / ``duplicate_proposal`` /
    ``idempotency_key_reused``, 413 ``too_large``,
    422 ``noop_rewrite`` / ``insufficient_sessions`` / ``secret_detected``.
    Same key + same body → the original proposal (``created=False``), whatever its status now.
    Locks: the Memory row (after all text checks and verification).
    """
    return submit_in_transaction(
        actor=actor, submission=submission, idempotency_key=idempotency_key
    )


def submit_in_transaction(
    *, actor: Actor, submission: Submission, idempotency_key: str | None = None
) -> SubmitResult:
    """The intake itself, for callers already inside a transaction (the system's near-duplicate
    check during an add, which holds the Memory lock). :func:`submit_proposal` is the entry
    point for everyone else."""
    require_submitter(actor, submission.kind)
    require_may_file(actor, submission.kind)
    key = clean_idempotency_key(idempotency_key)
    request_hash = submission.request_hash
    if key is not None:
        replay = _replay(actor, key, request_hash)
        if replay is not None:
            return replay
    kind, parsed = submission.kind, dict(submission.fields)
    memory = get_memory(actor, parsed["memory"])
    checked = check_submission(actor, memory, kind, parsed)
    draft, resolved = checked.draft, checked.resolved
    payload, verification = checked.payload, checked.verification

    memory = lock_memory(memory.pk)
    if key is not None:
        replay = _replay(actor, key, request_hash)
        if replay is not None:
            return replay
    recheck_heads_locked(kind, resolved)
    akey = kind_of(kind).scope_key(payload) or affected_key(r.entry.pk for r in resolved)
    _refuse_duplicate(memory, kind, akey)

    proposal, targets = _insert(
        memory, kind, akey, draft, resolved, payload, verification, actor=actor
    )
    if key is not None:
        _remember_key(actor, key, request_hash, proposal)
    _announce(memory, proposal, draft, resolved, verification, actor=actor, key=key)
    return SubmitResult(proposal, created=True, targets=targets)


def file_server_proposal(
    memory: Memory,
    *,
    actor: Actor,
    kind: str,
    rationale: str,
    resolved: Sequence[Resolved],
    checks: Callable[[verify.Report], dict[str, Any]],
    new_entries: bool = False,
) -> Proposal:
    """The intake for a proposal the server files about heads a memory write has just written
    (a candidate's admission): nothing read before can be stale and the text is the server's
    own, so only the kind's ``checks`` (which fill the report and return the payload) and the
    inserts remain. ``new_entries``: every entry was created by the write this follows, in a
    transaction of its own right after it (no other proposal can name them, so the one-open
    check and the insert's savepoint are skipped; should a reviewer change such a head before
    the insert, approval finds the recorded pre-state moved and the proposal stale). Otherwise
    the caller holds the Memory lock (a release, a compensation) and a second open proposal is
    409 ``duplicate_proposal`` as in the intake. Locks: none taken."""
    draft = Draft(
        kind=kind,
        memory_slug=memory.slug,
        rationale=rationale,
        evidence=[],
        claimed_policy_version=None,
        refs=[r.ref for r in resolved],
    )
    report = _report()
    payload = checks(report)
    verification = _finish(memory, draft, report)
    akey = affected_key(r.entry.pk for r in resolved)
    if not new_entries:
        _refuse_duplicate(memory, kind, akey)
    proposal, _ = _insert(
        memory,
        kind,
        akey,
        draft,
        resolved,
        payload,
        verification,
        actor=actor,
        guarded=not new_entries,
    )
    _announce(memory, proposal, draft, resolved, verification, actor=actor, key=None)
    return proposal


def _announce(
    memory: Memory,
    proposal: Proposal,
    draft: Draft,
    resolved: Sequence[Resolved],
    verification: dict[str, Any],
    *,
    actor: Actor,
    key: str | None,
) -> None:
    """The ``proposal.submitted`` audit event and the ``submitted`` hook (notifications)."""
    kind = proposal.kind
    audit.record(
        "proposal.submitted",
        actor=actor,
        memory=memory,
        label=f"{kind}: {draft.rationale}"[:300],
        proposal_id=proposal.pk,
        entry_ids=[r.entry.uid for r in resolved],
        payload={
            "kind": kind,
            "policy_version": proposal.policy_version,
            "similarity": verification.get("similarity"),
            "lost_details": len(verification.get("lost_details", [])),
            "idempotency_key": key,
        },
    )
    hooks.submitted(proposal, actor=actor)


def _insert(
    memory: Memory,
    kind: str,
    akey: str,
    draft: Draft,
    resolved: Sequence[Resolved],
    payload: dict[str, Any],
    verification: dict[str, Any],
    *,
    actor: Actor,
    guarded: bool = True,
) -> tuple[Proposal, list[ProposalTarget]]:
    """The pending proposal and its exact pre-state targets (under the Memory lock).
    ``guarded=False`` skips the savepoint around the insert: only for entries created in this
    transaction, which no other proposal can name."""
    now = timezone.now()
    proposal = Proposal(
        memory=memory,
        kind=kind,
        status=ProposalStatus.PENDING,
        affected_key=akey,
        submitted_by=actor.id,
        submitted_by_type=actor.type,
        submitted_by_label=actor.label,
        submitted_on_behalf_of=actor.on_behalf_of,
        submitted_by_key_id=actor.key_pk,
        submitted_by_owner_id=actor.user_pk,
        rationale=draft.rationale,
        evidence=evidence_json(draft.evidence),
        policy_version=verify.policy_version(memory),
        payload=payload,
        verification=verification,
        created_at=now,
        status_changed_at=now,
        correlation_id=current_correlation_id(),
    )
    if not guarded:
        proposal.save(force_insert=True)
    else:
        try:
            with transaction.atomic():
                proposal.save(force_insert=True)
        except IntegrityError:
            # The partial unique constraint: another submission won a race the check lost.
            _refuse_duplicate(memory, kind, akey)
            raise
    return proposal, _insert_targets(proposal, memory, resolved)


def _insert_targets(
    proposal: Proposal, memory: Memory, resolved: Sequence[Resolved]
) -> list[ProposalTarget]:
    """Inserts the proposal's targets in one bulk insert: each resolved entry in order, with
    its role and the exact head it was resolved at (version, number, state, content hash).
    Returns them, with their entries and versions."""
    return ProposalTarget.objects.bulk_create(
        [
            ProposalTarget(
                proposal=proposal,
                memory=memory,
                position=i,
                role=r.ref.role,
                entry=r.entry,
                version=r.head.version,
                version_number=r.head.version.number,
                state=r.head.state,
                content_hash=r.head.version.content_hash,
            )
            for i, r in enumerate(resolved)
        ]
    )


def _refuse_duplicate(memory: Memory, kind: str, akey: str) -> None:
    first = (
        Proposal.objects.open()
        .filter(memory=memory, kind=kind, affected_key=akey)
        .order_by("pk")
        .first()
    )
    if first is not None:
        what = "the same policy keys" if kind_of(kind).changes_policy else "exactly these entries"
        raise DuplicateProposal(
            f"Proposal {first.pk} ({kind}) is already open for {what}.",
            details={"proposal": first.pk, "status": first.status},
        )


def _remember_key(actor: Actor, key: str, request_hash: str, proposal: Proposal) -> None:
    now = timezone.now()
    # An expired record of the same key may remain until the purge; the key is free again.
    IdempotencyKey.objects.filter(submitted_by=actor.id, key=key, expires_at__lte=now).delete()
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(
                submitted_by=actor.id,
                key=key,
                request_hash=request_hash,
                proposal=proposal,
                created_at=now,
                expires_at=now + timedelta(hours=IDEMPOTENCY_TTL_HOURS),
            )
    except IntegrityError as exc:
        # Used concurrently for a request in another Memory (same-Memory requests serialize
        # on the Memory lock and replay above).
        raise IdempotencyKeyReused() from exc


@transaction.atomic(durable=True)
def purge_idempotency_keys(*, now: datetime | None = None) -> int:
    """Delete idempotency records past their expiry (they are honoured ≥ 24 h). Idempotent."""
    deleted, _ = IdempotencyKey.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return int(deleted)
