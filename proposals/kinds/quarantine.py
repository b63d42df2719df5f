"""Quarantine: withhold entries from every recall view (DESIGN.md §9).

- Input: ``{entries: [{entry_id, version}], reason}``; filed by the injection scan
  (``proposals.passes.injection_scan``), at write time when ``admission_review.injection_scan``
  is on, or by an agent or reviewer who found a poisoned memory.
- Verified: the injection scan's spans on each entry's text (``memory.injection``); entries
  without a finding get a warning (the reason alone must carry the case).
- Approval: each entry quarantined with the reason (one ``quarantine`` revision).
- Compensation: each entry back in the state it had; a reviewer can also release one entry
  (``POST …/entries/{id}/release``).
- Recall: every entry leaves current recall.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memory import injection
from memory.admission import clean_text
from memory.models import HeadState, Memory, RevisionKind

from .. import verify
from ..inputs import EntryRefIn, ProposalCommonIn
from ..models import Proposal, ProposalKind, TargetRole
from . import base


class QuarantineIn(ProposalCommonIn):
    entries = EntryRefIn(many=True, allow_empty=False)
    reason = serializers.CharField(trim_whitespace=False, max_length=300)


class Quarantine(base.EntryListKind):
    name = ProposalKind.QUARANTINE
    changes_title = "Entries this quarantine withholds from recall"
    governance_title = "Why quarantine"
    clean_scan_note = "; the reason must carry the case"
    revision_kind = RevisionKind.QUARANTINE
    serializer = QuarantineIn
    amendable_fields = ("reason",)
    role_labels = {
        TargetRole.ENTRY: base.Wording(
            open="Quarantined on approval", done="Quarantined", closed="Entry"
        )
    }
    lasting_effect = (
        "While it is in force, every recall view and Context Pack withholds {entry}; reads served "
        "in that time did not include what it withheld, and compensation does not repeat them."
    )
    to_state = HeadState.QUARANTINED
    governs = True

    def state_reason(self, proposal: Proposal) -> str:
        return str(proposal.payload.get("reason", ""))[:300]

    def withhold_reason(self, proposal: Proposal) -> str:
        return str((proposal.payload or {}).get("reason", ""))

    def scan_of(self, proposal: Proposal, entry_id: str) -> dict[str, Any]:
        stored = (proposal.payload or {}).get("injection")
        found = stored.get(entry_id) if isinstance(stored, dict) else None
        return found if isinstance(found, dict) else {}

    def accepts(self, role: str, state: str) -> bool:
        return state != HeadState.QUARANTINED

    def clean(self, parsed: dict[str, Any], draft: base.Draft) -> None:
        draft.reason = clean_text(parsed["reason"], field="reason", required=True)

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        entries = found[TargetRole.ENTRY]
        spans: dict[str, Any] = {}
        for r in entries:
            findings = injection.scan(r.head.version.body)
            if findings:
                spans[r.entry.uid] = injection.findings_json(findings)
        clean = [r.entry.uid for r in entries if r.entry.uid not in spans]
        if spans:
            rules = sorted({rule for s in spans.values() for rule in s["rules"]})
            report.check(
                "injection_scan",
                "pass",
                f"Instruction-like text found ({', '.join(rules)}; {injection.RULES_VERSION}).",
                rules_version=injection.RULES_VERSION,
                entries=sorted(spans),
            )
        if clean:
            report.check(
                "injection_scan_clean",
                "warn",
                "The scan finds no instruction-like text in some entries; the reason must "
                "carry the case.",
                entries=clean,
            )
        return {
            "entries": [r.ref_json() for r in entries],
            "reason": draft.reason,
            "injection": spans,
        }

    def result_text(self, proposal: Proposal) -> str:
        return f"Quarantine: {proposal.payload.get('reason', '')}"


KIND = Quarantine()
