"""What every maintenance pass shares: the neighbourhood, the heads it reads, filing through the
intake, and the run with its receipts.

- :func:`neighbourhood` — the bounded candidate set of one entry: the lexical channel's best
  matches among active heads plus, when a vector index or an embedding provider is present, the
  nearest vectors. Nothing outside it is ever compared, so the cost of a pass is linear in the
  entries it scans and unrelated facts are never paired.
- :func:`most_complete_first` — the members one proposal affects (what is compared of two
  bodies is in :mod:`proposals.bodies`).
- :func:`pass_job` — a pass as a maintenance job (``memory.jobs.Job``): its Celery task, the
  settings every pass reads, and what every pass is (ungated, it files proposals).
- :class:`Pass` — one run: parameters, receipts (one item per candidate with its inputs and
  why), counts, and :meth:`Pass.propose`, which files a proposal through the normal intake
  (``proposals.actions.submit_proposal``: verified, deduplicated, one open proposal per affected
  set) as the ``system`` actor, and never twice for the same set (a proposal already filed for
  it, in any status but stale, is reported instead). A dry run files nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Max
from django.utils import timezone

from memory import maintenance
from memory.actors import Actor
from memory.jobs import Job, Number, Setting
from memory.models import (
    EntryVersion,
    Head,
    HeadState,
    LifecycleProjection,
    MaintenanceRun,
    Memory,
    Validity,
)

from ..bodies import completeness
from ..exceptions import DomainError, DuplicateProposal
from ..models import MAX_AFFECTED_ENTRIES, Proposal, ProposalKind, ProposalStatus, affected_key
from .candidates import Neighbour, Neighbourhoods, own_text, token_set

#: Neighbours taken from each channel for one entry.
NEIGHBOURS = 20
#: Entries read per keyset batch.
BATCH = 200
#: Entries per keyset batch of the passes that look up neighbourhoods (``neighbourhoods``: a
#: fixed number of lexical queries per batch, so larger batches amortize them).
NEIGHBOURHOOD_BATCH = 1000
#: Entries one run scans at most (the rest waits for the next run; counts say so).
DEFAULT_MAX_SCAN = 20_000
#: Proposals one run files at most.
DEFAULT_MAX_PROPOSALS = 50
#: The settings every pass reads (:func:`start`), under ``policy.jobs.<pass>``.
PASS_SETTINGS: Mapping[str, Setting] = {
    "max_scan": Number(1, 10_000_000),
    "max_proposals": Number(1, 10_000),
}


def pass_job(
    *,
    name: str,
    runner: Callable[..., MaintenanceRun],
    description: str,
    settings: Mapping[str, Setting] | None = None,
    after_session_end: bool = False,
) -> Job:
    """A pass as a maintenance job: run by the Celery task ``proposals.<name>``; its policy
    section takes :data:`PASS_SETTINGS` and the pass's own ``settings``. A real run needs no
    ``jobs.<name>.enabled`` (that switch is the beat schedule's): a pass only files proposals,
    which change nothing until a reviewer approves them."""
    return Job(
        name=name,
        runner=runner,
        task=f"proposals.{name}",
        description=description,
        settings={**PASS_SETTINGS, **(settings or {})},
        gated=False,
        after_session_end=after_session_end,
        files_proposals=True,
    )


# --- Neighbourhood -----------------------------------------------------------------------------


def _vector_neighbours(
    memory: Memory, entry_pk: int, body: str, limit: int, view: str
) -> list[int]:
    """Nearest entries by vector, when an embedding provider is configured and reads ``body``
    (``memory.embeddings.model_reads``); else none."""
    from memory.embeddings import model_reads
    from memory.search import vector_channel

    if not model_reads(body):
        return []
    return [
        c.entry_pk
        for c in vector_channel(memory.pk, body, view=view, limit=limit + 1)
        if c.entry_pk != entry_pk
    ][:limit]


def neighbourhood(
    memory: Memory, entry_pk: int, body: str, limit: int = NEIGHBOURS, *, heads: bool = False
) -> list[int]:
    """Pks of the entries nearest to ``body`` (lexical ∪ vector), at most 2·limit: active
    heads, or every head (``heads=True``: a finished session's notes are inactive). One lexical
    channel call (up to ``memory.search.lexical.MAX_STATEMENTS`` queries): the passes use
    :func:`neighbourhoods` per batch instead."""
    from memory.search import ACTIVE, HEADS, lexical_channel, query_terms

    view = HEADS if heads else ACTIVE
    lexical = [
        c.entry_pk
        for c in lexical_channel(
            memory.pk, query_terms(body), view=view, limit=limit, exclude_entry_pks=[entry_pk]
        )
    ]
    seen = dict.fromkeys(lexical)
    for pk in _vector_neighbours(memory, entry_pk, body, limit, view):
        seen.setdefault(pk)
    seen.pop(entry_pk, None)
    return list(seen)


def neighbourhoods(
    finder: Neighbourhoods, rows: Mapping[int, HeadRow | Neighbour]
) -> dict[int, list[int]]:
    """Pks of the entries nearest to each row's head (lexical ∪ vector), at most 2·limit each:
    the lexical neighbours of the whole batch from ``finder`` (a fixed number of queries per
    batch, :mod:`.candidates`), then, only when an embedding provider is configured, each
    entry's vector neighbours (one vector lookup per entry: the index has no batched lookup;
    the batch's bodies are read for it in one query)."""
    from memory.embeddings import get_provider
    from memory.search import ACTIVE, HEADS

    lexical = finder.of({pk: r.searchable_text for pk, r in rows.items()})
    if get_provider() is None:
        return lexical
    view = HEADS if finder.heads else ACTIVE
    bodies = {pk: r.body for pk, r in load_heads(finder.memory, rows, evidence=False).items()}
    out: dict[int, list[int]] = {}
    for pk in rows:
        seen = dict.fromkeys(lexical.get(pk, []))
        for n in _vector_neighbours(finder.memory, pk, bodies.get(pk, ""), finder.limit, view):
            seen.setdefault(n)
        seen.pop(pk, None)
        out[pk] = list(seen)
    return out


def most_complete_first(rows: Iterable[HeadRow]) -> list[HeadRow]:
    """The members of a cluster one proposal affects: the most complete first
    (:func:`completeness`, then the lower entry id), at most ``MAX_AFFECTED_ENTRIES``."""
    ranked = sorted(rows, key=lambda r: (*(-x for x in completeness(r.body)), r.entry_pk))
    return ranked[:MAX_AFFECTED_ENTRIES]


# --- Heads ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadRow:
    entry_pk: int
    uid: str
    kind: str
    tier: str
    session_id: str
    sensitivity: str
    current_state: bool
    state: str
    version_pk: int
    version: int
    body: str
    validity: str
    importance: int
    recorded_at: datetime | None
    effective_at: datetime | None
    time_known: bool
    pinned: bool
    protected: bool
    evidence: int
    #: The head version's stored analyzer tokens (space-joined), as the index holds them.
    searchable_text: str = ""
    state_reason: str = ""

    def ref(self) -> dict[str, Any]:
        return {"entry_id": self.uid, "version": self.version}

    @property
    def when(self) -> datetime | None:
        """The time the entry's content is about (effective, else recorded), None if unknown."""
        if not self.time_known:
            return None
        return self.effective_at or self.recorded_at

    @property
    def tokens(self) -> frozenset[str]:
        """The distinct analyzer tokens of the head version (from the stored token stream)."""
        return token_set(self.searchable_text)


_HEAD_COLUMNS = (
    "entry_id",
    "entry__uid",
    "entry__kind",
    "entry__tier",
    "entry__session_id",
    "entry__sensitivity",
    "entry__current_state",
    "state",
    "version_id",
    "version__number",
    "version__body",
    "entry__projection__validity",
    "entry__projection__importance",
    "entry__projection__recorded_at",
    "entry__projection__effective_at",
    "entry__projection__time_known",
    "pinned",
    "entry__projection__protected",
    "version__searchable_text",
    "state_reason",
    "version__term_count",
)


def evidence_counts(entry_pks: Iterable[int]) -> dict[int, int]:
    """The evidence cited by each entry's head version (entries citing none are left out)."""
    pks = list(entry_pks)
    if not pks:
        return {}
    return dict(
        EntryVersion.objects.filter(entry_id__in=pks, entry__head__version_id=F("pk"))
        .annotate(n=Count("evidence"))
        .values_list("entry_id", "n")
    )


def load_heads(
    memory: Memory, entry_pks: Iterable[int], *, evidence: bool = True
) -> dict[int, HeadRow]:
    """Head rows (version body and tokens, projection, evidence count) of ``entry_pks`` in
    ``memory``: two queries of plain rows whatever their number (an entry without a projection
    row reads as validity "", importance 0, time unknown, unprotected). ``evidence=False``:
    one query, the evidence not counted (every row reads 0; see :func:`evidence_counts`)."""
    pks = list(entry_pks)
    if not pks:
        return {}
    cited = evidence_counts(pks) if evidence else {}
    rows = (
        Head.objects.filter(memory_id=memory.pk, entry_id__in=pks)
        .order_by("entry_id")
        .values_list(*_HEAD_COLUMNS)
    )
    out: dict[int, HeadRow] = {}
    for (
        entry_pk,
        uid,
        kind,
        tier,
        session_id,
        sensitivity,
        current_state,
        state,
        version_pk,
        version,
        body,
        validity,
        importance,
        recorded_at,
        effective_at,
        time_known,
        pinned,
        protected,
        searchable_text,
        state_reason,
        term_count,
    ) in rows:
        out[entry_pk] = HeadRow(
            entry_pk=entry_pk,
            uid=uid,
            kind=kind,
            tier=tier,
            session_id=session_id,
            sensitivity=sensitivity,
            current_state=current_state,
            state=state,
            version_pk=version_pk,
            version=version,
            body=body,
            validity=validity or "",
            importance=importance or 0,
            recorded_at=recorded_at,
            effective_at=effective_at,
            time_known=bool(time_known),
            pinned=pinned,
            protected=bool(protected),
            evidence=int(cited.get(entry_pk, 0)),
            searchable_text=own_text(searchable_text, term_count),
            state_reason=state_reason or "",
        )
    return out


def scan_pks(memory: Memory, qs: Any, *, max_scan: int, batch: int = BATCH) -> Iterable[list[int]]:
    """Keyset batches of entry pks from a projection queryset, at most ``max_scan`` in all,
    reporting progress after each batch (``memory.maintenance.report_progress``)."""
    last = 0
    taken = 0
    total = min(max_scan, qs.count())
    maintenance.report_progress(0, total)
    while taken < max_scan:
        size = min(batch, max_scan - taken)
        pks = list(
            qs.filter(entry_id__gt=last)
            .order_by("entry_id")
            .values_list("entry_id", flat=True)[:size]
        )
        if not pks:
            return
        taken += len(pks)
        last = pks[-1]
        yield pks
        maintenance.report_progress(taken, total)


def resume_cursor(memory: Memory, job: str) -> int:
    """Where the last real run of ``job`` on ``memory`` stopped (its ``counts.cursor``; 0: from
    the start)."""
    last = (
        MaintenanceRun.objects.filter(memory_id=memory.pk, job=job, dry_run=False)
        .aggregate(last=Max("pk"))
        .get("last")
    )
    if last is None:
        return 0
    counts = MaintenanceRun.objects.filter(pk=last).values_list("counts", flat=True).first() or {}
    value = counts.get("cursor", 0) if isinstance(counts, dict) else 0
    return int(value) if isinstance(value, int) else 0


def resumed_scan(run: Pass, qs: Any, *, batch: int = BATCH) -> Iterator[list[int]]:
    """Keyset batches of ``qs`` (a projection queryset) for ``run``, at most its ``max_scan``:
    a real run starts after the entry where the previous real run of the job stopped
    (:func:`resume_cursor`; a dry run from the start) and wraps around at the end — the run
    that reaches the last entry records cursor 0, so the next starts over. Records
    ``parameters.after``, ``counts.cursor`` (the last entry examined, or 0) and
    ``counts.wrapped``; ``counts.cursor`` is kept current after each batch."""
    after = resume_cursor(run.memory, run.job) if not run.dry_run else 0
    run.parameters["after"] = after
    remaining = qs.filter(entry_id__gt=after)
    last = after
    run.counts["cursor"] = after
    run.counts["wrapped"] = False
    for pks in scan_pks(run.memory, remaining, max_scan=run.parameters["max_scan"], batch=batch):
        last = pks[-1]
        run.counts["cursor"] = last
        yield pks
    done = not remaining.filter(entry_id__gt=last).exists()
    run.counts["cursor"] = 0 if done else last
    run.counts["wrapped"] = done


#: One batch of :func:`neighbourhood_scan`.
ScanBatch = tuple[
    list[int], dict[int, Neighbour], dict[int, list[int]], dict[int, HeadRow | Neighbour]
]


def neighbourhood_scan(run: Pass, qs: Any, finder: Neighbourhoods) -> Iterator[ScanBatch]:
    """The batches of :func:`resumed_scan` (each counted as ``scanned``) with their
    neighbourhoods: ``(pks, batch, near, light)`` — the batch's light rows (kind, state,
    tokens), each entry's nearest entries (:func:`neighbourhoods`), and the light rows of the
    batch and of all those neighbours. A pass reads full head rows only for the pairs that
    score above its threshold."""
    for pks in resumed_scan(run, qs, batch=NEIGHBOURHOOD_BATCH):
        run.count("scanned", len(pks))
        batch = finder.neighbours(pks)
        near = neighbourhoods(finder, batch)
        light: dict[int, HeadRow | Neighbour] = dict(batch)
        light.update(finder.neighbours({n for ns in near.values() for n in ns} - set(batch)))
        yield pks, batch, near, light


def keep_cursor(run: Pass) -> None:
    """A run that scans nothing (a trigger that did not fire) keeps the previous position."""
    if not run.dry_run:
        run.counts.setdefault("cursor", resume_cursor(run.memory, run.job))


def active_projection(memory: Memory) -> Any:
    return LifecycleProjection.objects.filter(memory_id=memory.pk, state=HeadState.ACTIVE)


# --- The run -------------------------------------------------------------------------------------


@dataclass
class Pass:
    """One run of a pass: collect receipts, file proposals, record the run."""

    memory: Memory
    actor: Actor
    job: str
    dry_run: bool
    parameters: dict[str, Any]
    started_at: datetime = field(default_factory=timezone.now)
    items: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    proposals: list[int] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def add_item(self, item: dict[str, Any]) -> None:
        self.items.append(item)

    def record(self, item: dict[str, Any], action: str, **details: Any) -> None:
        """Complete ``item`` with the ``action`` taken (and its ``details``), count the action
        and add the item."""
        item.update(action=action, **details)
        self.count(action)
        self.add_item(item)

    @property
    def filer(self) -> Actor:
        """Proposals are filed by the system, so whoever asked for the run may still review
        them (nobody approves what they submitted)."""
        return Actor.system(f"maintenance:{self.job}")

    @property
    def max_proposals(self) -> int:
        return int(self.parameters.get("max_proposals", DEFAULT_MAX_PROPOSALS))

    def existing_proposal(self, kind: str, entry_pks: Iterable[int]) -> Proposal | None:
        """A proposal already filed for exactly this set and kind, in any status but stale (a
        rejected one is not filed again; a stale one was about other versions)."""
        return (
            Proposal.objects.filter(
                memory_id=self.memory.pk, kind=kind, affected_key=affected_key(entry_pks)
            )
            .exclude(status=ProposalStatus.STALE)
            .order_by("-pk")
            .first()
        )

    def report_existing(self, kind: str, entry_pks: Sequence[int], item: dict[str, Any]) -> bool:
        """Whether a proposal was already filed for this set (then ``item`` says so)."""
        existing = self.existing_proposal(kind, entry_pks)
        if existing is None:
            return False
        self.record(item, "already_proposed", proposal=existing.pk, status=existing.status)
        return True

    def propose(
        self, data: dict[str, Any], *, kind: str, entry_pks: Sequence[int], item: dict[str, Any]
    ) -> int | None:
        """File one proposal through the intake (unless a dry run, or one exists already).
        Completes ``item`` with the action taken and appends it. Returns the proposal id."""
        from ..requests import submit_request

        if self.report_existing(kind, entry_pks, item):
            return None
        moved = not_filable(self.memory, kind, entry_pks)
        if moved:
            # What the pass read moved on (or a supersession replaced it) since it was read:
            # a proposal is filed on the active heads only.
            self.record(item, "skipped_not_current_head", entries=moved)
            return None
        if self.counts.get("proposed", 0) + self.counts.get("would_propose", 0) >= (
            self.max_proposals
        ):
            self.record(item, "skipped_limit")
            return None
        if self.dry_run:
            self.record(item, "would_propose")
            return None
        try:
            result = submit_request(
                actor=self.filer, data={"memory": self.memory.slug, "kind": kind, **data}
            )
        except DuplicateProposal as exc:
            self.record(item, "already_proposed", proposal=exc.details.get("proposal"))
            return None
        except DomainError as exc:
            self.record(item, "refused", code=exc.code, message=exc.message)
            return None
        pid = result.proposal.pk
        self.proposals.append(pid)
        self.record(item, "proposed", proposal=pid)
        return pid

    def finish(self) -> MaintenanceRun:
        counts = {**self.counts, "proposals": self.proposals, "items": len(self.items)}
        return maintenance.record_run(
            self.memory,
            actor=self.actor,
            job=self.job,
            dry_run=self.dry_run,
            parameters=self.parameters,
            counts=counts,
            items=self.items,
            started_at=self.started_at,
            entry_ids=self.touched,
        )


#: The validities an entry a pass files a proposal on may have, by proposal kind: a current
#: head (an unresolved conflict included); a promotion also takes the notes of an ended
#: session (inactive), and a quarantine any head the scan matched. Never a superseded entry.
FILABLE: dict[str, tuple[str, ...]] = {
    ProposalKind.PROMOTION: (Validity.CURRENT, Validity.UNRESOLVED_CONFLICT, Validity.INACTIVE),
    ProposalKind.QUARANTINE: tuple(v for v in Validity.values if v != Validity.QUARANTINED),
}
DEFAULT_FILABLE: tuple[str, ...] = (Validity.CURRENT, Validity.UNRESOLVED_CONFLICT)


def not_filable(memory: Memory, kind: str, entry_pks: Sequence[int]) -> list[str]:
    """The entries (ids) among ``entry_pks`` a pass may not file a ``kind`` proposal on as they
    are now (read at filing, one query): a head that is not active (but a promotion's notes),
    or a validity outside :data:`FILABLE` — a superseded entry, a candidate."""
    allowed = FILABLE.get(kind, DEFAULT_FILABLE)
    rows = LifecycleProjection.objects.filter(
        memory_id=memory.pk, entry_id__in=list(entry_pks)
    ).values_list("entry_id", "entry__uid", "validity")
    found = {pk: (uid, validity) for pk, uid, validity in rows}
    return sorted(
        found.get(pk, (str(pk), ""))[0]
        for pk in entry_pks
        if pk not in found or found[pk][1] not in allowed
    )


def start(memory: Memory, *, actor: Actor, job: str, dry_run: bool, **parameters: Any) -> Pass:
    """A pass over ``memory``. A real run needs no ``jobs.<job>.enabled``: that switch is the
    beat schedule's, and a pass only files proposals that change nothing until approved (the
    caller — ``maintenance.run_job`` — checks the actor may run maintenance)."""
    memory = Memory.objects.get(pk=memory.pk)
    policy = memory.policy or {}
    cfg = maintenance.job_policy(policy, job)
    params = {
        "max_scan": int(cfg.get("max_scan", DEFAULT_MAX_SCAN)),
        "max_proposals": int(cfg.get("max_proposals", DEFAULT_MAX_PROPOSALS)),
        **parameters,
    }
    return Pass(memory=memory, actor=actor, job=job, dry_run=dry_run, parameters=params)


def uids(rows: Iterable[HeadRow]) -> list[str]:
    return [r.uid for r in rows]
