"""Applying a reviewed plan: how an approval or a compensation changes memory.

The review app decides *what* an approved proposal does (``proposals.kinds``) and records it as a
:class:`Plan` — a plain value: the changes (entry heads, new bodies, restored versions), the
authoritative relations to create and those to retire. Entries the plan creates are unsaved
:class:`~memory.models.Entry` instances with their ids already chosen, so the plan can name them
(``promoted:e_…``) before anything is written. :func:`apply_plan` is the only code that writes
them: it inserts the new entries and hands the rest to the revision writer, in the caller's
transaction and under the Memory lock it already holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..actors import Actor
from ..models import Entry, Memory, Relation, Revision
from .writer import Change, NewRelation, write_revision


@dataclass
class Plan:
    """One revision's worth of reviewed changes, not yet applied."""

    changes: list[Change] = field(default_factory=list)
    relations: list[NewRelation] = field(default_factory=list)
    retire: list[Relation] = field(default_factory=list)

    @property
    def new_entries(self) -> list[Entry]:
        """Entries the plan creates (unsaved until :func:`apply_plan`)."""
        return [c.entry for c in self.changes if c.entry.pk is None]


def new_entry(
    memory: Memory, *, uid: str, kind: str, tier: str, sensitivity: str, current_state: bool
) -> Entry:
    """An entry a plan will create: its id is fixed now, :func:`apply_plan` writes its row."""
    return Entry(
        memory=memory,
        uid=uid,
        kind=kind,
        tier=tier,
        sensitivity=sensitivity,
        current_state=current_state,
    )


def apply_plan(
    memory: Memory,
    plan: Plan,
    *,
    actor: Actor,
    kind: str,
    reason: str,
    proposal_id: int | None = None,
    operation_id: int | None = None,
) -> Revision:
    """Write ``plan`` as one revision of ``kind``: the new entries, then versions, heads,
    relations and projection through the revision writer.

    Precondition: the caller holds the Memory lock inside a transaction and has re-checked the
    pre-state the plan was built from.
    """
    created: Sequence[Entry] = plan.new_entries
    for entry in created:
        entry.save(force_insert=True)
    return write_revision(
        memory,
        actor=actor,
        kind=kind,
        reason=reason,
        changes=plan.changes,
        relations=plan.relations,
        retire=plan.retire,
        proposal_id=proposal_id,
        operation_id=operation_id,
    )
