"""Actions of proposal intake: the only code that writes proposals (DESIGN.md §9).

- :func:`submit_proposal` — shape, visibility, pre-state, verification, the one-open rule and
  idempotency, then one proposal with its exact pre-state. Nothing about memory changes: no
  revision, no head, no projection, no recall change (approval is the only way a proposal
  writes a revision — that is the review app's job).
- :func:`withdraw_proposal` — the submitter takes back a pending proposal.
- :func:`mark_stale_for_heads` — registered on ``memory.hooks.on_heads_changed``: when a revision
  changes an affected entry's head, every pending proposal touching it becomes ``stale`` in the
  same transaction, naming that revision.
- :func:`file_duplicate_consolidation` — registered on ``memory.hooks.on_entry_admitted``: a new
  entry at or above ``tau_same`` of an existing one gets a consolidation proposal filed by the
  ``system`` actor through the same intake.

Lock order, as everywhere: the Memory row, then proposal rows, then entry heads. Submissions
take the Memory lock so that checking the heads and inserting the proposal cannot interleave
with a write that changes those heads (whose staleness hook would otherwise miss the proposal).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from lib.correlation import current_correlation_id
from memory import audit
from memory.actions import (
    ResolvedEvidence,
    clean_evidence,
    get_memory,
    lock_memory,
    resolve_evidence,
)
from memory.actors import SYSTEM, Actor
from memory.admission import clean_body, clean_text
from memory.dedupe import thresholds
from memory.exceptions import EntryInactive
from memory.models import (
    Entry,
    Head,
    HeadState,
    Kind,
    Memory,
    Relation,
    RelationKind,
    Revision,
    sensitivities_up_to,
)
from memory.text import content_hash

from . import hooks, verify
from .exceptions import (
    DomainError,
    DuplicateProposal,
    Forbidden,
    IdempotencyKeyReused,
    InsufficientSessions,
    NoopRewrite,
    NotFound,
    StaleProposal,
    TooLarge,
    ValidationFailed,
)
from .models import (
    IDEMPOTENCY_TTL_HOURS,
    MAX_AFFECTED_ENTRIES,
    IdempotencyKey,
    Proposal,
    ProposalKind,
    ProposalStatus,
    ProposalTarget,
    TargetRole,
    affected_key,
)
from .serializers import parse_submission

log = logging.getLogger(__name__)


# --- Reads ------------------------------------------------------------------------------------


def get_proposal(actor: Actor, proposal_id: int) -> Proposal:
    """Proposal ``proposal_id`` with its targets if the actor may see it; 404 otherwise (other
    Memories and entries above the actor's clearance do not exist for it)."""
    if not actor.can_read:
        raise Forbidden("Your role may not read proposals.")
    proposal = Proposal.objects.visible_to(actor).with_detail().filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal {proposal_id}.")
    return proposal


# --- Submission -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    path: str
    role: str
    entry_id: str
    version: int


@dataclass
class Draft:
    """A submission after shape and text checks, before anything is read from the Memory."""

    kind: str
    memory_slug: str
    rationale: str
    evidence: list[ResolvedEvidence]
    claimed_policy_version: str | None
    refs: list[Ref]
    body: str = ""
    target_kind: str = ""
    successor_new: dict[str, Any] | None = None
    successor_evidence: list[ResolvedEvidence] | None = None


@dataclass
class Resolved:
    ref: Ref
    entry: Entry
    head: Head


@dataclass
class SubmitResult:
    proposal: Proposal
    created: bool  # False: an idempotent replay returned the original proposal


def _request_hash(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _clean_idempotency_key(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if (
        not isinstance(value, str)
        or len(value) > 128
        or not value.isascii()
        or not value.isprintable()
    ):
        raise ValidationFailed(
            details={"Idempotency-Key": ["Printable ASCII, at most 128 characters."]}
        )
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


def _ref(path: str, role: str, raw: dict[str, Any]) -> Ref:
    return Ref(path, role, str(raw["entry_id"]), int(raw["version"]))


def _refs(kind: str, parsed: dict[str, Any]) -> list[Ref]:
    refs: list[Ref] = []
    if kind == ProposalKind.CONSOLIDATION:
        refs.append(_ref("target", TargetRole.TARGET, parsed["target"]))
        refs += [
            _ref(f"redundant[{i}]", TargetRole.REDUNDANT, r)
            for i, r in enumerate(parsed["redundant"])
        ]
    elif kind == ProposalKind.SUPERSESSION:
        refs.append(_ref("old", TargetRole.OLD, parsed["old"]))
        if "entry_id" in parsed["successor"]:
            refs.append(_ref("successor", TargetRole.SUCCESSOR, parsed["successor"]))
    elif kind == ProposalKind.PROMOTION:
        refs += [_ref(f"notes[{i}]", TargetRole.NOTE, r) for i, r in enumerate(parsed["notes"])]
    else:
        refs += [
            _ref(f"entries[{i}]", TargetRole.ENTRY, r) for i, r in enumerate(parsed["entries"])
        ]
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
    evidence = resolve_evidence(clean_evidence([dict(e) for e in parsed.get("evidence", [])]))
    draft = Draft(
        kind=kind,
        memory_slug=parsed["memory"],
        rationale=rationale,
        evidence=evidence,
        claimed_policy_version=parsed.get("policy_version"),
        refs=_refs(kind, parsed),
    )
    if kind in (ProposalKind.CONSOLIDATION, ProposalKind.PROMOTION):
        draft.body = clean_body(parsed["body"])
    if kind == ProposalKind.PROMOTION:
        draft.target_kind = parsed["target_kind"]
    if kind == ProposalKind.SUPERSESSION and "entry_id" not in parsed["successor"]:
        successor = parsed["successor"]
        items = clean_evidence(
            [dict(e) for e in successor.get("evidence", [])], field_name="successor.evidence"
        )
        draft.successor_evidence = resolve_evidence(items)
        body = clean_body(successor["body"], field="successor.body")
        draft.successor_new = {
            "body": body,
            "kind": successor["kind"],
            "content_hash": content_hash(successor["kind"], body, [i.identity for i in items]),
        }
    return draft


def _evidence_json(items: Sequence[ResolvedEvidence]) -> list[dict[str, Any]]:
    return [
        {
            "source": ev.input.source,
            "ref": ev.input.ref,
            "observed_at": ev.input.observed_at.isoformat() if ev.input.observed_at else None,
            "quote": ev.input.quote,
            "snapshot": {
                "authority": ev.declaration.authority if ev.declaration else "untrusted",
                "verification": ev.declaration.verification if ev.declaration else "unknown",
                "declaration_version": ev.declaration.version if ev.declaration else None,
            },
        }
        for ev in items
    ]


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
    """Each given version must be the head (409 ``stale_proposal``) and, except promotion notes
    (a finished session retires its notes), the entry must be active (409 ``entry_inactive``)."""
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
    inactive = {
        r.ref.path: {
            "entry_id": r.ref.entry_id,
            "state": r.head.state,
            "reason": r.head.state_reason,
        }
        for r in resolved
        if r.head.state != HeadState.ACTIVE and r.ref.role != TargetRole.NOTE
    }
    if inactive:
        raise EntryInactive("A referenced entry is inactive.", details=inactive)


def _verify(
    memory: Memory, draft: Draft, resolved: Sequence[Resolved]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Kind rules and the verification report; returns ``(payload, verification)``."""
    report = verify.Report()
    report.check(
        "heads_match",
        "pass",
        "Every referenced version is its entry's head in this memory.",
    )
    by_role: dict[str, list[Resolved]] = {}
    for r in resolved:
        by_role.setdefault(r.ref.role, []).append(r)

    def ref_json(r: Resolved) -> dict[str, Any]:
        return {"entry_id": r.entry.uid, "version": r.ref.version}

    def text(r: Resolved) -> tuple[str, str]:
        return (r.entry.uid, r.head.version.body)

    _, tau_similar = thresholds(memory)
    payload: dict[str, Any]
    if draft.kind == ProposalKind.CONSOLIDATION:
        target = by_role[TargetRole.TARGET][0]
        redundant = by_role[TargetRole.REDUNDANT]
        verify.score_pairs(report, text(target), [text(r) for r in redundant])
        similar = (report.similarity or 0) >= tau_similar
        report.check(
            "similarity",
            "pass" if similar else "warn",
            f"Weakest target–redundant similarity {report.similarity} "
            f"({'at or above' if similar else 'below'} tau_similar {tau_similar}).",
        )
        verify.check_details(report, [text(target), *(text(r) for r in redundant)], draft.body)
        _check_kinds_and_sensitivity(report, target, redundant)
        payload = {
            "target": ref_json(target),
            "redundant": [ref_json(r) for r in redundant],
            "body": draft.body,
        }
    elif draft.kind == ProposalKind.SUPERSESSION:
        old = by_role[TargetRole.OLD][0]
        existing = by_role.get(TargetRole.SUCCESSOR, [])
        if existing:
            successor = existing[0]
            already = Relation.objects.filter(
                kind=RelationKind.SUPERSEDES,
                from_entry=successor.entry,
                to_entry=old.entry,
                retired_by__isnull=True,
            ).exists()
            if already:
                raise NoopRewrite(
                    f"'{successor.entry.uid}' already supersedes '{old.entry.uid}'.",
                    details={"successor": ["Already supersedes the old entry."]},
                )
            verify.score_pairs(report, ("old", old.head.version.body), [text(successor)])
            if verify.same_text(old.head.version.body, successor.head.version.body):
                report.check(
                    "successor_differs",
                    "warn",
                    "The successor says the same as the old entry; a consolidation may fit better.",
                )
            successor_json: dict[str, Any] = ref_json(successor)
        else:
            assert draft.successor_new is not None
            new_body = draft.successor_new["body"]
            if verify.same_text(old.head.version.body, new_body):
                raise NoopRewrite(
                    "The successor body says the same as the old entry; nothing would change. "
                    "To add evidence, revise the entry.",
                    details={"successor.body": ["Equal to the old entry's body."]},
                )
            verify.score_pairs(report, ("old", old.head.version.body), [("successor", new_body)])
            successor_json = {
                **draft.successor_new,
                "evidence": _evidence_json(draft.successor_evidence or []),
                "tier": old.entry.tier,
                "sensitivity": old.entry.sensitivity,
            }
        report.check("changes_something", "pass", "The old entry would become superseded.")
        payload = {"old": ref_json(old), "successor": successor_json}
    elif draft.kind == ProposalKind.PROMOTION:
        notes = by_role[TargetRole.NOTE]
        wrong = {
            r.ref.path: [
                f"Entry '{r.entry.uid}' is a {r.entry.kind}; promotion takes working notes."
            ]
            for r in notes
            if r.entry.kind != Kind.WORKING_NOTE
        }
        if wrong:
            raise ValidationFailed("Promotion takes working notes only.", details=wrong)
        sessions = sorted({r.entry.session_id for r in notes if r.entry.session_id})
        needed = verify.promotion_min_sessions(memory)
        if len(sessions) < needed:
            raise InsufficientSessions(
                f"Promotion needs working notes from at least {needed} distinct sessions "
                f"(got {len(sessions)}).",
                details={"sessions": sessions, "required": needed},
            )
        report.check(
            "distinct_sessions",
            "pass",
            f"Working notes from {len(sessions)} distinct sessions (policy: at least {needed}).",
            sessions=sessions,
        )
        inactive = [r.entry.uid for r in notes if r.head.state != HeadState.ACTIVE]
        if inactive:
            report.check(
                "notes_inactive",
                "info",
                "Some notes are already inactive (their session ended); they stay inactive.",
                entries=inactive,
            )
        verify.score_pairs(report, ("body", draft.body), [text(r) for r in notes])
        verify.check_details(report, [text(r) for r in notes], draft.body)
        payload = {
            "notes": [ref_json(r) for r in notes],
            "target_kind": draft.target_kind,
            "body": draft.body,
        }
    else:
        entries = by_role[TargetRole.ENTRY]
        pinned = [r.entry.uid for r in entries if r.head.pinned]
        if pinned:
            report.check("pinned", "warn", "Pinned entries are included.", entries=pinned)
        valuable = [
            r.entry.uid
            for r in entries
            if (projection := getattr(r.entry, "projection", None)) is not None
            and projection.importance > 1
        ]
        if valuable:
            report.check(
                "low_value",
                "warn",
                "Some entries are not low-value (importance above 1).",
                entries=valuable,
            )
        else:
            report.check("low_value", "pass", "Every entry has importance 1 or less.")
        payload = {"entries": [ref_json(r) for r in entries]}

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
    return payload, report.as_json()


def _check_kinds_and_sensitivity(
    report: verify.Report, target: Resolved, redundant: Sequence[Resolved]
) -> None:
    kinds = sorted({r.entry.kind for r in redundant} - {target.entry.kind})
    if kinds:
        report.check(
            "kinds_match",
            "warn",
            f"Redundant entries of another kind ({', '.join(kinds)}) than the target "
            f"({target.entry.kind}).",
        )
    allowed = set(sensitivities_up_to(target.entry.sensitivity))
    higher = [r.entry.uid for r in redundant if r.entry.sensitivity not in allowed]
    if higher:
        report.check(
            "sensitivity",
            "warn",
            "Redundant entries are more sensitive than the target; their text would become "
            f"{target.entry.sensitivity}.",
            entries=higher,
        )


def _recheck_heads_locked(kind: str, resolved: Sequence[Resolved]) -> None:
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


@transaction.atomic(durable=True)
def submit_proposal(*, actor: Actor, data: Any, idempotency_key: str | None = None) -> SubmitResult:
    """Submit an L2 proposal (API.md "Proposals").

    Preconditions: ``data`` is the request object (``memory``, ``kind``, common and kind fields).
    Effects: one pending proposal, its pre-state targets, an idempotency record (when a key is
    given) and a ``proposal.submitted`` audit event — or nothing, with a precise error:
    400 ``invalid`` (shape, kinds), 404 ``not_found`` (memory, entries), 409 ``stale_proposal`` /
    ``entry_inactive`` / ``duplicate_proposal`` / ``idempotency_key_reused``, 413 ``too_large``,
    422 ``noop_rewrite`` / ``insufficient_sessions`` / ``secret_detected``.
    Same key + same body → the original proposal (``created=False``), whatever its status now.
    Locks: the Memory row (after all text checks and verification).
    """
    return submit_in_transaction(actor=actor, data=data, idempotency_key=idempotency_key)


def submit_in_transaction(
    *, actor: Actor, data: Any, idempotency_key: str | None = None
) -> SubmitResult:
    """The intake itself, for callers already inside a transaction (the system's near-duplicate
    check during an add, which holds the Memory lock). :func:`submit_proposal` is the entry
    point for everyone else."""
    if not actor.can_write_entries:
        raise Forbidden("Your role may not submit proposals.")
    key = _clean_idempotency_key(idempotency_key)
    request_hash = _request_hash(data)
    if key is not None:
        replay = _replay(actor, key, request_hash)
        if replay is not None:
            return replay
    kind, parsed = parse_submission(data)
    memory = get_memory(actor, parsed["memory"])
    draft = _clean(kind, parsed)
    resolved = _resolve(actor, memory, draft.refs)
    _check_heads(kind, resolved)
    payload, verification = _verify(memory, draft, resolved)

    memory = lock_memory(memory.pk)
    if key is not None:
        replay = _replay(actor, key, request_hash)
        if replay is not None:
            return replay
    _recheck_heads_locked(kind, resolved)
    akey = affected_key(r.entry.pk for r in resolved)
    _refuse_duplicate(memory, kind, akey)

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
        evidence=_evidence_json(draft.evidence),
        policy_version=verify.policy_version(memory),
        payload=payload,
        verification=verification,
        created_at=now,
        status_changed_at=now,
        correlation_id=current_correlation_id(),
    )
    try:
        with transaction.atomic():
            proposal.save(force_insert=True)
    except IntegrityError:
        # The partial unique constraint: another submission won a race the check above lost.
        _refuse_duplicate(memory, kind, akey)
        raise
    ProposalTarget.objects.bulk_create(
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
    if key is not None:
        _remember_key(actor, key, request_hash, proposal)
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
    return SubmitResult(proposal, created=True)


def _refuse_duplicate(memory: Memory, kind: str, akey: str) -> None:
    first = (
        Proposal.objects.pending()
        .filter(memory=memory, kind=kind, affected_key=akey)
        .order_by("pk")
        .first()
    )
    if first is not None:
        raise DuplicateProposal(
            f"Proposal {first.pk} ({kind}) is already open for exactly these entries.",
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
def purge_idempotency_keys(*, now: Any = None) -> int:
    """Delete idempotency records past their expiry (they are honoured ≥ 24 h). Idempotent."""
    deleted, _ = IdempotencyKey.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return int(deleted)


# --- Withdraw ---------------------------------------------------------------------------------


@transaction.atomic(durable=True)
def withdraw_proposal(proposal: Proposal, *, actor: Actor, reason: Any = None) -> Proposal:
    """The submitter (same key, its owner, or the same user) withdraws a pending proposal.

    403 ``forbidden`` for anyone else; 409 ``already_decided`` once it is not pending.
    Locks: the Memory row, then the proposal row.
    """
    why = clean_text(reason, field="reason")
    lock_memory(proposal.memory_id)
    proposal = Proposal.objects.select_for_update().get(pk=proposal.pk)
    if not proposal.is_self(actor):
        raise Forbidden("Only the submitter may withdraw a proposal.")
    fields = proposal.transition_to(ProposalStatus.WITHDRAWN, reason=why)
    proposal.save(update_fields=fields)
    audit.record(
        "proposal.withdrawn",
        actor=actor,
        memory=proposal.memory,
        label=f"{proposal.kind} #{proposal.pk}",
        proposal_id=proposal.pk,
        entry_ids=list(proposal.targets.values_list("entry__uid", flat=True)),
        payload={"reason": why},
    )
    return proposal


# --- Hooks (registered in ProposalsConfig.ready) ----------------------------------------------


def _revision_actor(revision: Revision) -> Actor:
    return Actor(
        type=revision.actor_type,
        id=revision.actor_id,
        label=revision.actor_label,
        role=SYSTEM,
        on_behalf_of=revision.on_behalf_of,
    )


def mark_stale_for_heads(memory: Memory, revision: Revision, entry_pks: list[int]) -> None:
    """Every pending proposal touching ``entry_pks`` becomes ``stale`` with ``revision``.

    Called by the revision writer inside its transaction, under the Memory lock, after the heads
    changed. The proposal a revision applies (``revision.proposal_id``) is left to its approver.
    Locks: the proposal rows (after the Memory row).
    """
    if not entry_pks:
        return
    qs = Proposal.objects.pending().filter(memory=memory).touching(entry_pks)
    if revision.proposal_id is not None:
        qs = qs.exclude(pk=revision.proposal_id)
    proposals = list(qs.select_for_update().order_by("pk"))
    if not proposals:
        return
    touched: dict[int, list[str]] = {}
    for pid, uid in (
        ProposalTarget.objects.filter(proposal__in=proposals, entry_id__in=entry_pks)
        .order_by("proposal_id", "position")
        .values_list("proposal_id", "entry__uid")
    ):
        touched.setdefault(pid, []).append(uid)
    actor = _revision_actor(revision)
    for proposal in proposals:
        uids = touched.get(proposal.pk, [])
        fields = proposal.transition_to(
            ProposalStatus.STALE,
            reason=f"revision {revision.number} ({revision.kind}) changed {', '.join(uids)}",
            at=revision.recorded_at,
        )
        proposal.stale_revision = revision
        proposal.save(update_fields=[*fields, "stale_revision"])
        audit.record(
            "proposal.stale",
            actor=actor,
            memory=memory,
            label=f"{proposal.kind} #{proposal.pk}",
            revision=revision,
            proposal_id=proposal.pk,
            entry_ids=uids,
            payload={"revision": revision.number, "revision_kind": revision.kind},
        )


def file_duplicate_consolidation(
    *,
    memory: Memory,
    actor: Actor,
    result: Any,
    dedupe: bool = True,
    near_duplicate_of: Any = None,
    **_hook_kwargs: Any,
) -> None:
    """After an add: a new entry at or above ``tau_same`` of an existing one gets a consolidation
    proposal (target: the existing entry with its own body, redundant: the new entry) filed by
    the ``system`` actor through the same intake. Sets ``result.proposal_id``.

    Never fails the write: a refusal (e.g. a proposal already open for the pair) is logged and
    the savepoint leaves nothing behind; an open duplicate's id is reported instead.
    """
    if not dedupe or not getattr(result, "created", False):
        return
    duplicates = [d for d in result.near_duplicates if d.get("relation") == "duplicate_of"]
    if not duplicates:
        return
    best = duplicates[0]
    target = (
        Entry.objects.for_memory(memory)
        .filter(uid=best["entry_id"])
        .select_related("head__version")
        .first()
    )
    if target is None:
        return
    tau_same, _ = thresholds(memory)
    data: dict[str, Any] = {
        "memory": memory.slug,
        "kind": ProposalKind.CONSOLIDATION.value,
        "rationale": (
            f"Near-duplicate found on add: {result.entry.uid} scores {best['score']} against "
            f"{target.uid} (tau_same {tau_same})."
        ),
        "target": {"entry_id": target.uid, "version": target.head.version.number},
        "redundant": [{"entry_id": result.entry.uid, "version": result.version.number}],
        "body": target.head.version.body,
    }
    try:
        with transaction.atomic():
            filed = submit_in_transaction(actor=Actor.system("near-duplicate check"), data=data)
    except DuplicateProposal as exc:
        result.proposal_id = exc.details.get("proposal")
        return
    except DomainError as exc:
        log.info("no consolidation proposal for %s: %s", result.entry.uid, exc.message)
        return
    result.proposal_id = filed.proposal.pk
