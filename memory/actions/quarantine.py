"""Quarantine and release: a reviewer withholds an entry from every recall view, and lets it back.

Both are revisions (``quarantine``, ``release``) of the entry's head state; the version never
changes, so the exact history stays readable. Release puts back the state the entry had before
it was quarantined (active, inactive with its reason, or candidate — which files a fresh
``admission`` proposal, since quarantining made the old one stale).
"""

from __future__ import annotations

from django.db import transaction

from .. import audit, effects, hooks
from ..actors import Actor
from ..admission import clean_text
from ..exceptions import EntryQuarantined, EntryStateConflict
from ..models import Entry, HeadState, Memory, RevisionChange, RevisionKind
from ..permissions import require_reviewer
from ..personal_data import refused_kinds
from .common import WriteResult, label_of, lock_entry, write_entry_change
from .writer import Change, write_revision


def state_before_quarantine(entry: Entry) -> tuple[str, str]:
    """The (state, reason) the entry had when it was last quarantined (two indexed queries)."""
    into = (
        RevisionChange.objects.filter(entry=entry, to_state=HeadState.QUARANTINED)
        .exclude(from_state=HeadState.QUARANTINED)
        .order_by("-revision_id")
        .values_list("revision_id", flat=True)
        .first()
    )
    before = (
        RevisionChange.objects.filter(entry=entry, revision_id__lt=into)
        .order_by("-revision_id")
        .values_list("to_state", "state_reason")
        .first()
        if into is not None
        else None
    )
    return before if before is not None else (HeadState.ACTIVE, "")


@transaction.atomic(durable=True)
def quarantine_entry(memory: Memory, *, actor: Actor, entry_uid: str, reason: str) -> WriteResult:
    """Withhold an entry from every recall view (reviewers). 409 ``entry_quarantined`` when it
    already is. Pending proposals touching the entry become stale. Locks: the Memory row."""
    require_reviewer(actor, "quarantine")
    why = clean_text(reason, field="reason", required=True, refuse=refused_kinds(memory.policy))
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    if head.state == HeadState.QUARANTINED:
        raise EntryQuarantined(
            "The entry is already quarantined.", details={"reason": head.state_reason}
        )
    was = head.state
    revision = write_entry_change(
        memory,
        actor=actor,
        head=head,
        change=Change(
            entry=entry, to_state=HeadState.QUARANTINED, state_reason=why[:300], attributes={}
        ),
        kind=RevisionKind.QUARANTINE,
        reason=why,
        action="entry.quarantined",
        payload={"version": head.version.number, "reason": why, "was": was},
    )
    effects.retired.after_commit(
        memory,
        revision=revision.number,
        kind="quarantine",
        versions=[(entry.uid, head.version.number)],
        at=revision.recorded_at,
    )
    return WriteResult(entry, head.version, revision, created=False, state=HeadState.QUARANTINED)


@transaction.atomic(durable=True)
def release_entry(memory: Memory, *, actor: Actor, entry_uid: str, reason: str) -> WriteResult:
    """Release a quarantined entry back to the state it had before (reviewers). 409
    ``state_conflict`` when it is not quarantined. A released candidate gets a new admission
    proposal in the same transaction. Locks: the Memory row."""
    require_reviewer(actor, "release")
    why = clean_text(reason, field="reason", required=True, refuse=refused_kinds(memory.policy))
    memory, entry, head = lock_entry(actor, memory, entry_uid)
    if head.state != HeadState.QUARANTINED:
        raise EntryStateConflict("The entry is not quarantined.", details={"state": head.state})
    state, state_reason = state_before_quarantine(entry)
    revision = write_revision(
        memory,
        actor=actor,
        kind=RevisionKind.RELEASE,
        reason=why,
        changes=[Change(entry=entry, to_state=state, state_reason=state_reason)],
    )
    result = WriteResult(entry, head.version, revision, created=False, state=state)
    if state == HeadState.CANDIDATE:
        result.proposal_id = hooks.candidate_written(
            memory=memory, actor=actor, entry=entry, version=head.version
        )
    audit.record(
        "entry.released",
        actor=actor,
        memory=memory,
        label=label_of(head.version.body),
        revision=revision,
        entry_ids=[entry.uid],
        payload={"version": head.version.number, "reason": why, "to_state": state},
    )
    return result
