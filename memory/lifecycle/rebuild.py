"""The rebuild of one batch: recompute the projection rows of some entries from authoritative
records, or only compare them.

:func:`rebuild_batch` compares a batch as tuples, writes only the differing rows with one
upsert and replays every head from its revision changes. Walking a whole Memory batch by batch
under its lock, the vectors and the audit event are the maintenance job's
(``memory.maintenance.rebuild``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from ..models import LifecycleProjection, RevisionChange
from .derive import as_model, derive_rows
from .load import Span, load_bundle
from .rules import COMPARED_FIELDS, UPDATE_FIELDS


@dataclass
class RowDiff:
    """One projection row that differs from its rebuilt value."""

    entry_uid: str
    fields: dict[str, Any]


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
    ``memory.maintenance.rebuild_projection`` walks them): then every table is read by range. A
    fixed number of queries per batch either way; rows are compared as tuples and only the
    differing ones become model instances, written with one upsert.
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
