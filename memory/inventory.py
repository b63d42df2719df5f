"""A Memory's inventory (DESIGN §8): active / inactive counts and share, the importance
distribution of active entries, auto-deactivations by reason, live near-duplicate findings,
pending proposals by kind (through ``memory.hooks``: memory never imports proposals), and an
alert when the inactive share is over 60 % with more than 1,000 entries.

Auto-deactivations are counted cumulatively from the revisions (a reactivation does not erase
them); ``manifest_bytes`` is the UTF-8 size of the active entries' head bodies, kept on their
projection rows. Aggregate queries only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db.models import Count, Model, QuerySet, Sum

from . import hooks
from .actors import Actor
from .choices import Sensitivity, sensitivities_up_to
from .exceptions import Forbidden
from .models import (
    HeadState,
    LifecycleProjection,
    Memory,
    Relation,
    RelationKind,
    RevisionChange,
)
from .selectors import get_memory

M = TypeVar("M", bound=Model)

#: State reasons set by the system itself (not by a person's forget).
AUTO_REASONS = ("auto_decay:v1", "session_end")


Allowed = list[str] | None
"""The sensitivities a reader may see, or None when nothing is hidden from it (top clearance)."""


def allowed_for(actor: Actor | None) -> Allowed:
    """What ``actor``'s clearance lets it count: None (everything) for the system and for top
    clearance, so that the figures a reviewer sees cost no join."""
    if actor is None:
        return None
    allowed = sensitivities_up_to(actor.clearance)
    return None if len(allowed) == len(Sensitivity.values) else allowed


def _within(qs: QuerySet[M], allowed: Allowed, *paths: str) -> QuerySet[M]:
    """``qs`` limited to rows whose entries (at ``paths``) are all within ``allowed``."""
    if allowed is None:
        return qs
    return qs.filter(**{f"{path}__sensitivity__in": allowed for path in paths})


def manifest_bytes(memory: Memory, allowed: Allowed = None) -> int:
    """Bytes of what the Memory holds now: the UTF-8 bodies of its active entries' head
    versions, summed over their projection rows (one aggregate query; no entry text read)."""
    rows = LifecycleProjection.objects.filter(memory_id=memory.pk, state=HeadState.ACTIVE)
    if allowed is not None:
        rows = rows.filter(sensitivity__in=allowed)
    return int(rows.aggregate(n=Sum("body_bytes")).get("n") or 0)


def auto_deactivations(memory: Memory, allowed: Allowed = None) -> dict[str, int]:
    """Every automatic retirement ever recorded, by reason, counted from the revisions (so a
    later reactivation does not make it disappear): one aggregate query."""
    rows = (
        _within(
            RevisionChange.objects.filter(
                revision__memory_id=memory.pk,
                to_state=HeadState.INACTIVE,
                state_reason__in=AUTO_REASONS,
            ),
            allowed,
            "entry",
        )
        .values("state_reason")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {r["state_reason"]: r["n"] for r in rows}


INACTIVE_ALERT_SHARE = 0.6
INACTIVE_ALERT_MIN_ENTRIES = 1000


def inventory(memory: Memory, actor: Actor | None = None) -> dict[str, Any]:
    """Health figures of one Memory in aggregate queries (plus the proposals provider):
    active / inactive / candidate / quarantined counts, the inactive share, the importance
    distribution of active entries, auto-deactivations by reason, live near-duplicate findings,
    pending proposals by kind, rejected proposals by kind and reason, and an alert when the
    inactive share is over 60 % with more than 1,000 entries.

    With an ``actor`` below top clearance every figure counts only what that actor may see:
    entries within its clearance, relations whose two entries are, proposals it may read. An
    entry above a key's clearance is invisible to it, in counts as well as in lists."""
    allowed = allowed_for(actor)
    auto = auto_deactivations(memory, allowed)
    counts = _state_counts(memory, allowed)
    active, inactive = counts.active, counts.inactive
    candidates, quarantined = counts.candidates, counts.quarantined
    live = Relation.objects.filter(memory_id=memory.pk, retired_by__isnull=True)
    live = _within(live, allowed, "from_entry", "to_entry")
    conflicts = live.filter(kind=RelationKind.CONFLICTS_WITH).count()
    duplicates = {
        r["kind"]: r["n"]
        for r in live.filter(kind__in=[RelationKind.DUPLICATE_OF, RelationKind.NEAR_DUPLICATE_OF])
        .values("kind")
        .annotate(n=Count("pk"))
        .order_by()
    }
    total = active + inactive + candidates + quarantined
    share = inactive / total if total else 0.0
    pending = dict(sorted(hooks.pending_proposals_by_kind(memory, actor).items()))
    return {
        "memory": memory.slug,
        "entries": total,
        "active": active,
        "inactive": inactive,
        "active_count": active,
        "inactive_count": inactive,
        "candidate_count": candidates,
        "quarantined_count": quarantined,
        "inactive_share": round(share, 4),
        "manifest_bytes": manifest_bytes(memory, allowed),
        "importance": dict(sorted(counts.importance.items())),
        "auto_deactivations": dict(sorted(auto.items())),
        "near_duplicates": {
            "duplicate_of": duplicates.get(RelationKind.DUPLICATE_OF, 0),
            "near_duplicate_of": duplicates.get(RelationKind.NEAR_DUPLICATE_OF, 0),
            "total": sum(duplicates.values()),
        },
        "conflicts": conflicts,
        "pending_proposals": pending,
        # Spec 000's acceptance list: what review refused, e.g. near-duplicate consolidations
        # rejected as ``duplicate_of_other``.
        "rejected_proposals": {
            kind: dict(sorted(reasons.items()))
            for kind, reasons in sorted(hooks.rejected_proposals_by_kind(memory, actor).items())
        },
        "alerts": _alerts(share, total, candidates - pending.get("admission", 0)),
    }


