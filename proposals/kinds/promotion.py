"""Promotion: recurring working notes become one durable entry (DESIGN.md §9).

- Input: ``{notes: [{entry_id, version}], target_kind, body}`` (target_kind: fact, preference,
  decision or constraint).
- Verified: every note is a working note; the notes come from at least
  ``promotion_min_sessions`` distinct sessions (422 ``insufficient_sessions``); the body keeps
  every detail of the notes (lost details listed); similarity of the body to each note.
  Notes may already be inactive (their session ended): they stay inactive.
- Approval: a new durable entry (tier long, the strictest sensitivity of the notes) with the
  evidence union; ``promoted_from`` edges; the notes forgotten with ``promoted:<new>``.
- Compensation: the new entry is retired, the notes restored exactly as they were.
- Recall: the active notes leave current recall; the new entry joins it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from memory.actions import NewRelation, evidence_inputs_of
from memory.actions.plans import new_entry
from memory.models import (
    Entry,
    HeadState,
    Kind,
    Memory,
    RelationKind,
    RevisionKind,
    Tier,
    new_entry_id,
    sensitivities_up_to,
)
from memory.revalidation import inherited_governance

from .. import bodies, verify
from ..evidence import inputs_from_json, union
from ..exceptions import InsufficientSessions, ValidationFailed
from ..inputs import DURABLE_KINDS, EntryRefIn, ProposalCommonIn
from ..models import Proposal, ProposalKind, TargetRole
from . import base
from .consolidation import check_union_limit


class PromotionIn(ProposalCommonIn):
    notes = EntryRefIn(many=True, allow_empty=False)
    target_kind = serializers.ChoiceField(choices=[(k.value, k.label) for k in DURABLE_KINDS])
    body = serializers.CharField(trim_whitespace=False)


class Promotion(base.BodyKind):
    name = ProposalKind.PROMOTION
    revision_kind = RevisionKind.PROMOTE
    serializer = PromotionIn
    input_roles = (TargetRole.NOTE,)
    role_labels = {
        TargetRole.NOTE: base.Wording(
            open="Working note (forgotten and promoted on approval)",
            done="Working note (forgotten, promoted)",
            closed="Working note",
        )
    }
    text_label = "Proposed promoted text"
    lasting_effect = (
        "While it is in force, the promoted entry is recalled as durable memory in place of the "
        "working notes {note}; compensation retires it and restores the notes, but answers built "
        "on it stay with the agents that received them."
    )
    inactive_roles = frozenset({TargetRole.NOTE})

    def refs(self, parsed: dict[str, Any]) -> list[base.Ref]:
        return base.refs_of("notes", TargetRole.NOTE, parsed["notes"])

    def clean(self, parsed: dict[str, Any], draft: base.Draft) -> None:
        super().clean(parsed, draft)
        draft.target_kind = parsed["target_kind"]

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        notes = found[TargetRole.NOTE]
        check_union_limit(notes, draft)
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
        verify.score_pairs(report, ("body", draft.body), [r.text() for r in notes])
        conflicts = bodies.glued_conflicts(draft.body, [r.head.version.body for r in notes])
        verify.check_details(report, [r.text() for r in notes], draft.body, conflicts)
        return {
            "notes": [r.ref_json() for r in notes],
            "target_kind": draft.target_kind,
            "body": draft.body,
        }

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, heads: base.Heads
    ) -> base.ApprovalPlan:
        notes = by_role.get(TargetRole.NOTE, [])
        body = proposal.payload["body"]
        kind = proposal.payload["target_kind"]
        evidence = union(
            *(evidence_inputs_of(n.version) for n in notes), inputs_from_json(proposal.evidence)
        )
        promoted = new_entry(
            memory,
            uid=new_entry_id(),
            kind=kind,
            tier=Tier.LONG,
            sensitivity=_strictest(n.entry for n in notes),
            current_state=False,
        )
        governance = inherited_governance(
            [heads[n.entry_id] for n in notes],
            memory.policy,
            kind=promoted.kind,
            tier=promoted.tier,
            current_state=promoted.current_state,
            sources=[e.source for e in evidence],
            now=timezone.now(),
            carry_review=True,
        )
        out = base.ApprovalPlan()
        out.create(
            promoted,
            body,
            evidence,
            f"compensated:promotion#{proposal.pk}",
            attributes=governance,
        )
        reason = f"promoted:{promoted.uid}"
        for n in notes:
            # Notes may already be inactive (their session ended); undo restores them as they were.
            out.move(n, heads[n.entry_id], HeadState.INACTIVE, reason)
            out.plan.relations.append(NewRelation(RelationKind.PROMOTED_FROM, promoted, n.entry))
        return out

    def recall_effect(self, proposal: Proposal, by_role: base.ByRole) -> base.RecallEffect:
        notes = by_role.get(TargetRole.NOTE, [])
        return base.RecallEffect(
            leaves=[n for n in notes if n.state == HeadState.ACTIVE],
            joins=[("new entry", self.result_text(proposal))],
        )

    def result_pane(self, proposal: Proposal, by_role: base.ByRole) -> base.ResultPane:
        notes = by_role.get(TargetRole.NOTE, [])
        target_kind = (proposal.payload or {}).get("target_kind", "entry")
        return base.ResultPane(
            title=f"Result: a new {target_kind} (tier long)",
            evidence_versions=[n.version_id for n in notes],
            evidence_json=[proposal.evidence or []],
        )


def _strictest(entries: Iterable[Entry]) -> str:
    order = sensitivities_up_to("restricted")
    return max((e.sensitivity for e in entries), key=order.index)


KIND = Promotion()
