"""Proposals the system files itself inside a memory write.

:func:`file_admission` is registered on ``memory.hooks.on_candidate_written`` (a candidate's
admission proposal, in the write's transaction); :func:`file_injection_quarantine` on
``on_entry_admitted`` (injection findings on a direct write → a quarantine proposal).

:func:`file_duplicate_consolidation` is registered on ``memory.hooks.on_entry_admitted``: a new
entry at or above ``tau_same`` of an existing one gets a consolidation proposal filed by the
``system`` actor through the same intake.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from memory.actions import WriteResult
from memory.actors import Actor
from memory.dedupe import similarity, thresholds
from memory.injection import Finding, scan
from memory.models import Entry, EntryVersion, Head, HeadState, Kind, Memory

from .. import bodies
from ..exceptions import DomainError, DuplicateProposal
from ..kinds import Submission
from ..models import ProposalKind
from .intake import file_server_proposal, submit_in_transaction

log = logging.getLogger(__name__)


def file_duplicate_consolidation(
    *,
    memory: Memory,
    actor: Actor,
    result: WriteResult,
    dedupe: bool = True,
    near_duplicate_of: str | None = None,
    **_hook_kwargs: Any,
) -> None:
    """After an add: a new entry at or above ``tau_same`` of an existing one gets a consolidation
    proposal (target: the existing entry, redundant: the new entry, body: the extractive merge of
    the two, the more complete first) filed by the ``system`` actor through the same intake. Sets
    ``result.proposal_id``. Not for a pair giving one slot different values
    (``bodies.slot_differences``: a contradiction, the contradiction pass's), nor for working
    notes (the promotion pass's).

    Never fails the write: a refusal (e.g. a proposal already open for the pair) is logged and
    its transaction leaves nothing behind; an open duplicate's id is reported instead.
    """
    if not dedupe or not result.created:
        return
    if result.entry.kind == Kind.WORKING_NOTE:
        return  # a note repeated in another session is the promotion pass's signal
    duplicates = [d for d in result.near_duplicates if d.get("relation") == "duplicate_of"]
    if not duplicates:
        return
    new_body = result.version.body
    found = {
        e.uid: e
        for e in Entry.objects.for_memory(memory)
        .filter(uid__in=[d["entry_id"] for d in duplicates])
        .select_related("head__version")
    }
    # A close score with different values for one slot ("standup at 9:30" / "at 10:00",
    # "prefers dark mode" / "light mode") is a contradiction, never a merge: the merge would
    # keep one value and retire the other.
    candidates = [
        (d, found[d["entry_id"]])
        for d in duplicates
        if d["entry_id"] in found
        and not bodies.slot_differences(found[d["entry_id"]].head.version.body, new_body)
    ]
    if not candidates:
        return
    best, target = candidates[0]
    # The pair's own method: the add scored it lexically when the model cannot read one text.
    method = similarity().method_for(target.head.version.body, new_body)
    tau_same, _ = thresholds(memory, method)
    texts = sorted([target.head.version.body, new_body], key=bodies.completeness, reverse=True)
    data: dict[str, Any] = {
        "memory": memory.slug,
        "kind": ProposalKind.CONSOLIDATION.value,
        "rationale": (
            f"Near-duplicate found on add: {result.entry.uid} scores {best['score']} against "
            f"{target.uid} ({method} tau_same {tau_same})."
        ),
        "target": {"entry_id": target.uid, "version": target.head.version.number},
        "redundant": [{"entry_id": result.entry.uid, "version": result.version.number}],
        # extractive: the more complete text plus every sentence of the other carrying a
        # detail or word it misses ("… with fixtures in conftest.py" is not dropped)
        "body": bodies.merged_body(texts),
    }
    try:
        with transaction.atomic():
            filed = submit_in_transaction(
                actor=Actor.system("near-duplicate check"),
                submission=Submission.of(ProposalKind.CONSOLIDATION, data),
            )
    except DuplicateProposal as exc:
        result.proposal_id = exc.details.get("proposal")
        return
    except DomainError as exc:
        log.info("no consolidation proposal for %s: %s", result.entry.uid, exc.message)
        return
    result.proposal_id = filed.proposal.pk


def file_admission(
    *,
    memory: Memory,
    actor: Actor,
    entry: Entry,
    version: EntryVersion,
    authorities: Sequence[str] | None = None,
    findings: Sequence[Finding] | None = None,
    new_entry: bool = False,
    **_hook_kwargs: Any,
) -> int | None:
    """Right after the write of a candidate (or inside a release or compensation that made an
    entry a candidate again, under its Memory lock): its ``admission`` proposal,
    filed by the server for the writer (``proposals.kinds.admission``). ``authorities`` and
    ``findings`` are what the write already knows (read and scanned here when not given, as for
    a released or compensated candidate); ``new_entry``: the entry was created by this write.
    The candidate is withheld from recall whether or not this succeeds."""
    from ..kinds.admission import KIND, candidate_ref, filer_for, rationale_for

    if (
        new_entry
        and not Head.objects.filter(
            entry=entry, version=version, state=HeadState.CANDIDATE
        ).exists()
    ):
        return None  # a reviewer acted on it already (quarantined it) since the write committed
    if authorities is None:
        authorities = list(version.evidence.values_list("authority", flat=True))
    if findings is None:
        findings = scan(version.body)
    candidate = candidate_ref(entry, version)
    known_authorities, known_findings = authorities, findings
    proposal = file_server_proposal(
        memory,
        actor=filer_for(actor),
        kind=ProposalKind.ADMISSION,
        rationale=rationale_for(memory, entry),
        resolved=[candidate],
        checks=lambda report: KIND.checks(
            memory, candidate, known_authorities, known_findings, report
        ),
        new_entries=new_entry,
    )
    return proposal.pk


def file_injection_quarantine(
    *,
    memory: Memory,
    actor: Actor,
    result: WriteResult,
    findings: Sequence[Finding] = (),
    **_hook_kwargs: Any,
) -> None:
    """After a direct write whose text the injection scan flagged (``admission_review.
    injection_scan``): a ``quarantine`` proposal with the matched spans, filed by the system.
    Never quarantines anything itself, and never fails the write."""
    if not findings or not result.created:
        return
    rules = sorted({f.rule for f in findings})
    data = quarantine_request(memory, [(result.entry.uid, result.version.number)], rules)
    try:
        with transaction.atomic():
            submit_in_transaction(
                actor=Actor.system("injection scan"),
                submission=Submission.of(ProposalKind.QUARANTINE, data),
            )
    except DomainError as exc:
        log.info("no quarantine proposal for %s: %s", result.entry.uid, exc.message)


def quarantine_request(
    memory: Memory, entries: Sequence[tuple[str, int]], rules: Sequence[str]
) -> dict[str, Any]:
    """The injection scan's quarantine proposal for ``entries`` (uid, head version)."""
    from memory.injection import RULES_VERSION

    reason = f"injection scan ({RULES_VERSION}): {', '.join(rules)}"
    return {
        "memory": memory.slug,
        "kind": ProposalKind.QUARANTINE.value,
        "rationale": (
            "The text reads as instructions to a model; quarantine withholds it from recall "
            "until a reviewer releases it. The matched spans are in the verification."
        ),
        "entries": [{"entry_id": uid, "version": n} for uid, n in entries],
        "reason": reason,
    }