def alerts(memory: Memory, actor: Actor | None = None) -> list[dict[str, str]]:
    """The inventory's ``alerts`` alone, for the pages that show only those (the dashboard, the
    notification list): the state counts and the pending proposals, without the figures whose
    cost grows fastest with the Memory (the manifest's bytes read every active entry's text)."""
    allowed = allowed_for(actor)
    counts = _state_counts(memory, allowed)
    total = counts.active + counts.inactive + counts.candidates + counts.quarantined
    share = counts.inactive / total if total else 0.0
    pending = hooks.pending_proposals_by_kind(memory, actor)
    return _alerts(share, total, counts.candidates - pending.get("admission", 0))


@dataclass
class _StateCounts:
    """Entries per head state, with the importance distribution of the active ones."""

    active: int = 0
    inactive: int = 0
    candidates: int = 0
    quarantined: int = 0
    importance: dict[str, int] = field(default_factory=lambda: {str(i): 0 for i in range(4)})


def _state_counts(memory: Memory, allowed: Allowed = None) -> _StateCounts:
    """One aggregate query over the Memory's projection rows (inactive: every state not
    named)."""
    counts = _StateCounts()
    rows = (
        _within(LifecycleProjection.objects.filter(memory_id=memory.pk), allowed, "entry")
        .values("state", "importance")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in rows:
        if row["state"] == HeadState.ACTIVE:
            counts.active += row["n"]
            key = str(row["importance"])
            counts.importance[key] = counts.importance.get(key, 0) + row["n"]
        elif row["state"] == HeadState.CANDIDATE:
            counts.candidates += row["n"]
        elif row["state"] == HeadState.QUARANTINED:
            counts.quarantined += row["n"]
        else:
            counts.inactive += row["n"]
    return counts


def _alerts(share: float, total: int, orphans: int) -> list[dict[str, str]]:
    """An inactive share over 60 % with more than 1,000 entries; candidates (``orphans``) with
    no pending admission proposal."""
    alerts = []
    if share > INACTIVE_ALERT_SHARE and total > INACTIVE_ALERT_MIN_ENTRIES:
        alerts.append(
            {
                "code": "inactive_share_high",
                "message": (
                    f"{share:.0%} of {total} entries are inactive "
                    f"(alert above {INACTIVE_ALERT_SHARE:.0%} with more than "
                    f"{INACTIVE_ALERT_MIN_ENTRIES} entries)."
                ),
            }
        )
    if orphans > 0:
        alerts.append(
            {
                "code": "candidates_without_admission",
                "message": (
                    f"{orphans} candidate(s) have no pending admission proposal; they stay "
                    "withheld from recall. Quarantine and release one to file it again."
                ),
            }
        )
    return alerts


def inventory_for(actor: Actor, slug: str) -> dict[str, Any]:
    """The inventory of a Memory the actor may see (404 otherwise)."""
    if not actor.can_read:
        raise Forbidden("Your role may not read the inventory.")
    return inventory(get_memory(actor, slug), actor)
