"""Supersession: an old entry is superseded by a successor (DESIGN.md §9).

- Input: ``{old: {entry_id, version}, successor: {entry_id, version} | {body, kind, evidence?}}``.
- Verified: the successor must change something (a new body equal to the old one is refused,
  422 ``noop_rewrite``; an existing successor that already supersedes the old entry too); the
  similarity of old and successor is recomputed; what the successor drops of the old body
  (values, names, paths, clauses) is listed as lost details, and a successor stating two
  incompatible values for one subject fails.
- Approval: a ``supersedes`` edge; a new successor is created (the old entry's tier — long for a
  session note — and sensitivity, the submitted evidence); the old entry's head is recorded but
  unchanged (its validity becomes superseded through the edge).
- Compensation: the edge is retired, a created successor retired, the old entry current again.
- Recall: the old entry leaves current recall; a new successor joins it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from memory.actions import NewRelation, clean_evidence, resolve_evidence
from memory.actions.plans import new_entry
from memory.admission import clean_body
from memory.models import (
    Memory,
    Relation,
    RelationKind,
    RevisionKind,
    Tier,
    new_entry_id,
)
from memory.revalidation import inherited_governance
from memory.text import content_hash

from .. import bodies, verify
from ..evidence import evidence_json, inputs_from_json, union
from ..exceptions import NoopRewrite
from ..inputs import EntryRefIn, ProposalCommonIn, SuccessorField
from ..models import Proposal, ProposalKind, TargetRole
from . import base


class SupersessionIn(ProposalCommonIn):
    old = EntryRefIn()
    successor = SuccessorField(
        help_text="{entry_id, version} of an existing entry, or {body, kind, evidence?} (new)"
    )


class Supersession(base.ProposalKindSpec):
    name = ProposalKind.SUPERSESSION
    revision_kind = RevisionKind.SUPERSEDE
    serializer = SupersessionIn
    amendable_fields = ("successor",)
    input_roles = (TargetRole.OLD,)
    role_labels = {
        TargetRole.OLD: base.Wording(
            open="Old (becomes superseded)",
            done="Old (became superseded)",
            closed="Old",
        ),
        TargetRole.SUCCESSOR: base.Wording(open="Successor", done="Successor", closed="Successor"),
    }
    check_wording = {
        "changes_something": base.Wording(
            open="The old entry would become superseded.",
            done="The old entry became superseded.",
            closed="The successor differs from the old entry.",
        )
    }
    text_label = "Proposed successor text"
    lasting_effect = (
        "While it is in force, recall labels {old} superseded and leaves it out of current recall "
        "and Context Packs; agents that acted on the successor instead are not told when "
        "compensation restores it."
    )

    def refs(self, parsed: dict[str, Any]) -> list[base.Ref]:
        out = [base.ref("old", TargetRole.OLD, parsed["old"])]
        if "entry_id" in parsed["successor"]:
            out.append(base.ref("successor", TargetRole.SUCCESSOR, parsed["successor"]))
        return out

    def clean(self, parsed: dict[str, Any], draft: base.Draft) -> None:
        successor = parsed["successor"]
        if "entry_id" in successor:
            return
        items = clean_evidence(successor.get("evidence"), field_name="successor.evidence")
        draft.successor_evidence = resolve_evidence(items)
        body = clean_body(successor["body"], field="successor.body")
        draft.successor_new = {
            "body": body,
            "kind": successor["kind"],
            "content_hash": content_hash(successor["kind"], body, [i.identity for i in items]),
        }

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        old = found[TargetRole.OLD][0]
        existing = found.get(TargetRole.SUCCESSOR, [])
        if existing:
            successor_json = _verify_existing(report, old, existing[0])
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
            _check_successor(report, old, new_body)
            successor_json = {
                **draft.successor_new,
                "evidence": evidence_json(draft.successor_evidence or []),
                "tier": old.entry.tier,
                "sensitivity": old.entry.sensitivity,
            }
        report.check("changes_something", "pass", "The old entry would become superseded.")
        return {"old": old.ref_json(), "successor": successor_json}

    def resubmission(self, proposal: Proposal) -> dict[str, Any]:
        payload = super().resubmission(proposal)
        successor = dict(payload.get("successor") or {})
        if "body" in successor:  # a new successor: as submitted, evidence as inputs
            successor = {
                "body": successor["body"],
                "kind": successor["kind"],
                "evidence": [
                    {k: e[k] for k in ("source", "ref", "observed_at", "quote") if e.get(k)}
                    for e in successor.get("evidence") or []
                ],
            }
        return {**payload, "successor": successor}

    def amended(self, fields: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
        """A new successor amended with some of its keys (``{"body": …}``) keeps the others: an
        amendment that rewords the text does not drop its kind or its evidence. Naming an
        existing entry (``entry_id``) replaces the successor whole."""
        out = super().amended(fields, changes)
        current, new = fields.get("successor"), changes.get("successor")
        if (
            isinstance(current, dict)
            and isinstance(new, dict)
            and "body" in current
            and "entry_id" not in new
        ):
            out["successor"] = {**current, **new}
        return out

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, heads: base.Heads
    ) -> base.ApprovalPlan:
        old = by_role[TargetRole.OLD][0]
        old_head = heads[old.entry_id]
        out = base.ApprovalPlan()
        # The old entry's head does not change (its validity does, through the edge); it is
        # listed so the revision records what it touched.
        out.move(old, old_head, old.state, old_head.state_reason)
        existing = by_role.get(TargetRole.SUCCESSOR)
        if existing:
            successor = existing[0].entry
        else:
            spec = proposal.payload["successor"]
            evidence = union(
                inputs_from_json(spec.get("evidence") or []), inputs_from_json(proposal.evidence)
            )
            kind = spec.get("kind") or old.entry.kind
            successor = new_entry(
                memory,
                uid=new_entry_id(),
                kind=kind,
                tier=old.entry.tier if old.entry.tier != Tier.SESSION else Tier.LONG,
                sensitivity=old.entry.sensitivity,
                current_state=old.entry.current_state,
            )
            # The successor takes the old entry's owner and confidence, and the review date
            # the policy gives it now (memory.revalidation.inherited_governance).
            governance = inherited_governance(
                [old_head],
                memory.policy,
                kind=successor.kind,
                tier=successor.tier,
                current_state=successor.current_state,
                sources=[e.source for e in evidence],
                now=timezone.now(),
                carry_review=False,
            )
            out.create(
                successor,
                spec["body"],
                evidence,
                f"compensated:supersession#{proposal.pk}",
                attributes=governance,
            )
        out.plan.relations.append(NewRelation(RelationKind.SUPERSEDES, successor, old.entry))
        return out

    def recall_effect(self, proposal: Proposal, by_role: base.ByRole) -> base.RecallEffect:
        successor = (proposal.payload or {}).get("successor") or {}
        joins = []
        if not by_role.get(TargetRole.SUCCESSOR) and successor.get("body"):
            joins.append(("new successor", str(successor["body"])))
        return base.RecallEffect(leaves=list(by_role.get(TargetRole.OLD, [])), joins=joins)

    def result_text(self, proposal: Proposal) -> str:
        successor = (proposal.payload or {}).get("successor") or {}
        return str(successor.get("body", ""))

    def proposed_text(self, payload: dict[str, Any]) -> str | None:
        """A new successor's body (None for an existing successor)."""
        successor = payload.get("successor")
        if isinstance(successor, dict) and isinstance(successor.get("body"), str):
            return str(successor["body"])
        return None

    def text_changes(self, proposal: Proposal, text: str) -> dict[str, Any]:
        successor = dict(self.resubmission(proposal).get("successor") or {})
        return {"successor": {**successor, "body": text}}

    def result_pane(self, proposal: Proposal, by_role: base.ByRole) -> base.ResultPane:
        old = by_role.get(TargetRole.OLD, [])
        inline_from = old[0].version.body if old else ""
        inline_title = "Old → successor, word by word"
        existing = by_role.get(TargetRole.SUCCESSOR)
        if existing:
            successor = existing[0]
            return base.ResultPane(
                title="Successor",
                entry_id=successor.entry.uid,
                version=successor.version_number,
                role=TargetRole.SUCCESSOR,
                evidence_versions=[successor.version_id],
                union=False,
                inline_from=inline_from,
                inline_title=inline_title,
            )
        spec = (proposal.payload or {}).get("successor") or {}
        return base.ResultPane(
            title=f"Successor: a new {spec.get('kind', 'entry')}",
            evidence_json=[spec.get("evidence") or [], proposal.evidence or []],
            inline_from=inline_from,
            inline_title=inline_title,
        )


def _verify_existing(
    report: verify.Report, old: base.Resolved, successor: base.Resolved
) -> dict[str, Any]:
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
    verify.score_pairs(report, ("old", old.head.version.body), [successor.text()])
    _check_successor(report, old, successor.head.version.body)
    if verify.same_text(old.head.version.body, successor.head.version.body):
        report.check(
            "successor_differs",
            "warn",
            "The successor says the same as the old entry; a consolidation may fit better.",
        )
    return successor.ref_json()


def _check_successor(report: verify.Report, old: base.Resolved, body: str) -> None:
    """What the successor ``body`` drops of the old entry — a value it replaces is listed too
    ("09:00 CET" for "10:00 CET"), as are its clauses ("never", "only", "if") — and whether
    it states two incompatible values for one subject itself; the reviewer acknowledges each."""
    conflicts = bodies.glued_conflicts(body, [old.head.version.body])
    verify.check_details(report, [old.text()], body, conflicts)


KIND = Supersession()
