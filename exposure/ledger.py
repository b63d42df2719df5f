"""Writing and purging the exposure ledger (API.md "Recall"; docs/exposure.md).

The request path never writes. :func:`record` — registered on ``memory.effects.served`` — turns
what one recall served into at most :data:`MAX_PER_READ` events (memory, entry, version, key,
run, surface, time) and either publishes them to the broker (``exposure.write``, a Celery task)
or, in the embedded mode (no broker), writes them :data:`WRITE_DELAY` seconds later in a timer
thread — the same hand-off as the recall events (``lib.deferred``). :func:`write` inserts them
in batches of :data:`WRITE_BATCH` rows.

Policy ``exposure: {enabled, retention_days}`` — on, 30 days, unless the Memory says otherwise.
:func:`purge` (``exposure.purge``, hourly in beat) deletes rows older than each Memory's
retention in batches of :data:`PURGE_BATCH`, at most :data:`PURGE_MAX_BATCHES` per Memory per run,
so one run never holds a long transaction and the table stays bounded at the retention.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lib.deferred import Deferred
from lib.identity import Actor
from memory.models import Entry, Memory

from .models import Exposure

#: Rows one read may produce (a search returns at most 50 hits, a pack at most 8 items).
MAX_PER_READ = 64
#: Events kept waiting in the embedded buffer at most (the oldest are dropped beyond it).
BUFFER_MAX = 50_000
#: Seconds after a read before the embedded write runs.
WRITE_DELAY = 2.0
#: Rows inserted per statement.
WRITE_BATCH = 1000
#: Rows deleted per statement by the purge, and statements per Memory per purge run.
PURGE_BATCH = 5000
PURGE_MAX_BATCHES = 200
#: The policy's defaults.
DEFAULT_RETENTION_DAYS = 30

#: (memory pk, entry pk or public entry id, version, key, run id, via, ISO time)
Event = tuple[int, int | str, int, str, str, str, str]


def settings_of(memory: Memory) -> dict[str, Any]:
    raw = (memory.policy or {}).get("exposure") or {}
    return raw if isinstance(raw, dict) else {}


def enabled(memory: Memory) -> bool:
    return bool(settings_of(memory).get("enabled", True))


def retention_days(memory: Memory) -> int:
    return int(settings_of(memory).get("retention_days", DEFAULT_RETENTION_DAYS))


def record(
    memory: Memory,
    actor: Actor,
    *,
    run_id: str,
    via: str,
    items: Sequence[tuple[int | str, int]],
) -> int:
    """Queue the versions one recall served (no database write here). Returns how many events
    were queued (0 when the Memory's policy turns the ledger off)."""
    if not items or not enabled(memory):
        return 0
    now = timezone.now().isoformat()
    events: list[Event] = [
        (memory.pk, ref, int(version), actor.id, run_id, via, now)
        for ref, version in dict.fromkeys(items)
    ][:MAX_PER_READ]
    return queue.submit(events)


def flush() -> int:
    """Write everything waiting in the embedded buffer now. Returns the rows written."""
    return queue.flush()


def discard() -> int:
    """Drop what waits in the embedded buffer and stop its timer (the test suite, between
    tests: a timer left running would write into the next test's database). Returns how many
    events were dropped."""
    return queue.discard()


def pending() -> int:
    return queue.pending()


def write(events: Iterable[Sequence[Any]]) -> int:
    """Insert the events (public entry ids resolved with one query per Memory; unknown ones
    dropped). Returns the rows written."""
    events = list(events)
    uids: dict[int, set[str]] = {}
    for e in events:
        if isinstance(e[1], str):
            uids.setdefault(int(e[0]), set()).add(e[1])
    pk_of: dict[tuple[int, str], int] = {}
    for memory_id, refs in uids.items():
        for uid, pk in Entry.objects.filter(memory_id=memory_id, uid__in=refs).values_list(
            "uid", "pk"
        ):
            pk_of[(memory_id, uid)] = pk
    rows = []
    for memory_id, ref, version, key, run_id, via, at in events:
        entry_pk = pk_of.get((int(memory_id), ref)) if isinstance(ref, str) else ref
        when = parse_datetime(at) if isinstance(at, str) else at
        if entry_pk is None or when is None:
            continue
        rows.append(
            Exposure(
                memory_id=int(memory_id),
                entry_id=int(entry_pk),
                version=int(version),
                key=str(key)[:200],
                run_id=str(run_id)[:128],
                via=str(via)[:16],
                at=when,
            )
        )
    Exposure.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    return len(rows)


def purge(*, now: datetime | None = None) -> int:
    """Delete every row older than its Memory's retention (bounded batches; see the module).
    Returns the rows deleted."""
    now = now or timezone.now()
    deleted = 0
    for memory in Memory.objects.only("pk", "policy").order_by("pk"):
        cutoff = now - timedelta(days=retention_days(memory))
        for _ in range(PURGE_MAX_BATCHES):
            ids = list(
                Exposure.objects.filter(memory_id=memory.pk, at__lt=cutoff)
                .order_by("at")
                .values_list("pk", flat=True)[:PURGE_BATCH]
            )
            if not ids:
                break
            n, _ = Exposure.objects.filter(pk__in=ids).delete()
            deleted += n
            if len(ids) < PURGE_BATCH:
                break
    return deleted


#: The hand-off: the ``exposure.write`` task (attached in ``ExposureConfig.ready``) or the
#: embedded buffer written :data:`WRITE_DELAY` seconds after the read.
queue: Deferred[Event] = Deferred(
    "exposures", lambda events: write(events), delay=WRITE_DELAY, maxlen=BUFFER_MAX
)
