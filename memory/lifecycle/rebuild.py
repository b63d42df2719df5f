"""The rebuild: recompute a Memory's projection from authoritative records, or only compare.

A rebuild walks a Memory's heads in keyset spans, compares each batch under the Memory lock as
tuples, writes only the differing rows with one upsert, replays every head from its revision
changes, and ends with ``ANALYZE`` (``memory.db_stats``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q

from ..actors import Actor
from ..embeddings import EmbeddingProvider
from ..models import Head, LifecycleProjection, Memory, RevisionChange
from .derive import as_model, derive_rows
from .load import Span, load_bundle
from .rules import COMPARED_FIELDS, UPDATE_FIELDS


@dataclass
class RowDiff:
    """One projection row that differs from its rebuilt value."""

    entry_uid: str
    fields: dict[str, Any]


@dataclass
class RebuildReport:
    memory_slug: str
    entries: int = 0
    differing: list[RowDiff] = field(default_factory=list)
    head_mismatches: list[str] = field(default_factory=list)
    written: int = 0
    vectors_missing: int = 0
    vectors_created: int = 0

    @property
    def clean(self) -> bool:
        return not self.differing and not self.head_mismatches and not self.vectors_missing


def replayed_heads(entry_pks: Sequence[int]) -> dict[int, tuple[int, str, str]]:
    """(version, state, reason) of each entry's head as its revision changes replay it: the
    last change (highest revision number) wins."""
    out: dict[int, tuple[int, str, str]] = {}
    rows = (
        RevisionChange.objects.filter(entry_id__in=entry_pks)
        .order_by("revision__number", "id")
        .values_list("entry_id", "to_version_id", "to_state", "state_reason")
    )
    for entry_pk, version_pk, state, reason in rows:
        out[entry_pk] = (version_pk, state, reason)
    return out


def rebuild_batch(
    entry_pks: Sequence[int], *, write: bool, span: Span | None = None
) -> tuple[list[RowDiff], list[str], int]:
    """Rebuild the projection of a batch of entries from authoritative records.

    Returns (differing rows, entries whose head does not match the replay of its revisions,
    rows written). ``write=False`` only compares. The caller holds the Memory lock when writing.
    ``span`` says that ``entry_pks`` are exactly the heads of one Memory in a keyset range (as
    :func:`rebuild_projection` walks them): then every table is read by range. A fixed number
    of queries per batch either way; rows are compared as tuples and only the differing ones
    become model instances, written with one upsert.
    """
    pks = sorted(set(entry_pks))
    if not pks:
        return [], [], 0
    bundle = load_bundle(pks, span)
    rebuilt = derive_rows(bundle, pks)
    live_rows = LifecycleProjection.objects.filter(
        span.on("entry_id") if span is not None else Q(entry_id__in=pks)
    ).values_list("entry_id", *COMPARED_FIELDS)
    live = {row[0]: row[1:] for row in live_rows}
    diffs: list[RowDiff] = []
    changed: list[LifecycleProjection] = []
    for pk, row in rebuilt.items():
        values = row[2:]
        old = live.get(pk)
        if old == values:
            continue
        if old is None:
            delta: dict[str, Any] = {"row": ("missing", "present")}
        else:
            delta = {
                name: (a, b)
                for name, a, b in zip(COMPARED_FIELDS, old, values, strict=True)
                if a != b
            }
            if not delta:
                continue
        diffs.append(RowDiff(bundle.heads[pk].uid, delta))
        changed.append(as_model(row))
    replay = bundle.replay if bundle.replay is not None else replayed_heads(pks)
    mismatched = [
        head.uid
        for pk, head in sorted(bundle.heads.items())
        if replay.get(pk) != (head.version_id, head.state, head.state_reason)
    ]
    written = 0
    if write and changed:
        # One upsert: missing rows inserted, differing ones overwritten (the recall counters,
        # which are not derived, are kept).
        LifecycleProjection.objects.bulk_create(
            changed, update_conflicts=True, unique_fields=["entry"], update_fields=UPDATE_FIELDS
        )
        written = len(changed)
    return diffs, mismatched, written


def rebuild_projection(
    memory: Memory,
    *,
    actor: Actor,
    check: bool = False,
    batch_size: int = 500,
    progress: Callable[[RebuildReport], object] | None = None,
) -> RebuildReport:
    """Rebuild (or, with ``check``, only compare) the lifecycle projection of one Memory.

    Walks the Memory's heads in bounded batches (keyset on the entry key, each batch a
    :class:`Span` read by range); each batch is compared under the Memory lock, so a concurrent
    writer can neither interleave with it nor wait long. Also replays each entry's revision
    changes against its head, and — when an embedding provider is configured — brings the
    derived vectors of head versions up to date (outside the lock: embedding is slow). A real
    rebuild ends with ``ANALYZE`` of the projection (and vector) tables on PostgreSQL, and, if it
    wrote something, records one ``projection.rebuilt`` audit event. ``progress(report)`` is
    called after every batch.
    """
    from ..actions import lock_memory
    from ..db_stats import PROJECTION_TABLES, VECTOR_TABLES, analyze
    from ..embeddings import get_provider

    report = RebuildReport(memory_slug=memory.slug)
    provider = get_provider()
    for span, pks in _head_batches(memory.pk, batch_size):
        with transaction.atomic():
            lock_memory(memory.pk)
            diffs, mismatched, written = rebuild_batch(pks, write=not check, span=span)
        report.entries += len(pks)
        report.differing += diffs
        report.head_mismatches += mismatched
        report.written += written
        if provider is not None:
            _bring_vectors_up_to_date(provider, pks, report, check=check)
        if progress is not None:
            progress(report)
    if not check:
        # Planner statistics for what was (re)written: a rebuild is a bulk load.
        analyze(PROJECTION_TABLES + (VECTOR_TABLES if report.vectors_created else ()))
    if not check and (report.written or report.vectors_created):
        _record_rebuild(memory, actor, report)
    return report


def _head_batches(memory_pk: int, batch_size: int) -> Iterator[tuple[Span, list[int]]]:
    """The Memory's head entry keys in keyset batches, each with the span it covers (an entry
    has a projection row once it has a head)."""
    last = 0
    while True:
        pks = list(
            Head.objects.filter(memory_id=memory_pk, entry_id__gt=last)
            .order_by("entry_id")
            .values_list("entry_id", flat=True)[:batch_size]
        )
        if not pks:
            return
        yield Span(memory_pk, last, pks[-1]), pks
        last = pks[-1]


def _bring_vectors_up_to_date(
    provider: EmbeddingProvider, pks: list[int], report: RebuildReport, *, check: bool
) -> None:
    """Count (``check``) or create the missing vectors of the batch's head versions."""
    from ..vectors import index_versions, missing_versions

    missing = list(missing_versions(provider).filter(entry_id__in=pks).values_list("pk", flat=True))
    if check:
        report.vectors_missing += len(missing)
    else:
        report.vectors_created += index_versions(missing, provider=provider)


def _record_rebuild(memory: Memory, actor: Actor, report: RebuildReport) -> None:
    """The ``projection.rebuilt`` audit event of a rebuild that wrote something."""
    from .. import audit

    with transaction.atomic():
        audit.record(
            "projection.rebuilt",
            actor=actor,
            memory=memory,
            label=f"{report.written} rows rewritten",
            payload={
                "entries": report.entries,
                "written": report.written,
                "vectors_created": report.vectors_created,
                "head_mismatches": len(report.head_mismatches),
            },
        )
