"""Compensation: an operation undone as one new ``compensate`` revision.

The operation recorded the heads it left (``produced.heads``) and how to put the pre-state back
(``compensation_plan``). Compensation refuses when any affected entry moved on since (undoing
would overwrite later changes), otherwise restores those exact heads (same versions; no version
is created), retires the authoritative relations the operation created, records a Compensation
and marks the proposal ``compensated``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memory import audit
from memory.actions import Change, lock_memory
from memory.actions.plans import Plan, apply_plan
from memory.actors import Actor
from memory.admission import check_under_policy, clean_text
from memory.models import Entry, EntryVersion, Head, HeadState, Memory, Relation, RevisionKind
from proposals.actions import file_admission
from proposals.evidence import parse_time
from proposals.models import Proposal, ProposalStatus

from .. import exposed
from ..exceptions import AlreadyCompensated, CompensationConflict, NotFound
from ..models import Compensation, MaintenanceOperation
from ..permissions import require_reviewer
from ..selectors import visible_operations


@dataclass
class CompensationResult:
    operation: MaintenanceOperation
    compensation: Compensation
    revision: Any


def _lock(operation_pk: int, actor: Actor) -> tuple[Memory, Proposal, MaintenanceOperation]:
    """Memory lock, then the proposal lock; 404 when the actor may not see the operation."""
    row = (
        visible_operations(actor)
        .filter(pk=operation_pk)
        .values_list("memory_id", "proposal_id")
        .first()
    )
    if row is None:
        raise NotFound(f"No operation {operation_pk}.")
    memory = lock_memory(row[0])
    proposal = Proposal.objects.select_for_update().get(pk=row[1])
    operation = MaintenanceOperation.objects.get(pk=operation_pk)
    if Compensation.objects.filter(operation=operation).exists():
        raise AlreadyCompensated(details={"operation": operation.pk})
    return memory, proposal, operation


def _refuse_if_moved_on(memory: Memory, operation: MaintenanceOperation) -> dict[str, Entry]:
    """The operation's entries, if each head is still what the operation produced (else 409
    ``compensation_conflict`` listing what changed)."""
    expected: dict[str, dict[str, Any]] = operation.produced.get("heads", {})
    entries = {e.uid: e for e in Entry.objects.filter(memory=memory, uid__in=list(expected))}
    heads = {
        h.entry.uid: h
        for h in Head.objects.filter(entry__in=list(entries.values())).select_related(
            "entry", "version"
        )
    }
    moved = [
        {
            "entry_id": uid,
            "expected": want,
            "actual": {"version": heads[uid].version.number, "state": heads[uid].state},
        }
        for uid, want in expected.items()
        if heads[uid].version.number != want["version"] or heads[uid].state != want["state"]
    ]
    if moved:
        raise CompensationConflict(
            f"{len(moved)} affected entr{'y has' if len(moved) == 1 else 'ies have'} moved on "
            "since the operation; undo those changes first.",
            details={"moved": moved},
        )
    return entries


def _undo_plan(memory: Memory, operation: MaintenanceOperation, entries: dict[str, Entry]) -> Plan:
    """The recorded heads back (exact versions, reasons and interval starts) and the
    operation's authoritative relations retired."""
    versions = {
        (v.entry.uid, v.number): v
        for v in EntryVersion.objects.filter(entry__in=list(entries.values())).select_related(
            "entry"
        )
    }
    changes = [
        Change(
            entry=entries[item["entry_id"]],
            version=versions[(item["entry_id"], item["version"])],
            to_state=item["state"],
            state_reason=item.get("reason", "") if item["state"] != HeadState.ACTIVE else "",
            interval_started_at=parse_time(item.get("interval_started_at")),
            restart_interval=item["state"] == HeadState.ACTIVE,
            # The governance fields the approval rewrote (a consolidation's target), as before.
            attributes=dict(item.get("governance") or {}),
        )
        for item in operation.compensation_plan.get("heads", [])
    ]
    retire = list(
        Relation.objects.filter(
            memory=memory,
            revision__number=operation.compensation_plan.get("retire_relations_of_revision"),
            authoritative=True,
            retired_by__isnull=True,
        )
    )
    return Plan(changes=changes, retire=retire)


def _refile_admissions(
    memory: Memory, operation: MaintenanceOperation, entries: dict[str, Entry], *, actor: Actor
) -> None:
    """An entry put back to ``candidate`` (undoing its admission) waits for review again: its
    admission proposal is filed afresh, in this transaction, as for any candidate."""
    for item in operation.compensation_plan.get("heads", []):
        if item["state"] == HeadState.CANDIDATE:
            entry = entries[item["entry_id"]]
            head = Head.objects.select_related("version").get(entry=entry)
            file_admission(memory=memory, actor=actor, entry=entry, version=head.version)


@transaction.atomic(durable=True)
def compensate_operation(operation_pk: int, *, actor: Actor, comment: str) -> CompensationResult:
    """Undo an operation as one new ``compensate`` revision, if its entries have not moved on.
    ``comment`` (required) is why: the audit record of an undo always says it.

    400 ``invalid`` without a comment, 403 for non-reviewers, 404 when invisible, 409
    ``already_compensated`` / ``compensation_conflict``. Locks: Memory row, then the proposal
    row."""
    require_reviewer(actor)
    note = clean_text(comment, field="comment", required=True)
    memory, proposal, operation = _lock(operation_pk, actor)
    check_under_policy(memory, "comment", note)
    entries = _refuse_if_moved_on(memory, operation)
    revision = apply_plan(
        memory,
        _undo_plan(memory, operation, entries),
        actor=actor,
        kind=RevisionKind.COMPENSATE,
        reason=f"compensate operation #{operation.pk}" + (f": {note}" if note else ""),
        proposal_id=proposal.pk,
        operation_id=operation.pk,
    )
    compensation = Compensation.objects.create(
        operation=operation,
        memory=memory,
        revision_number=revision.number,
        comment=note,
        **actor.columns(on_behalf=False),
    )
    fields = proposal.transition_to(
        ProposalStatus.COMPENSATED, reason=f"compensated by revision {revision.number}"
    )
    proposal.save(update_fields=fields)
    _refile_admissions(memory, operation, entries, actor=actor)
    audit.record(
        "operation.compensated",
        actor=actor,
        memory=memory,
        label=f"operation #{operation.pk} ({operation.kind})",
        revision=revision,
        proposal_id=proposal.pk,
        operation_id=operation.pk,
        entry_ids=list(operation.produced.get("heads", {})),
        payload={"comment": note, "restored": operation.compensation_plan.get("heads", [])},
    )
    exposed.notify_after_commit(operation, memory=memory, compensated=True)
    return CompensationResult(operation, compensation, revision)
