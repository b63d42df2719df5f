"""Reads of the exposure ledger: who may read it, the list, the runs served given versions.

The list is for reviewers, auditors and staff (an agent 403s), inside the key's Memory scope, and
never names an entry above the reader's clearance (those rows are left out, as the entry itself
would be).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from lib.errors import Forbidden
from memory.actors import STAFF, Actor
from memory.choices import sensitivities_up_to
from memory.models import ApiRole, Memory

from .models import Exposure

#: Runs listed for one operation at most (the rest are counted in ``exposed_runs_omitted``).
MAX_RUNS = 500


def require_exposure_reader(actor: Actor) -> None:
    """Reviewers, auditors and staff read the ledger; agents do not (403)."""
    if actor.role not in (ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF):
        raise Forbidden("Only reviewers and auditors may read the exposure ledger.")


def visible_exposures(actor: Actor, memory: Memory) -> Any:
    """The Memory's rows whose entry the actor's clearance lets it see."""
    return Exposure.objects.for_memory(memory).filter(
        entry__sensitivity__in=sensitivities_up_to(actor.clearance)
    )


def exposure_out(row: Exposure) -> dict[str, Any]:
    return {
        "id": row.pk,
        "at": row.at,
        "key": row.key,
        "run_id": row.run_id or None,
        "entry_id": row.entry.uid,
        "version": row.version,
        "via": row.via,
    }


def runs_served(memory: Memory, entry_pk: int, *, days: int = 30) -> int:
    """How many distinct runs (a call without a run id counts once per key) were served any
    version of the entry in the last ``days`` days. One query."""
    since = timezone.now() - timedelta(days=days)
    return (
        Exposure.objects.filter(memory_id=memory.pk, entry_id=entry_pk, at__gte=since)
        .values("key", "run_id")
        .distinct()
        .count()
    )


def exposed_runs(
    memory_pk: int,
    versions: Sequence[tuple[str, int]],
    *,
    until: datetime | None = None,
    key: str | None = None,
    run_id: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The runs served any of ``versions`` (``(entry id, version)``), up to ``until`` (and only
    those of ``key``, of ``run_id``, when given): one item per (run, key) — ``{run_id, key,
    versions: [{entry_id, version}], first_at, last_at, served}`` — latest first, at most
    :data:`MAX_RUNS`; and how many more were left out. A call that named no run is listed with
    ``run_id: null`` once per key. One query."""
    if not versions:
        return [], 0
    match = Q()
    for uid, number in dict.fromkeys(versions):
        match |= Q(entry__uid=uid, version=number)
    qs = Exposure.objects.filter(match, memory_id=memory_pk)
    if until is not None:
        qs = qs.filter(at__lte=until)
    if key is not None:
        qs = qs.filter(key=key)
    if run_id is not None:
        qs = qs.filter(run_id=run_id)
    rows = (
        qs.values("run_id", "key", "entry__uid", "version")
        .annotate(first=Min("at"), last=Max("at"), n=Count("id"))
        .order_by()
    )
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        item = runs.setdefault(
            (r["run_id"], r["key"]),
            {
                "run_id": r["run_id"] or None,
                "key": r["key"],
                "versions": [],
                "first_at": r["first"],
                "last_at": r["last"],
                "served": 0,
            },
        )
        item["versions"].append({"entry_id": r["entry__uid"], "version": r["version"]})
        item["first_at"] = min(item["first_at"], r["first"])
        item["last_at"] = max(item["last_at"], r["last"])
        item["served"] += r["n"]
    ordered = sorted(
        runs.values(), key=lambda i: (i["last_at"], i["run_id"] or "", i["key"]), reverse=True
    )
    for item in ordered:
        item["versions"].sort(key=lambda v: (v["entry_id"], v["version"]))
    return ordered[:MAX_RUNS], max(0, len(ordered) - MAX_RUNS)
