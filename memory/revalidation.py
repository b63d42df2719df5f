"""Revalidation (spec 004, DESIGN.md §9a): facts that go stale come back for a check.

An entry carries three governance fields from its admission: ``owner`` (a user or team name),
``confidence`` (0..1) and ``review_at`` (when the fact must be re-checked). They live on the
entry's :class:`~memory.models.Head`, set by the ``add`` revision and moved on by ``confirm`` and
``reverify`` revisions (a revision, never a new version: the text did not change).

A Memory's policy ``revalidation`` gives a write that names no ``review_at`` one, counted in days
from its admission::

    {"fact": 90, "short": 30, "current_state": 14, "sources": {"ci": 7}}

Keys are entry kinds, tiers, ``current_state`` (entries that describe present state) and
``sources`` (per registered source name, the operator's setting); every key that applies to the
write counts and the **shortest** wins. Nothing applies → no review date.

An entry is *due* when its ``review_at`` has passed. Being due only flags it (``review_due`` in
hits, Context Pack items and entry reads; ``strict_fresh`` leaves it out of a recall): nothing
ever deactivates it by itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F, Q, QuerySet

from lib.identity import Actor

from .models import Head, HeadState, Kind, Tier, sensitivities_up_to

#: The policy key.
POLICY_KEY = "revalidation"
#: The most days a rule may give.
MAX_DAYS = 36_500


def clean_revalidation_policy(raw: Any) -> dict[str, Any] | None:
    """The policy's ``revalidation`` section as stored, or None when malformed."""
    if not isinstance(raw, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "sources":
            if not isinstance(value, dict) or not all(
                isinstance(name, str) and 0 < len(name) <= 128 and _days_ok(days)
                for name, days in value.items()
            ):
                return None
            out[key] = dict(value)
        elif key in Kind.values or key in Tier.values or key == "current_state":
            if not _days_ok(value):
                return None
            out[key] = value
        else:
            return None
    return out


def _days_ok(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_DAYS


def default_review_at(
    policy: Mapping[str, Any] | None,
    *,
    kind: str,
    tier: str,
    current_state: bool,
    sources: Iterable[str],
    admitted_at: datetime,
) -> datetime | None:
    """The review date the policy gives a write that named none: ``admitted_at`` plus the
    shortest number of days among the rules that apply to it (module docstring); None when no
    rule applies."""
    rules = (policy or {}).get(POLICY_KEY) or {}
    if not rules:
        return None
    days: list[int] = [rules[k] for k in (kind, tier) if k in rules]
    if current_state and "current_state" in rules:
        days.append(rules["current_state"])
    per_source = rules.get("sources") or {}
    days += [per_source[name] for name in set(sources) if name in per_source]
    if not days:
        return None
    return admitted_at + timedelta(days=min(days))


def is_due(review_at: datetime | None, now: datetime) -> bool:
    """Whether a fact with this review date needs re-checking at ``now``."""
    return review_at is not None and review_at <= now


def inherited_governance(
    inputs: Sequence[Head],
    policy: Mapping[str, Any] | None,
    *,
    kind: str,
    tier: str,
    current_state: bool,
    sources: Iterable[str],
    now: datetime,
    carry_review: bool,
) -> dict[str, Any]:
    """The governance attributes of an entry a reviewed approval writes from the heads
    ``inputs`` (first the one it replaces or rewrites): a supersession's new successor (the old
    entry), a consolidation's target (the target, then the redundant entries), a promotion's
    new entry (the notes). docs/revalidation.md, "Entries an approval writes":

    - ``owner``: the first input's that has one;
    - ``confidence``: the lowest among the inputs that have one — the result states every
      input's claims, so it is no surer than the least sure of them;
    - ``review_at``: what the policy gives the result from ``now``; when no rule applies and
      ``carry_review`` (a consolidation, a promotion: merging is not re-checking), the earliest
      review date among the inputs, so a scheduled re-check is never dropped — a supersession
      does not carry it (replacing the old fact is the outcome of re-checking it).

    Only the keys that carry a value, except ``review_at`` when ``carry_review`` (a rewritten
    target whose inputs had no date keeps none)."""
    out: dict[str, Any] = {}
    owner = next((h.owner for h in inputs if h.owner), "")
    if owner:
        out["owner"] = owner
    confidences = [h.confidence for h in inputs if h.confidence is not None]
    if confidences:
        out["confidence"] = min(confidences)
    review_at = default_review_at(
        policy,
        kind=kind,
        tier=tier,
        current_state=current_state,
        sources=sources,
        admitted_at=now,
    )
    if review_at is None and carry_review:
        review_at = min((h.review_at for h in inputs if h.review_at is not None), default=None)
    if review_at is not None or carry_review:
        out["review_at"] = review_at.isoformat() if review_at is not None else None
    return out


# --- The "needs re-checking" list ----------------------------------------------------------


def due_heads(memory: Any, *, actor: Actor, now: datetime) -> QuerySet[Head]:
    """The active heads of ``memory`` within the actor's clearance whose review date has
    passed at ``now``, most recalled first (then by entry), with their entry, version and
    projection (one query per page)."""
    return (
        Head.objects.filter(
            memory=memory,
            state=HeadState.ACTIVE,
            review_at__lte=now,
            entry__sensitivity__in=sensitivities_up_to(actor.clearance),
        )
        .select_related("entry", "version", "entry__projection")
        .order_by(F("entry__projection__recall_count").desc(nulls_last=True), "entry_id")
    )


def due_page(
    heads: QuerySet[Head], *, cursor: list[int] | None, limit: int
) -> tuple[list[Head], list[int] | None]:
    """One keyset page of :func:`due_heads` after ``cursor`` (``[recall_count, entry pk]`` of
    the last row of the page before) and the cursor of the next page."""
    if cursor is not None:
        count, pk = cursor
        heads = heads.filter(
            Q(entry__projection__recall_count__lt=count)
            | Q(entry__projection__recall_count=count, entry_id__gt=pk)
        )
    rows = list(heads[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    if not (more and rows):
        return rows, None
    last = rows[-1]
    return rows, [_recall_count(last), last.entry_id]


def _recall_count(head: Head) -> int:
    projection = getattr(head.entry, "projection", None)
    return projection.recall_count if projection is not None else 0


def due_item(head: Head) -> dict[str, Any]:
    """One row of the "needs re-checking" list (API and page)."""
    projection = getattr(head.entry, "projection", None)
    return {
        "entry_id": head.entry.uid,
        "kind": head.entry.kind,
        "tier": head.entry.tier,
        "version": head.version.number,
        "body": head.version.body,
        "owner": head.owner or None,
        "confidence": head.confidence,
        "review_at": head.review_at,
        "review_due": True,
        "recall_count": projection.recall_count if projection is not None else 0,
        "last_recalled_at": projection.last_recalled_at if projection is not None else None,
    }
