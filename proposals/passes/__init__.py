"""The system's proposal generators: maintenance passes that find what a reviewer should judge
and file it through the normal intake (DESIGN §8–9).

- ``near_duplicates`` (:mod:`.near_duplicates`) — clusters of near-duplicates → consolidation;
- ``contradictions`` (:mod:`.contradictions`) — same subject, different value →
  ``conflicts_with`` observation and, where times are comparable, supersession;
- ``promotion`` (:mod:`.promotion`) — a working-note theme in ≥ 2 sessions → promotion;
- ``capacity`` (:mod:`.capacity`) — many new low entries or dense duplicates → one cleanup;
- ``injection_scan`` (:mod:`.injection_scan`) — instruction-like stored text → quarantine.

Each is an action ``run_<job>(memory, *, actor, dry_run=True) -> MaintenanceRun`` that its module
declares as a maintenance job (``JOB``, made by :func:`.base.pass_job`: its Celery task, what it
does, its policy settings). :data:`JOBS` lists them; ``ProposalsConfig.ready`` registers them
(``memory.jobs``) and ``proposals.tasks`` makes their Celery tasks, so the REST endpoint, the
maintenance page, ``manage.py maintenance``, policy validation and the beat fan-out find them by
name, and every run holds the (Memory, job) lock. A new pass is its module and its line in
:data:`JOBS`.
"""

from __future__ import annotations

from . import capacity, contradictions, injection_scan, near_duplicates, promotion
from .capacity import run_capacity
from .contradictions import run_contradictions
from .injection_scan import run_injection_scan
from .near_duplicates import run_near_duplicates
from .promotion import run_promotion

#: The passes, in the order lists show them.
JOBS = (
    near_duplicates.JOB,
    contradictions.JOB,
    promotion.JOB,
    capacity.JOB,
    injection_scan.JOB,
)

__all__ = [
    "JOBS",
    "run_capacity",
    "run_contradictions",
    "run_injection_scan",
    "run_near_duplicates",
    "run_promotion",
]
