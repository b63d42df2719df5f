"""Admission: a candidate write waits for a reviewer (DESIGN.md §9, ``policy.admission_review``).

- Filed by the server only, in the transaction of the write that landed as a candidate
  (``proposals.actions.file_admission``, through ``intake.file_server_proposal``); agents cannot
  submit this kind (403).
- Input: ``{entry: {entry_id, version}}`` — the candidate.
- Verified: the evidence's source authorities against the policy's ``below_authority``, and the
  injection scan's spans on the candidate's text (``memory.injection``), as warnings.
- Approval: the candidate becomes active (one ``admit`` revision; a new lifecycle interval).
- Rejection: the candidate is retired with ``admission_rejected:<reason>`` (one
  ``reject_admission`` revision); it cannot be reactivated.
- Compensation: the entry goes back to being a candidate.
- Recall: the entry joins current recall.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from memory import injection
from memory.actions import Change
from memory.actions.plans import Plan
from memory.actors import Actor
from memory.governance import AdmissionPolicy, rejected_reason
from memory.models import Authority, Entry, EntryVersion, Head, HeadState, Memory, RevisionKind

from .. import verify
from ..inputs import EntryRefIn, ProposalCommonIn
from ..models import Proposal, ProposalKind, TargetRole
from ..verify import Report
from . import base


class AdmissionIn(ProposalCommonIn):
    entry = EntryRefIn()


class Admission(base.ProposalKindSpec):
    name = ProposalKind.ADMISSION
    revision_kind = RevisionKind.ADMIT
    serializer = AdmissionIn
    input_roles = (TargetRole.CANDIDATE,)
    role_labels = {
        TargetRole.CANDIDATE: base.Wording(
            open="Candidate (admitted on approval)",
            done="Candidate (admitted)",
            closed="Candidate",
            rejected="Candidate (forgotten on rejection)",
        )
    }
    lasting_effect = (
        "From approval, {candidate} is returned by current recall and Context Packs; compensation "
        "withholds it again as a candidate but cannot take back what agents read."
    )
    diff_inputs = False
    changes_title = "The candidate this admission lets into recall"
    outcome = "joins recall on approval"
    server_filed = True
    governs = True

    def scan_of(self, proposal: Proposal, entry_id: str) -> dict[str, Any]:
        stored = (proposal.payload or {}).get("injection")
        return stored if isinstance(stored, dict) else {}

    def accepts(self, role: str, state: str) -> bool:
        return state == HeadState.CANDIDATE

    def refs(self, parsed: dict[str, Any]) -> list[base.Ref]:
        return [base.ref("entry", TargetRole.CANDIDATE, parsed["entry"])]

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        (candidate,) = found[TargetRole.CANDIDATE]
        version = candidate.head.version
        authorities = [ev.authority for ev in version.evidence.all()]
        return self.checks(memory, candidate, authorities, injection.scan(version.body), report)

    def checks(
        self,
        memory: Memory,
        candidate: base.Resolved,
        authorities: Sequence[str],
        findings: Sequence[injection.Finding],
        report: Report,
    ) -> base.Payload:
        """The admission checks from what the write already knows: the evidence's authorities
        and the injection scan's findings on the candidate's text."""
        cited = sorted(set(authorities))
        floor = AdmissionPolicy.of(memory.policy).below_authority
        report.check(
            "source_authority",
            "warn",
            (
                f"Cites only {', '.join(cited)} sources (below {floor})."
                if cited
                else "Cites no evidence."
            ),
            authorities=cited,
            below_authority=floor,
        )
        scan = injection.findings_json(list(findings))
        if findings:
            report.check(
                "injection_scan",
                "warn",
                f"Reads as instructions to a model ({', '.join(scan['rules'])}).",  # type: ignore[arg-type]
                **scan,
            )
        else:
            report.check(
                "injection_scan", "pass", f"No instruction-like text ({injection.RULES_VERSION})."
            )
        return {"entry": candidate.ref_json(), "injection": scan if findings else None}

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, heads: base.Heads
    ) -> base.ApprovalPlan:
        out = base.ApprovalPlan()
        for t in by_role.get(TargetRole.CANDIDATE, []):
            out.move(t, heads[t.entry_id], HeadState.ACTIVE, restart_interval=True)
        return out

    def rejection_plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, reason: str
    ) -> tuple[str, Plan] | None:
        plan = Plan()
        for t in by_role.get(TargetRole.CANDIDATE, []):
            plan.changes.append(
                Change(
                    entry=t.entry, to_state=HeadState.INACTIVE, state_reason=rejected_reason(reason)
                )
            )
        return RevisionKind.REJECT_ADMISSION, plan

    def recall_effect(self, proposal: Proposal, by_role: base.ByRole) -> base.RecallEffect:
        return base.RecallEffect(
            joins=[(t.entry.uid, t.version.body) for t in by_role.get(TargetRole.CANDIDATE, [])]
        )


KIND = Admission()


def rationale_for(memory: Memory, entry: Entry) -> str:
    floor = AdmissionPolicy.of(memory.policy).below_authority or Authority.UNTRUSTED
    return (
        f"Admission review: {entry.uid} was written from sources below {floor}; "
        "it reaches recall only once a reviewer admits it."
    )


def candidate_ref(entry: Entry, version: EntryVersion) -> base.Resolved:
    """The candidate as a resolved reference (its head as just written, read from nothing)."""
    head = Head(entry=entry, version=version, state=HeadState.CANDIDATE)
    return base.Resolved(
        base.Ref("entry", TargetRole.CANDIDATE, entry.uid, version.number), entry, head
    )


def filer_for(writer: Actor) -> Actor:
    """The server files for the writer: the writer's key and owner count as "self", so nobody
    admits what they wrote."""
    return dataclasses.replace(
        Actor.system("admission review"),
        key_pk=writer.key_pk,
        user_pk=writer.user_pk,
        on_behalf_of=writer.label,
    )
