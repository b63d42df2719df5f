"""Integrity verification across the whole write path (``manage.py verify_integrity``).

Checks, per Memory, that the authoritative records agree with each other and with the derived
rows:

* ``content_hash`` — every entry version's stored text, kind and evidence still hash to its
  ``content_hash`` (a body rewritten in place, even to the same length, is found);
* ``revision_gap`` — revisions are numbered 1..head without a gap and the Memory's head is the
  latest revision;
* ``head_replay`` / ``projection`` — every head equals the replay of its revision changes and
  every lifecycle projection row equals a rebuild (``memory.maintenance.rebuild_projection`` in
  check mode: it writes nothing);
* ``approval_records`` — every approved (or compensated) proposal has exactly one operation and
  exactly one applying revision, which the operation names; a compensated one has exactly one
  compensation and one compensating revision; no other proposal has any of them;
* ``pending_on_moved_entry`` — no pending proposal's recorded pre-state differs from its
  entry's head (such a proposal must have gone stale with the write that moved the entry).

Every query is bounded per Memory (aggregates and keyset batches), so it can run against a live
database; it reads only. A check that cannot run because the records it reads are broken (a
revision row deleted under a version) is itself a finding (``unreadable``), never a crash.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import Count, F, Max, Min, Q

from memory.actors import Actor
from memory.maintenance import rebuild_projection
from memory.models import EntryVersion, Evidence, Memory, Revision, RevisionKind
from memory.text import content_hash
from proposals.models import OPEN_STATUSES, Proposal, ProposalStatus, ProposalTarget

from .models import Compensation, MaintenanceOperation

DECIDED_WITH_OPERATION = (ProposalStatus.APPROVED, ProposalStatus.COMPENSATED)


@dataclass(frozen=True)
class Finding:
    memory: str
    check: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.memory} {self.check} {self.subject}: {self.detail}"


Add = Callable[[str, str, str], None]


@dataclass
class MemoryReport:
    memory: str
    revisions: int = 0
    entries: int = 0
    proposals_checked: int = 0
    findings: list[Finding] = field(default_factory=list)


def verify_memory(memory: Memory, *, batch_size: int = 500) -> MemoryReport:
    """What was checked in one Memory and every finding (none when it is sound)."""
    report = MemoryReport(memory=memory.slug)

    def add(check: str, subject: str, detail: str) -> None:
        report.findings.append(Finding(memory.slug, check, subject, detail))

    memory.refresh_from_db(fields=["head"])
    stats = Revision.objects.filter(memory=memory).aggregate(
        n=Count("pk"), low=Min("number"), high=Max("number")
    )
    report.revisions = stats["n"]
    if stats["n"] and (stats["low"] != 1 or stats["high"] != stats["n"]):
        add(
            "revision_gap",
            f"revisions {stats['low']}..{stats['high']}",
            f"{stats['n']} revisions where {stats['high']} are numbered; first missing "
            f"#{_first_missing(memory)}",
        )
    if (stats["high"] or 0) != memory.head:
        add(
            "revision_gap",
            "head",
            f"Memory head is {memory.head}, latest revision is {stats['high'] or 0}",
        )

    for name, check in (
        ("content_hash", lambda: _check_content_hashes(memory, add, batch_size)),
        ("projection", lambda: _check_projection(memory, add, report, batch_size)),
        ("approval_records", lambda: _check_approval_records(memory, add, report)),
        ("pending_on_moved_entry", lambda: _check_pending_targets(memory, add)),
    ):
        try:
            check()
        except Exception as exc:  # broken records: report, go on with the other checks
            add("unreadable", name, f"the check could not run: {type(exc).__name__}: {exc}")
    return report


def _check_projection(memory: Memory, add: Add, report: MemoryReport, batch_size: int) -> None:
    rebuilt = rebuild_projection(
        memory, actor=Actor.system("verify_integrity"), check=True, batch_size=batch_size
    )
    report.entries = rebuilt.entries
    for uid in rebuilt.head_mismatches:
        add("head_replay", uid, "head differs from the replay of its revision changes")
    for row in rebuilt.differing:
        fields = ", ".join(
            f"{name} live={live!r} rebuilt={new!r}"
            for name, (live, new) in sorted(row.fields.items())
        )
        add("projection", row.entry_uid, fields)


def _check_content_hashes(memory: Memory, add: Add, batch_size: int) -> None:
    """Recompute every version's content hash (kind, body, evidence identities) in keyset
    batches: two queries per batch."""
    last = 0
    while True:
        rows = list(
            EntryVersion.objects.filter(memory=memory, pk__gt=last)
            .order_by("pk")
            .values_list("pk", "entry__uid", "entry__kind", "number", "body", "content_hash")[
                :batch_size
            ]
        )
        if not rows:
            return
        refs: dict[int, list[str]] = defaultdict(list)
        for vid, source, ref in Evidence.objects.filter(
            version_id__in=[r[0] for r in rows]
        ).values_list("version_id", "source__name", "ref"):
            refs[vid].append(f"{source}|{ref}")
        for vid, uid, kind, number, body, stored in rows:
            if content_hash(kind, body, refs[vid]) != stored:
                add(
                    "content_hash",
                    f"{uid} v{number}",
                    "the stored text, kind or evidence no longer hash to the version's "
                    "content_hash (rewritten in place)",
                )
        last = rows[-1][0]


def _first_missing(memory: Memory) -> int:
    """The lowest revision number absent from 1..head (keyset walk, bounded batches)."""
    expected = 1
    last = 0
    while True:
        numbers = list(
            Revision.objects.filter(memory=memory, number__gt=last)
            .order_by("number")
            .values_list("number", flat=True)[:1000]
        )
        if not numbers:
            return expected
        for n in numbers:
            if n != expected:
                return expected
            expected += 1
        last = numbers[-1]


@dataclass
class _ApprovalRecords:
    """A Memory's approval records by proposal: how many applying and compensating revisions
    each has, the number of its applying revision, its operation (pk, revision number), and
    which operations were compensated."""

    revision_counts: dict[int | None, tuple[int, int]]
    applying_number: dict[int | None, int]
    operations: dict[int, tuple[int, int]]
    compensated_ops: set[int]


def _approval_records(memory: Memory) -> _ApprovalRecords:
    """Read the Memory's approval records (four queries)."""
    by_proposal: dict[int | None, tuple[int, int]] = {
        pid: (n_apply, n_comp)
        for pid, n_apply, n_comp in Revision.objects.filter(
            memory=memory, proposal_id__isnull=False
        )
        .values("proposal_id")
        .annotate(
            applying=Count("pk", filter=~Q(kind=RevisionKind.COMPENSATE)),
            compensating=Count("pk", filter=Q(kind=RevisionKind.COMPENSATE)),
        )
        .values_list("proposal_id", "applying", "compensating")
    }
    applying_number = dict(
        Revision.objects.filter(memory=memory, proposal_id__isnull=False)
        .exclude(kind=RevisionKind.COMPENSATE)
        .values_list("proposal_id", "number")
    )
    operations = {
        pid: (op_pk, number)
        for op_pk, pid, number in MaintenanceOperation.objects.filter(memory=memory).values_list(
            "pk", "proposal_id", "revision_number"
        )
    }
    compensated_ops = set(
        Compensation.objects.filter(memory=memory).values_list("operation_id", flat=True)
    )
    return _ApprovalRecords(by_proposal, applying_number, operations, compensated_ops)


