"""The retention score and the policy numbers of the decay scan (DESIGN §8).

:func:`retention_score` is a pure function of stored timestamps (never a stored value decayed
over and over); the lowest score is retired first. The retention windows, half-lives, floor and
per-run cap come from the Memory's policy, with the seeds below when it says nothing.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from ..models import Tier

AUTO_DECAY_REASON = "auto_decay:v1"

#: Retention windows in days when the policy says nothing (DESIGN §8 seeds).
SEED_RETENTION_DAYS = {Tier.LONG: 180, Tier.SHORT: 30}
DEFAULT_IMPORTANCE_FLOOR = 0
DEFAULT_MAX_PER_RUN = 100
#: Entries read per keyset batch while scanning, and retired per revision.
SCAN_BATCH = 500
RETIRE_BATCH = 50

#: Retention score constants (per day). Half-lives: 90 days for age, 30 days since a recall.
LAMBDA = math.log(2) / 90
SIGMA = 0.5
MU = math.log(2) / 30


def retention_score(
    *,
    importance: int,
    interval_started_at: datetime | None,
    time_known: bool,
    recall_count: int,
    last_recalled_at: datetime | None,
    now: datetime,
    half_life_days: float | None = None,
) -> float:
    """salience·e^(−λ·age) + σ·ln(1+recalls)·e^(−μ·since_recall), from stored timestamps only.

    λ = ln 2 / ``half_life_days`` (default 90; per tier and kind from the policy, see
    :func:`retention_half_life`).

    ``salience`` is ``(importance + 1) / 4`` (0.25..1). Age is days since the interval started.
    Unknown time never counts as old: with ``time_known`` false or no start, age is 0. Without a
    recorded recall time the recall term uses no decay only if there were no recalls (it is 0
    then anyway); timestamps in the future count as age 0.
    """
    salience = (max(0, min(3, importance)) + 1) / 4
    age = 0.0
    if time_known and interval_started_at is not None:
        age = max(0.0, (now - interval_started_at).total_seconds() / 86400)
    lam = LAMBDA if not half_life_days else math.log(2) / half_life_days
    score = salience * math.exp(-lam * age)
    if recall_count > 0:
        since = 0.0
        if last_recalled_at is not None:
            since = max(0.0, (now - last_recalled_at).total_seconds() / 86400)
        score += SIGMA * math.log1p(recall_count) * math.exp(-MU * since)
    return score


# --- Candidate selection ------------------------------------------------------------------------


def retention_days(policy: dict[str, Any], tier: str, kind: str) -> int:
    """The retention window of (tier, kind): ``policy.retention_days[tier]`` (seed 180 long,
    30 short); a per-kind value ``retention_days[kind]`` can only shorten it (short tier stays
    shorter than long)."""
    cfg = policy.get("retention_days") or {}
    days = int(cfg.get(tier, SEED_RETENTION_DAYS[Tier(tier)]))
    if kind in cfg:
        days = min(days, int(cfg[kind]))
    return max(0, days)


DEFAULT_HALF_LIFE_DAYS = 90


def retention_half_life(policy: dict[str, Any], tier: str, kind: str) -> float:
    """The retention score's half-life for (tier, kind): ``policy.half_life_days[kind]``, else
    ``[tier]``, else 90 days."""
    cfg = policy.get("half_life_days") or {}
    return float(cfg.get(kind, cfg.get(tier, DEFAULT_HALF_LIFE_DAYS)))


def importance_floor(policy: dict[str, Any]) -> int:
    return int(policy.get("importance_floor", DEFAULT_IMPORTANCE_FLOOR))


def max_per_run(policy: dict[str, Any]) -> int:
    return max(0, int(policy.get("l1_max_per_run", DEFAULT_MAX_PER_RUN)))
