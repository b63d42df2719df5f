"""Batch add: up to :data:`MAX_BATCH` adds in one request (``entries/batch``, ``manage.py
import``, the MCP ``remember`` tool with ``entries``).

All or nothing. Every item is judged exactly as one add (:func:`~.entries.add_entry`): the same
cleaning (:func:`~.new_entry.clean_new_entry`: size limits, secrets, refused personal data),
the same clearance rule, the same evidence resolution, the same admission review (a write
citing only sources below the policy's authority lands as a candidate with an ``admission``
proposal), the same injection scan and the same exact-duplicate no-op against the Memory's
active and candidate entries — and against the items before it in the batch. Any refused item
refuses the whole batch (:class:`~memory.exceptions.BatchRefused`, the per-item errors keyed by
index) before any lock, and nothing is written. Otherwise one durable transaction under the
Memory lock writes every new entry in **one** ``add`` revision.

What differs from one add, as DESIGN.md §7 says: the bounded near-duplicate check is deferred
to the offline health pass (``near_duplicates`` job), and the vectors of the batch are made
after the commit, in batches (one task for the revision, :mod:`memory.vectors`).

Idempotency: with a key, the response is stored with the hash of the request; the same key and
the same entries answer that response again (nothing written), other entries under the key are
409 ``idempotency_key_reused``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import audit, injection
from ..actors import Actor
from ..admission import clean_idempotency_key
from ..exceptions import (
    BatchRefused,
    DomainError,
    Forbidden,
    IdempotencyKeyReused,
    TooLarge,
    ValidationFailed,
)
from ..governance import ADMISSION_PENDING, AdmissionPolicy
from ..models import (
    BATCH_KEY_TTL_HOURS,
    Authority,
    BatchImportKey,
    Entry,
    Head,
    HeadState,
    Memory,
    Revision,
    RevisionKind,
    Source,
    sensitivities_up_to,
)
from ..permissions import require_writer
from ..personal_data import refused_kinds
from .common import WriteResult, label_of
from .entries import _after_admission, _file_admission
from .evidence import ResolvedEvidence, resolve_evidence
from .new_entry import NewEntry, clean_new_entry
from .writer import Change, NewBody, lock_memory, write_revision

log = logging.getLogger(__name__)

#: The most entries one batch may carry (``STEWARD_BATCH_MAX_ENTRIES``).
MAX_BATCH = 1000


def max_batch() -> int:
    return int(getattr(settings, "STEWARD_BATCH_MAX_ENTRIES", MAX_BATCH))


@dataclass
class BatchResult:
    """The outcome of a batch: one :class:`WriteResult` per item, in order, the revision that
    wrote the new ones (None when every item was an exact duplicate), and the response body
    (:func:`batch_out`), which a replay of the same ``Idempotency-Key`` returns as stored."""

    items: list[WriteResult] = field(default_factory=list)
    revision: Revision | None = None
    replayed: bool = False
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Item:
    new: NewEntry
    resolved: list[ResolvedEvidence]
    findings: list[injection.Finding]


def request_hash(entries: Sequence[Mapping[str, Any]]) -> str:
    """The hash an ``Idempotency-Key`` is bound to: the entries as parsed, canonical JSON."""
    canonical = json.dumps(list(entries), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def add_entries(
    memory: Memory,
    *,
    actor: Actor,
    entries: Sequence[Mapping[str, Any]],
    idempotency_key: str | None = None,
) -> BatchResult:
    """Remember up to :data:`MAX_BATCH` entries, all or nothing (module docstring).

    Preconditions: each item has the shape of one add's fields (the edges parse them with the
    single add's serializer). Refusals: 403 for a role that may not write; 413 ``too_large``
    over :func:`max_batch` items; :class:`BatchRefused` (nothing written) when any item is
    refused; 409 ``idempotency_key_reused``. Effects: one ``add`` revision holding every new
    entry, an ``entry.added`` audit event per entry; after the commit, each candidate's
    admission proposal (its own transaction), the quarantine proposals of injection findings,
    and the batch's vectors. Locks: the Memory row, after every check.
    """
    require_writer(actor)
    key = clean_idempotency_key(idempotency_key)
    limit = max_batch()
    if not entries:
        raise ValidationFailed(details={"entries": ["At least one entry."]})
    if len(entries) > limit:
        raise TooLarge(
            f"A batch holds at most {limit} entries.",
            details={"entries": [f"At most {limit} entries (got {len(entries)})."]},
        )
    digest_of_request = request_hash(entries) if key else ""
    if key:
        replay = _replay(memory, actor, key, digest_of_request)
        if replay is not None:
            return replay
    items = _admit(memory, actor, entries)
    result = _write_batch(memory, actor, items, key, digest_of_request)
    if result.replayed:
        return result
    _after_commit(memory, actor, result, items)
    if any(r.proposal_id is not None for r in result.items):
        # The candidates' proposals are filed after the commit: the answer (and, under a key,
        # the stored one a replay returns) names them.
        result.response = batch_out(result)
        if key:
            BatchImportKey.objects.filter(memory=memory, submitted_by=actor.id, key=key).update(
                response=result.response
            )
    return result


def _admit(memory: Memory, actor: Actor, entries: Sequence[Mapping[str, Any]]) -> list[_Item]:
    """Every item cleaned, its clearance checked and its evidence resolved (three queries for
    the whole batch), before any lock; :class:`BatchRefused` naming each refused item."""
    refuse = refused_kinds(memory.policy)
    allowed = sensitivities_up_to(actor.clearance)
    scan = AdmissionPolicy.of(memory.policy).injection_scan
    errors: dict[int, DomainError] = {}
    cleaned: dict[int, NewEntry] = {}
    for i, fields in enumerate(entries):
        try:
            new = clean_new_entry(refuse=refuse, **fields)
        except DomainError as exc:
            errors[i] = exc
            continue
        if new.sensitivity not in allowed:
            errors[i] = Forbidden(
                f"Your key's clearance is {actor.clearance}; it may not write a "
                f"{new.sensitivity} entry.",
                details={"sensitivity": [f"At most {actor.clearance} for this key."]},
            )
            continue
        cleaned[i] = new
    names = {ev.source for new in cleaned.values() for ev in new.evidence}
    known = set(Source.objects.filter(name__in=names).values_list("name", flat=True))
    for i, new in list(cleaned.items()):
        missing = sorted({ev.source for ev in new.evidence} - known)
        if missing:
            errors[i] = ValidationFailed(
                f"Unknown source(s): {', '.join(missing)}. Register them first.",
                details={"evidence": [f"unknown source: {m}" for m in missing]},
            )
            del cleaned[i]
    if errors:
        raise BatchRefused(errors)
    flat = resolve_evidence([ev for new in cleaned.values() for ev in new.evidence])
    out: list[_Item] = []
    start = 0
    for i in range(len(entries)):
        new = cleaned[i]
        resolved = flat[start : start + len(new.evidence)]
        start += len(new.evidence)
        out.append(_Item(new, resolved, injection.scan(new.body) if scan else []))
    return out


def _replay(memory: Memory, actor: Actor, key: str, digest: str) -> BatchResult | None:
    record = (
        BatchImportKey.objects.filter(
            memory=memory, submitted_by=actor.id, key=key, expires_at__gt=timezone.now()
        )
        .only("request_hash", "response")
        .first()
    )
    if record is None:
        return None
    if record.request_hash != digest:
        raise IdempotencyKeyReused()
    return BatchResult(replayed=True, response=record.response)


@transaction.atomic(durable=True)
def _write_batch(
    memory: Memory, actor: Actor, items: list[_Item], key: str | None, digest: str
) -> BatchResult:
    """Under the Memory lock: the exact-duplicate no-ops (against the Memory and the items
    before), the new entries in one revision, their audit events, the idempotency record."""
    memory = lock_memory(memory.pk)
    if key:
        replay = _replay(memory, actor, key, digest)
        if replay is not None:
            return replay
    gate = AdmissionPolicy.of(memory.policy)
    existing = _live_duplicates(memory, actor, {it.new.content_hash for it in items})
    results: list[WriteResult | None] = [None] * len(items)
    first_of: dict[str, int] = {}
    fresh: list[tuple[int, Entry, bool, list[str]]] = []
    for i, it in enumerate(items):
        digest_i = it.new.content_hash
        if digest_i in existing:
            results[i] = _duplicate_of(existing[digest_i])
            continue
        if digest_i in first_of:
            continue  # resolved below, once the first occurrence is written
        first_of[digest_i] = i
        authorities = [
            r.declaration.authority if r.declaration else Authority.UNTRUSTED for r in it.resolved
        ]
        entry = Entry(
            memory=memory,
            kind=it.new.kind,
            tier=it.new.tier,
            session_id=it.new.session_id,
            sensitivity=it.new.sensitivity,
            current_state=it.new.current_state,
        )
        fresh.append((i, entry, gate.needs_review(authorities), authorities))
    revision = None
    if fresh:
        Entry.objects.bulk_create([entry for _, entry, _, _ in fresh])
        now = timezone.now()
        changes = [
            Change(
                entry=entry,
                to_state=HeadState.CANDIDATE if candidate else HeadState.ACTIVE,
                state_reason=ADMISSION_PENDING if candidate else "",
                new_body=NewBody(
                    items[i].new.body,
                    items[i].new.content_hash,
                    items[i].resolved,
                    items[i].new.effective_at,
                ),
                restart_interval=True,
                new_entry=True,
                attributes=items[i].new.governance(memory.policy, now),
            )
            for i, entry, candidate, _ in fresh
        ]
        revision = write_revision(memory, actor=actor, kind=RevisionKind.ADD, changes=changes)
        audit_rows = []
        for (i, entry, candidate, authorities), change in zip(fresh, changes, strict=True):
            assert change.result_version is not None
            state = change.to_state
            results[i] = WriteResult(
                entry=entry,
                version=change.result_version,
                revision=revision,
                created=True,
                state=state,
                authorities=authorities if candidate else [],
            )
            audit_rows.append(
                (
                    label_of(items[i].new.body),
                    [entry.uid],
                    {
                        "kind": items[i].new.kind,
                        "tier": items[i].new.tier,
                        "version": 1,
                        "content_hash": items[i].new.content_hash,
                        "batch": True,
                        **({"state": state} if candidate else {}),
                    },
                )
            )
        audit.record_many(
            "entry.added", actor=actor, memory=memory, revision=revision, items=audit_rows
        )
    for i, it in enumerate(items):
        if results[i] is None:
            first = results[first_of[it.new.content_hash]]
            assert first is not None
            results[i] = _duplicate_of(first)
    done = [r for r in results if r is not None]
    result = BatchResult(items=done, revision=revision)
    result.response = batch_out(result, head=memory.head)
    if key:
        # Expired records go as new ones come (the expiry index finds them): no beat job.
        BatchImportKey.objects.filter(expires_at__lte=timezone.now()).delete()
        BatchImportKey.objects.create(
            memory=memory,
            submitted_by=actor.id,
            key=key,
            request_hash=digest,
            response=result.response,
            expires_at=timezone.now() + timedelta(hours=BATCH_KEY_TTL_HOURS),
        )
    return result


def _live_duplicates(memory: Memory, actor: Actor, digests: set[str]) -> dict[str, WriteResult]:
    """Active or candidate entries within the actor's clearance holding one of ``digests``,
    as the no-op answer each would give (one query; the lowest entry id per hash, as one add
    picks)."""
    heads = (
        Head.objects.filter(
            memory=memory,
            state__in=[HeadState.ACTIVE, HeadState.CANDIDATE],
            version__memory=memory,
            version__content_hash__in=sorted(digests),
            entry__sensitivity__in=sensitivities_up_to(actor.clearance),
        )
        .select_related("entry", "version")
        .order_by("entry_id")
    )
    out: dict[str, WriteResult] = {}
    for head in heads:
        out.setdefault(
            head.version.content_hash,
            WriteResult(head.entry, head.version, None, created=False, state=head.state),
        )
    return out


def _duplicate_of(found: WriteResult) -> WriteResult:
    return WriteResult(
        entry=found.entry,
        version=found.version,
        revision=None,
        created=False,
        reason="exact_duplicate",
        state=found.state,
    )


def _after_commit(memory: Memory, actor: Actor, result: BatchResult, items: list[_Item]) -> None:
    """What one add does after its commit, per new entry: a candidate's admission proposal,
    the quarantine proposal of injection findings (the near-duplicate check is deferred)."""
    gate = AdmissionPolicy.of(memory.policy)
    for write, it in zip(result.items, items, strict=True):
        if not write.created:
            continue
        if write.state == HeadState.CANDIDATE:
            _file_admission(memory, actor, write, it.findings if gate.injection_scan else None)
        elif it.findings:
            _after_admission(
                memory, actor, write, dedupe=False, near_duplicate_of=None, findings=it.findings
            )


def item_out(index: int, result: WriteResult) -> dict[str, Any]:
    """One item of the batch's answer: the single add's body and its status."""
    body: dict[str, Any] = {
        "index": index,
        "status": 201 if result.created else 200,
        "entry_id": result.entry.uid,
        "version": result.version.number,
        "content_hash": result.version.content_hash,
        "created": result.created,
    }
    if result.revision is not None:
        body["revision"] = result.revision.number
    if result.reason:
        body["reason"] = result.reason
    if result.state:
        body["state"] = result.state
    if result.proposal_id is not None:
        body["proposal"] = result.proposal_id
    return body


def batch_out(result: BatchResult, *, head: int | None = None) -> dict[str, Any]:
    """``{results, revision}``: ``revision`` is the batch's revision, or the Memory's head when
    every item was an exact duplicate (nothing written)."""
    if result.revision is not None:
        revision: int | None = result.revision.number
    elif head is not None:
        revision = head
    else:
        revision = result.response.get("revision")
    return {
        "results": [item_out(i, r) for i, r in enumerate(result.items)],
        "revision": revision,
        "created": sum(1 for r in result.items if r.created),
    }
