"""Recall events (DESIGN §6, §8): which entries search and the Context Pack served, folded into
``recall_count`` / ``last_recalled_at`` of the lifecycle projection, for the retention score only
(never ranking).

Off unless the Memory's policy has ``recall_events: true``. The request path never writes: what
a read served is announced on ``memory.effects.served``; :func:`served` (registered there) hands
at most :data:`MAX_PER_READ` (memory, entry, actor, time) events to :data:`queue`
(``lib.deferred``), which either publishes them to the broker (``memory.fold_recall_events``,
a Celery task) or, in the embedded mode (no broker), folds them :data:`FOLD_DELAY` seconds later
in a timer thread — so the counts move without a worker.

:func:`fold` is the write: events are throttled per entry × actor (one counted recall per pair
per :data:`THROTTLE_SECONDS`, through the cache), grouped per entry, and applied with one
``UPDATE … SET recall_count = recall_count + n`` per distinct n (compare-free arithmetic, so
concurrent folds add up on both backends), in batches of :data:`FOLD_BATCH` events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lib.deferred import Deferred
from lib.identity import Actor

from .models import Entry, LifecycleProjection, Memory

#: Events one read may enqueue (a search returns at most its limit, a pack its items).
MAX_PER_READ = 32
#: Events kept waiting in the embedded buffer at most (the oldest are dropped beyond it).
BUFFER_MAX = 10_000
#: Seconds after a read before the embedded fold runs.
FOLD_DELAY = 2.0
#: One counted recall per entry and actor per this many seconds.
THROTTLE_SECONDS = 600
#: Events folded per transaction.
FOLD_BATCH = 500

Event = tuple[int, int | str, str, str]  # (memory_id, entry pk or entry_id, actor_id, ISO time)


def enabled(memory: Memory) -> bool:
    return bool((memory.policy or {}).get("recall_events", False))


def record(memory: Memory, entry_pks: Iterable[int | str], *, actor_id: str) -> int:
    """Hand the entries a read served (pks, or public entry ids) to the fold — no database
    write here. Returns how many events were enqueued (0 when the policy is off)."""
    if not enabled(memory):
        return 0
    now = timezone.now().isoformat()
    events = [(memory.pk, pk, actor_id, now) for pk in dict.fromkeys(entry_pks)][:MAX_PER_READ]
    return queue.submit(events)


def served(
    memory: Memory,
    actor: Actor,
    *,
    run_id: str,
    via: str,
    items: Sequence[tuple[int | str, int]],
) -> int:
    """``memory.effects.served`` listener: the entries one recall served, for the fold."""
    return record(memory, [ref for ref, _ in items], actor_id=actor.id)


def flush() -> int:
    """Fold everything waiting in the embedded buffer now. Returns the recalls counted."""
    return queue.flush()


def pending() -> int:
    return queue.pending()


def fold(events: Iterable[Sequence[Any]]) -> int:
    """Fold events into the projection: throttled per entry × actor, batched, additive.
    Returns how many recalls were counted."""
    events = list(events)
    uids: dict[int, set[str]] = {}
    for memory_id, ref, _, _ in events:
        if isinstance(ref, str):
            uids.setdefault(int(memory_id), set()).add(ref)
    pk_of: dict[tuple[int, str], int] = {}
    for memory_id, refs in uids.items():
        for uid, pk in Entry.objects.filter(memory_id=memory_id, uid__in=refs).values_list(
            "uid", "pk"
        ):
            pk_of[(memory_id, uid)] = pk
    per_entry: dict[int, tuple[int, datetime]] = {}
    for memory_id, ref, actor_id, at in events:
        entry_pk = pk_of.get((int(memory_id), ref)) if isinstance(ref, str) else ref
        if entry_pk is None:
            continue
        when = parse_datetime(at) if isinstance(at, str) else at
        if when is None:
            continue
        key = f"recall:{int(entry_pk)}:{actor_id}"
        if not cache.add(key, 1, timeout=THROTTLE_SECONDS):
            continue
        n, last = per_entry.get(int(entry_pk), (0, when))
        per_entry[int(entry_pk)] = (n + 1, max(last, when))
    counted = 0
    items = sorted(per_entry.items())
    for start in range(0, len(items), FOLD_BATCH):
        chunk = items[start : start + FOLD_BATCH]
        with transaction.atomic():
            by_n: dict[tuple[int, datetime], list[int]] = {}
            for pk, (n, last) in chunk:
                by_n.setdefault((n, last), []).append(pk)
            for (n, last), pks in by_n.items():
                LifecycleProjection.objects.filter(entry_id__in=pks).filter(
                    Q(last_recalled_at__isnull=True) | Q(last_recalled_at__lte=last)
                ).update(recall_count=F("recall_count") + n, last_recalled_at=last)
                LifecycleProjection.objects.filter(
                    entry_id__in=pks, last_recalled_at__gt=last
                ).update(recall_count=F("recall_count") + n)
                counted += n * len(pks)
    return counted


#: The hand-off: the ``memory.fold_recall_events`` task (attached in ``MemoryConfig.ready``) or
#: the embedded buffer folded :data:`FOLD_DELAY` seconds after the read.
queue: Deferred[Event] = Deferred(
    "recall events", lambda events: fold(events), delay=FOLD_DELAY, maxlen=BUFFER_MAX
)
