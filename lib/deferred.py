"""Writes the request path hands off: published to the broker, or buffered in-process.

A read that must leave a trace (recall events, the exposure ledger) never writes on the request
path. It hands its rows to a :class:`Deferred`, which either publishes them to the broker (the
Celery task the owning app attaches at start-up with :meth:`Deferred.use_task`) or, in the embedded
mode (no broker: ``CELERY_TASK_ALWAYS_EAGER``), appends them to a bounded in-process buffer that a
timer thread writes ``delay`` seconds later, so the rows land without a worker.

The buffer keeps at most ``maxlen`` rows (the oldest are dropped beyond it). :meth:`flush` writes
what waits now (what the timer does); :meth:`discard` drops it (the test suite, between tests).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from django.conf import settings
from django.db import close_old_connections

log = logging.getLogger(__name__)

Row = TypeVar("Row", bound=tuple[object, ...])


class Deferred(Generic[Row]):
    """One kind of deferred write: ``write(rows) -> count`` is the database write; the Celery
    task attached with :meth:`use_task` receives the rows as lists when a broker is configured."""

    def __init__(
        self, name: str, write: Callable[[list[Row]], int], *, delay: float, maxlen: int
    ) -> None:
        self.name = name
        self._write = write
        self.delay = delay
        self._buffer: deque[Row] = deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._publish: Callable[[list[list[object]]], object] | None = None

    def use_task(self, publish: Callable[[list[list[object]]], object]) -> None:
        """Publish through ``publish`` (a task's ``delay``) when a broker is configured."""
        self._publish = publish

    @staticmethod
    def embedded() -> bool:
        return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", True))

    def submit(self, rows: Sequence[Row]) -> int:
        """Hand ``rows`` off (no database write here). Returns how many were handed off."""
        if not rows:
            return 0
        if self.embedded() or self._publish is None:
            self._buffer_rows(rows)
        else:
            self._publish([list(r) for r in rows])
        return len(rows)

    def _buffer_rows(self, rows: Sequence[Row]) -> None:
        with self._lock:
            self._buffer.extend(rows)
            if self._timer is None:
                self._timer = threading.Timer(self.delay, self._flush_in_thread)
                self._timer.daemon = True
                self._timer.start()

    def _flush_in_thread(self) -> None:
        try:
            self.flush()
        except Exception:
            log.exception("%s: buffered rows not written", self.name)
        finally:
            close_old_connections()

    def _take(self) -> list[Row]:
        with self._lock:
            rows = list(self._buffer)
            self._buffer.clear()
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
        return rows

    def flush(self) -> int:
        """Write everything waiting in the buffer now; returns ``write``'s count."""
        return self._write(self._take())

    def discard(self) -> int:
        """Drop what waits in the buffer and stop its timer; returns how many rows were dropped."""
        return len(self._take())

    def pending(self) -> int:
        with self._lock:
            return len(self._buffer)
