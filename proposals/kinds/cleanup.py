"""Cleanup: a bounded list of low-value entries is forgotten (DESIGN.md §9; filed by the
capacity trigger or an agent).

- Input: ``{entries: [{entry_id, version}]}`` (at most ``MAX_AFFECTED_ENTRIES``).
- Verified: a warning for pinned entries and for entries above importance 1.
- Approval: each entry forgotten with ``cleanup:v1``.
- Compensation: every entry reactivated exactly as it was.
- Recall: every entry leaves current recall. The page shows the entries, no result.
"""

from __future__ import annotations

from memory.models import HeadState, Memory, RevisionKind

from .. import verify
from ..inputs import EntryRefIn, ProposalCommonIn
from ..models import Proposal, ProposalKind, TargetRole
from . import base

CLEANUP_REASON = "cleanup:v1"


class CleanupIn(ProposalCommonIn):
    entries = EntryRefIn(many=True, allow_empty=False)


class Cleanup(base.EntryListKind):
    name = ProposalKind.CLEANUP
    changes_title = "Entries this cleanup forgets"
    diff_legend = False
    outcome = "forgotten (cleanup:v1)"
    revision_kind = RevisionKind.CLEANUP
    serializer = CleanupIn
    role_labels = {
        TargetRole.ENTRY: base.Wording(
            open="Forgotten on approval (cleanup:v1)",
            done="Forgotten (cleanup:v1)",
            closed="Entry",
        )
    }
    lasting_effect = (
        "While it is in force, current recall and Context Packs leave out {entry}; reads served "
        "in that time are not repeated when compensation restores what it retired."
    )
    to_state = HeadState.INACTIVE

    def state_reason(self, proposal: Proposal) -> str:
        return CLEANUP_REASON

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        entries = found[TargetRole.ENTRY]
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
        return {"entries": [r.ref_json() for r in entries]}


KIND = Cleanup()
