"""The system's proposal generators: maintenance passes that find what a reviewer should judge
and file it through the normal intake (DESIGN §8–9).

- ``near_duplicates`` (:mod:`.near_duplicates`) — clusters of near-duplicates → consolidation;
- ``contradictions`` (:mod:`.contradictions`) — same subject, different value →
  ``conflicts_with`` observation and, where times are comparable, supersession;
- ``promotion`` (:mod:`.promotion`) — a working-note theme in ≥ 2 sessions → promotion;
- ``capacity`` (:mod:`.capacity`) — many new low entries or dense duplicates → one cleanup;
- ``injection_scan`` (:mod:`.injection_scan`) — instruction-like stored text → quarantine.

Each is an action ``run_<job>(memory, *, actor, dry_run=True) -> MaintenanceRun`` registered
with ``memory.maintenance`` (in ``ProposalsConfig.ready``) together with its Celery task, so the
REST endpoint, ``manage.py maintenance`` and the beat fan-out find them by name, and every run
holds the (Memory, job) lock.
"""

from __future__ import annotations

from .capacity import run_capacity
from .contradictions import run_contradictions
from .injection_scan import run_injection_scan
from .near_duplicates import run_near_duplicates
from .promotion import run_promotion

RUNNERS = {
    "near_duplicates": run_near_duplicates,
    "contradictions": run_contradictions,
    "promotion": run_promotion,
    "capacity": run_capacity,
    "injection_scan": run_injection_scan,
}

__all__ = [
    "RUNNERS",
    "run_capacity",
    "run_contradictions",
    "run_injection_scan",
    "run_near_duplicates",
    "run_promotion",
]