def _check_proposal_records(pid: int, status: str, records: _ApprovalRecords, add: Add) -> None:
    """Report where one proposal's operation, applying and compensating revisions and
    compensation do not match its status."""
    subject = f"proposal #{pid} ({status})"
    n_apply, n_comp = records.revision_counts.get(pid, (0, 0))
    op = records.operations.get(pid)
    if status in DECIDED_WITH_OPERATION:
        if op is None:
            add("approval_records", subject, "no operation")
        if n_apply != 1:
            add("approval_records", subject, f"{n_apply} applying revisions, expected 1")
        elif op is not None and op[1] != records.applying_number.get(pid):
            add(
                "approval_records",
                subject,
                f"operation names revision {op[1]}, the applying revision is "
                f"{records.applying_number.get(pid)}",
            )
        expected_comp = 1 if status == ProposalStatus.COMPENSATED else 0
        has_comp = int(op is not None and op[0] in records.compensated_ops)
        if n_comp != expected_comp or has_comp != expected_comp:
            add(
                "approval_records",
                subject,
                f"{n_comp} compensating revisions and {has_comp} compensation records, "
                f"expected {expected_comp}",
            )
    elif op is not None or n_apply or n_comp:
        add(
            "approval_records",
            subject,
            f"not approved, yet {int(op is not None)} operations and {n_apply + n_comp} revisions",
        )


def _check_approval_records(memory: Memory, add: Add, report: MemoryReport) -> None:
    """Check every proposal of the Memory against its approval records."""
    records = _approval_records(memory)
    statuses = dict(Proposal.objects.filter(memory=memory).values_list("pk", "status"))
    report.proposals_checked = len(statuses)
    for pid, status in statuses.items():
        _check_proposal_records(pid, status, records, add)


def _check_pending_targets(memory: Memory, add: Add) -> None:
    moved = (
        ProposalTarget.objects.filter(memory=memory, proposal__status__in=OPEN_STATUSES)
        .exclude(version_id=F("entry__head__version_id"), state=F("entry__head__state"))
        .values_list(
            "proposal_id",
            "entry__uid",
            "version_number",
            "state",
            "entry__head__version__number",
            "entry__head__state",
        )
        .order_by("proposal_id", "position")
    )
    for pid, uid, number, state, head_number, head_state in moved:
        add(
            "pending_on_moved_entry",
            f"proposal #{pid}",
            f"{uid} recorded at v{number} {state}, head is v{head_number} {head_state}",
        )


def verify_all(slug: str | None = None) -> list[MemoryReport]:
    memories = Memory.objects.order_by("pk")
    if slug:
        memories = memories.filter(slug=slug)
    return [verify_memory(m) for m in memories.iterator()]
