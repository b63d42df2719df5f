"""Revalidation writes (``memory.revalidation``): ``confirm`` a re-checked fact, ``require
re-verification`` of one. Each is a revision that moves the entry's review date — never a new
version (the text did not change), never a change of state: nothing here deactivates."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ..actors import Actor
from ..admission import clean_text
from ..exceptions import EntryInactive, ValidationFailed
from ..models import Head, HeadState, Memory, RevisionKind
from ..permissions import require_confirmer, require_reviewer
from ..personal_data import refused_kinds
from ..revalidation import default_review_at, is_due
from .common import WriteResult, lock_entry, write_entry_change
from .entries import refuse_withheld
from .evidence import (
    EvidenceArg,
    clean_evidence,
    dedupe_evidence,
    evidence_json,
    resolve_evidence,
)
from .new_entry import clean_datetime
from .writer import Change


def _check_active(head: Head) -> None:
    refuse_withheld(head)
    if head.state != HeadState.ACTIVE:
        raise EntryInactive(details={"state": head.state, "reason": head.state_reason})


@transaction.atomic(durable=True)
def confirm_entry(
    memory: Memory,
    *,
    actor: Actor,
    entry_uid: str,
    evidence: EvidenceArg | None = None,
    review_at: str | datetime | None = None,
) -> WriteResult:
    """Record a re-check of an active entry: a ``confirm`` revision (no new version) carrying
    the new evidence, if any, and moving the review date to ``review_at`` — else to what the
    Memory's ``revalidation`` policy gives from now, else none (the fact is no longer
    scheduled for a re-check). Agents and reviewers.

    Refusals: 403 for a role that may neither write nor review; 400 ``invalid`` for a review
    date that is not in the future or evidence that names an unknown source; 409
    ``entry_inactive`` / ``entry_candidate`` / ``entry_quarantined``. Locks: the Memory row.
    """
    require_confirmer(actor)
    refuse = refused_kinds(memory.policy)
    items = dedupe_evidence(clean_evidence(evidence, refuse=refuse))
    resolve_evidence(items)  # unknown sources: 400 before the lock
    now = timezone.now()
    given = (
        review_at
        if isinstance(review_at, datetime) or review_at is None
        else clean_datetime(review_at, "review_at")
    )
    if given is not None and given <= now:
        raise ValidationFailed(details={"review_at": ["Must be in the future."]})
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    _check_active(head)
    new_review = given or default_review_at(
        memory.policy,
        kind=entry.kind,
        tier=entry.tier,
        current_state=entry.current_state,
        sources=[ev.source.name for ev in head.version.evidence.select_related("source")]
        + [i.source for i in items],
        admitted_at=now,
    )
    attributes = {
        "review_at": new_review.isoformat() if new_review else None,
        **({"confirmed_evidence": evidence_json(items)} if items else {}),
    }
    change = Change(
        entry=entry, to_state=head.state, state_reason=head.state_reason, attributes=attributes
    )
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=change,
        kind=RevisionKind.CONFIRM,
        reason="confirmed",
        action="entry.confirmed",
        payload={
            "version": head.version.number,
            "was_due": is_due(head.review_at, now),
            "from_review_at": head.review_at.isoformat() if head.review_at else None,
            "review_at": attributes["review_at"],
            "evidence": len(items),
        },
    )
    return WriteResult(entry, head.version, revision, created=False)


@transaction.atomic(durable=True)
def require_reverification(
    memory: Memory, *, actor: Actor, entry_uid: str, reason: str
) -> WriteResult:
    """A reviewer marks an active entry due for re-checking now: a ``reverify`` revision
    setting its review date to the present (no new version, no change of state). An entry
    already due is left as it is (``no_change``). Locks: the Memory row."""
    require_reviewer(actor, "require re-verification of")
    why = clean_text(reason, field="reason", required=True, refuse=refused_kinds(memory.policy))
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    _check_active(head)
    now = timezone.now()
    if is_due(head.review_at, now):
        return WriteResult(entry, head.version, None, created=False, reason="no_change")
    change = Change(
        entry=entry,
        to_state=head.state,
        state_reason=head.state_reason,
        attributes={"review_at": now.isoformat()},
    )
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=change,
        kind=RevisionKind.REVERIFY,
        reason=why,
        action="entry.reverification_required",
        payload={
            "version": head.version.number,
            "reason": why,
            "from_review_at": head.review_at.isoformat() if head.review_at else None,
        },
    )
    return WriteResult(entry, head.version, revision, created=False)
