"""The governance card of an ``admission`` or ``quarantine`` proposal page: the reason given
for withholding the entries, and where their text reads as instructions to a model (the
injection scan stored on the proposal at submission)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from proposals.kinds import kind_of
from proposals.models import Proposal, ProposalTarget

from .links import entry_href

#: Characters of the entry's text shown on each side of a matched span.
SPAN_CONTEXT = 40


@dataclass
class SpanView:
    """One matched span of the injection scan, with a little of the text around it."""

    rule: str
    start: int
    end: int
    match: str
    before: str = ""
    after: str = ""


@dataclass
class InjectionView:
    """The injection scan of one affected entry, as stored on the proposal at submission."""

    entry_id: str
    href: str
    rules_version: str = ""
    rules: list[str] = field(default_factory=list)
    spans: list[SpanView] = field(default_factory=list)


@dataclass
class Governance:
    """What an ``admission`` or ``quarantine`` proposal asks the reviewer to weigh: the reason
    given for withholding, and where the entries' text reads as instructions to a model."""

    reason: str
    findings: list[InjectionView]

    @property
    def flagged(self) -> int:
        return sum(1 for f in self.findings if f.spans)


def _spans(scan: dict[str, Any], body: str) -> list[SpanView]:
    out = []
    for span in scan.get("spans") or []:
        if not isinstance(span, dict):
            continue
        start, end = int(span.get("start") or 0), int(span.get("end") or 0)
        # Context only when the stored offsets still fit the text the scan read.
        fits = 0 <= start <= end <= len(body)
        before = body[max(start - SPAN_CONTEXT, 0) : start] if fits else ""
        after = body[end : end + SPAN_CONTEXT] if fits else ""
        out.append(
            SpanView(
                rule=str(span.get("rule", "")),
                start=start,
                end=end,
                match=str(span.get("match", "")),
                before=("…" if fits and start > SPAN_CONTEXT else "") + before,
                after=after + ("…" if fits and end + SPAN_CONTEXT < len(body) else ""),
            )
        )
    return out


def governance(proposal: Proposal, targets: Sequence[ProposalTarget]) -> Governance | None:
    """The governance card of an admission or quarantine proposal (None for other kinds). The
    scan is the one stored in the payload at submission (``injection``): for an admission one
    scan of the candidate, for a quarantine one per entry that has findings."""
    spec = kind_of(proposal.kind)
    if not spec.governs:
        return None
    slug = proposal.memory.slug
    findings = []
    for t in targets:
        uid = t.entry.uid
        scan = spec.scan_of(proposal, uid)
        findings.append(
            InjectionView(
                entry_id=uid,
                href=entry_href(slug, uid),
                rules_version=str(scan.get("rules_version", "")),
                rules=[str(r) for r in scan.get("rules") or []],
                spans=_spans(scan, t.version.body),
            )
        )
    return Governance(reason=spec.withhold_reason(proposal), findings=findings)
