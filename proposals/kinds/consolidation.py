"""Consolidation: redundant entries are merged into a target entry (DESIGN.md §9).

- Input: ``{target: {entry_id, version}, redundant: [{entry_id, version}], body}``.
- Verified: similarity of the target to each redundant entry (recomputed; a warning below
  ``tau_similar``), every detail and clause of the replaced bodies kept in ``body`` (lost details
  listed), no two incompatible values for one subject in ``body`` (a glued contradiction fails),
  kinds and sensitivity of the redundant entries against the target.
- Approval: the target is revised with the merged body and the evidence union (no new version
  when nothing changes), the redundant entries are forgotten with
  ``consolidated_into:<target>``, ``consolidated_into`` edges.
- Compensation: the target's head goes back to its pre-state version, the redundant entries
  are reactivated as they were, the edges retired.
- Recall: the redundant entries leave current recall; the target shows the merged body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from memory.actions import (
    Change,
    NewBody,
    NewRelation,
    check_evidence_count,
    evidence_inputs_of,
    resolve_evidence,
)
from memory.dedupe import thresholds
from memory.models import HeadState, Memory, RelationKind, RevisionKind, sensitivities_up_to
from memory.revalidation import inherited_governance
from memory.text import content_hash

from .. import bodies, verify
from ..evidence import inputs_from_json, union
from ..inputs import EntryRefIn, ProposalCommonIn
from ..models import Proposal, ProposalKind, TargetRole
from . import base


class ConsolidationIn(ProposalCommonIn):
    target = EntryRefIn()
    redundant = EntryRefIn(many=True, allow_empty=False)
    body = serializers.CharField(trim_whitespace=False)


class Consolidation(base.BodyKind):
    name = ProposalKind.CONSOLIDATION
    revision_kind = RevisionKind.CONSOLIDATE
    serializer = ConsolidationIn
    input_roles = (TargetRole.TARGET, TargetRole.REDUNDANT)
    role_labels = {
        TargetRole.TARGET: base.Wording(
            open="Target (receives the merged body on approval)",
            done="Target (received the merged body)",
            closed="Target",
        ),
        TargetRole.REDUNDANT: base.Wording(
            open="Redundant (forgotten into the target on approval)",
            done="Redundant (forgotten into the target)",
            closed="Redundant",
        ),
    }
    text_label = "Proposed merged text"
    lasting_effect = (
        "While it is in force, current recall and Context Packs return {target} with the merged "
        "body in place of {redundant}; what agents answered from the merged text is not taken "
        "back by compensation."
    )

    def refs(self, parsed: dict[str, Any]) -> list[base.Ref]:
        return [
            base.ref("target", TargetRole.TARGET, parsed["target"]),
            *base.refs_of("redundant", TargetRole.REDUNDANT, parsed["redundant"]),
        ]

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        target = found[TargetRole.TARGET][0]
        redundant = found[TargetRole.REDUNDANT]
        check_union_limit([target, *redundant], draft)
        verify.score_pairs(report, target.text(), [r.text() for r in redundant])
        _, tau_similar = thresholds(memory, report.similarity_method)
        similar = (report.similarity or 0) >= tau_similar
        report.check(
            "similarity",
            "pass" if similar else "warn",
            f"Weakest target–redundant similarity {report.similarity} "
            f"({'at or above' if similar else 'below'} {report.similarity_method} tau_similar "
            f"{tau_similar}).",
        )
        replaced = [target.text(), *(r.text() for r in redundant)]
        conflicts = bodies.glued_conflicts(draft.body, [body for _, body in replaced])
        verify.check_details(report, replaced, draft.body, conflicts)
        _check_kinds_and_sensitivity(report, target, redundant)
        return {
            "target": target.ref_json(),
            "redundant": [r.ref_json() for r in redundant],
            "body": draft.body,
        }

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, heads: base.Heads
    ) -> base.ApprovalPlan:
        target = by_role[TargetRole.TARGET][0]
        redundant = by_role.get(TargetRole.REDUNDANT, [])
        body = proposal.payload["body"]
        evidence = union(
            evidence_inputs_of(target.version),
            *(evidence_inputs_of(r.version) for r in redundant),
            inputs_from_json(proposal.evidence),
        )
        digest = content_hash(target.entry.kind, body, [e.identity for e in evidence])
        # The merged entry's governance: the target's owner (else a redundant entry's), the
        # lowest confidence, the policy's review date from now, else the earliest of theirs
        # (memory.revalidation.inherited_governance).
        governance = inherited_governance(
            [heads[target.entry_id], *(heads[r.entry_id] for r in redundant)],
            memory.policy,
            kind=target.entry.kind,
            tier=target.entry.tier,
            current_state=target.entry.current_state,
            sources=[e.source for e in evidence],
            now=timezone.now(),
            carry_review=True,
        )
        change = Change(entry=target.entry, attributes=governance)
        new_number = target.version_number
        if digest != target.content_hash:
            change.new_body = NewBody(
                body, digest, resolve_evidence(evidence), target.version.effective_at
            )
            change.restart_interval = True
            new_number += 1
        out = base.ApprovalPlan()
        out.plan.changes.append(change)
        out.after(target.entry, new_number, HeadState.ACTIVE)
        out.restore_head(target, heads[target.entry_id], governance=True)
        reason = f"consolidated_into:{target.entry.uid}"
        for r in redundant:
            out.move(r, heads[r.entry_id], HeadState.INACTIVE, reason)
            out.plan.relations.append(
                NewRelation(RelationKind.CONSOLIDATED_INTO, r.entry, target.entry)
            )
        return out

    def recall_effect(self, proposal: Proposal, by_role: base.ByRole) -> base.RecallEffect:
        body = str((proposal.payload or {}).get("body", ""))
        return base.RecallEffect(
            leaves=list(by_role.get(TargetRole.REDUNDANT, [])),
            rewrites=[(t, body) for t in by_role.get(TargetRole.TARGET, [])],
        )

    def result_pane(self, proposal: Proposal, by_role: base.ByRole) -> base.ResultPane:
        target = by_role[TargetRole.TARGET][0]
        inputs = [*by_role.get(TargetRole.TARGET, []), *by_role.get(TargetRole.REDUNDANT, [])]
        return base.ResultPane(
            title="Result",
            entry_id=target.entry.uid,
            version=target.version_number + 1,
            evidence_versions=[t.version_id for t in sorted(inputs, key=lambda t: t.position)],
            evidence_json=[proposal.evidence or []],
            inline_from=target.version.body,
            inline_title=f"Target {target.entry.uid} → result, word by word",
        )


def _check_kinds_and_sensitivity(
    report: verify.Report, target: base.Resolved, redundant: Sequence[base.Resolved]
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
            "Redundant entries are more sensitive than the target; the merged text has the "
            f"target's sensitivity, {target.entry.sensitivity}.",
            entries=higher,
        )


KIND = Consolidation()


def check_union_limit(resolved: list[base.Resolved], draft: base.Draft) -> None:
    """The evidence an approval would store — the union of the entries' head evidence and the
    proposal's — must stay within the evidence limit (413 ``too_large`` at submission)."""
    check_evidence_count(
        union(
            *(evidence_inputs_of(r.head.version) for r in resolved),
            [e.input for e in draft.evidence],
        ),
        field_name="evidence",
    )
