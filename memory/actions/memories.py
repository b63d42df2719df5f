"""Memories: creation and policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict, cast

from django.conf import settings
from django.db import IntegrityError, transaction

from lib.outbound import url_problem
from lib.wording import listed

from .. import audit
from ..actors import Actor
from ..admission import check_stored_json, clean_id, clean_text
from ..dedupe import check_threshold
from ..exceptions import (
    Forbidden,
    MemoryExists,
    PolicyChanged,
    ValidationFailed,
)
from ..governance import AUTHORITY_ORDER, clean_admission_policy
from ..jobs import check_jobs_policy
from ..models import (
    Memory,
)
from ..personal_data import KINDS as PERSONAL_DATA_KINDS
from ..personal_data import clean_personal_data_policy, refused_kinds
from ..revalidation import clean_revalidation_policy
from ..search.abbreviations import clean_glossary, glossary_problem
from .writer import lock_memory


class Freshness(TypedDict, total=False):
    alpha: float
    half_life_days: float


class Policy(TypedDict, total=False):
    """A Memory's policy as :func:`clean_policy` returns it: every key optional, each checked.

    ``jobs`` maps a registered job's name (``memory.jobs``) to its settings (``enabled``,
    ``every_hours`` and the settings the job declares); the maps of integers are keyed by tier or
    kind (``retention_days``, ``half_life_days``) or by proposal kind (``approvals_required``).
    A similarity threshold (``tau_same``, ``tau_similar``, a job's ``threshold``) is a number,
    the threshold of the configured similarity, or ``{cosine?, lexical?}`` setting each method
    (``memory.dedupe.policy_threshold``)."""

    quality_ranking: bool
    freshness: Freshness
    retention_days: dict[str, int]
    importance_floor: int
    l1_enabled: bool
    l1_max_per_run: int
    tau_same: float | dict[str, float]
    tau_similar: float | dict[str, float]
    capacity_low_entries: int
    approvals_required: dict[str, int]
    webhook_url: str
    promotion_min_sessions: int
    jobs: dict[str, dict[str, Any]]
    recall_events: bool
    half_life_days: dict[str, int]
    personal_data: dict[str, list[str]]
    glossary: dict[str, str]
    admission_review: dict[str, Any]
    revalidation: dict[str, Any]
    exposure: dict[str, Any]


#: The keys a policy may carry.
POLICY_KEYS = frozenset(Policy.__optional_keys__)

# --- Memories and sources -------------------------------------------------------------------


def clean_policy(raw: Mapping[str, object] | None) -> Policy:
    """Parse a policy (or a policy change) from JSON into a :class:`Policy`: 400
    ``invalid`` naming the first key that is unknown or out of range."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValidationFailed(details={"policy": ["Must be an object."]})
    policy: dict[str, Any] = dict(raw)
    unknown = sorted(set(policy) - POLICY_KEYS)
    if unknown:
        raise ValidationFailed(details={"policy": [f"Unknown key(s): {listed(unknown)}."]})
    for key in ("tau_same", "tau_similar"):
        if key in policy:
            check_threshold(policy[key], f"policy.{key}")
    check_jobs_policy(policy.get("jobs"))
    _check_int_map(policy, "half_life_days", 1, 36_500)
    for key in ("quality_ranking", "l1_enabled", "recall_events"):
        if key in policy and not isinstance(policy[key], bool):
            raise ValidationFailed(details={f"policy.{key}": ["Must be true or false."]})
    for key, low, high in (
        ("importance_floor", 0, 3),
        ("l1_max_per_run", 1, 10_000),
        ("capacity_low_entries", 1, 1_000_000),
        ("promotion_min_sessions", 2, 100),
    ):
        if key in policy and not _int_in(policy[key], low, high):
            raise ValidationFailed(details={f"policy.{key}": [f"An integer from {low} to {high}."]})
    _check_int_map(policy, "retention_days", 1, 36_500)
    _check_int_map(policy, "approvals_required", 1, 10)
    fresh = policy.get("freshness")
    if fresh is not None:
        ok = isinstance(fresh, dict) and set(fresh) <= {"alpha", "half_life_days"}
        alpha, half = (fresh or {}).get("alpha", 0.5), (fresh or {}).get("half_life_days", 30)
        ok = ok and _num_in(alpha, 0, 1) and _num_in(half, 0.001, 36_500)
        if not ok:
            raise ValidationFailed(
                details={"policy.freshness": ["{alpha: 0..1, half_life_days: > 0}."]}
            )
    _check_exposure(policy.get("exposure"))
    url = policy.get("webhook_url")
    if url not in (None, ""):
        if not isinstance(url, str) or len(url) > 2000:
            raise ValidationFailed(details={"policy.webhook_url": ["An https URL."]})
        problem = url_problem(url)
        if problem:
            raise ValidationFailed(
                details={"policy.webhook_url": [f"https to a public address only: {problem}"]}
            )
    sections: tuple[tuple[str, Callable[[Any], Any], str], ...] = (
        (
            "admission_review",
            clean_admission_policy,
            f"{{below_authority?: {'|'.join(AUTHORITY_ORDER)}, injection_scan?: true|false}}.",
        ),
        (
            "personal_data",
            clean_personal_data_policy,
            f"{{refuse: [...]}} with kinds from {listed(PERSONAL_DATA_KINDS)}.",
        ),
        (
            "revalidation",
            clean_revalidation_policy,
            "{kind, tier or current_state: days (1..36500), sources?: {source name: days}}.",
        ),
    )
    for key, clean_section, expected in sections:
        if key in policy:
            section = clean_section(policy[key])
            if section is None:
                raise ValidationFailed(details={f"policy.{key}": [expected]})
            policy = {**policy, key: section}
    if "glossary" in policy:
        problem = glossary_problem(policy["glossary"])
        if problem is not None:
            raise ValidationFailed(details={"policy.glossary": [problem]})
        policy = {**policy, "glossary": clean_glossary(policy["glossary"])}
    return cast(Policy, policy)


def check_policy_text(policy: Mapping[str, Any], refuse: frozenset[str]) -> None:
    """The free text of a policy — glossary names and meanings, the webhook URL (its user,
    password and query) — is stored, returned to every key that reads the Memory and copied into
    the audit: 422 ``secret_detected`` / ``personal_data_detected`` as for any stored text."""
    for key in ("glossary", "webhook_url"):
        if policy.get(key):
            check_stored_json(f"policy.{key}", policy[key], refuse)


def _check_exposure(section: Any) -> None:
    """``exposure``: ``{enabled?: bool, retention_days?: 1..3650}`` (the exposure ledger)."""
    if section is None:
        return
    expected = "{enabled?: true|false, retention_days?: an integer from 1 to 3650}."
    if not isinstance(section, dict) or set(section) - {"enabled", "retention_days"}:
        raise ValidationFailed(details={"policy.exposure": [expected]})
    if "enabled" in section and not isinstance(section["enabled"], bool):
        raise ValidationFailed(details={"policy.exposure.enabled": ["Must be true or false."]})
    if "retention_days" in section and not _int_in(section["retention_days"], 1, 3650):
        raise ValidationFailed(
            details={"policy.exposure.retention_days": ["An integer from 1 to 3650."]}
        )


def _int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _num_in(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def _check_int_map(policy: dict[str, Any], key: str, low: int, high: int) -> None:
    value = policy.get(key)
    if value is None:
        return
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _int_in(v, low, high) for k, v in value.items()
    ):
        raise ValidationFailed(
            details={f"policy.{key}": [f"An object of integers from {low} to {high}."]}
        )


@transaction.atomic(durable=True)
def create_memory(
    *, actor: Actor, slug: str, name: str, policy: Mapping[str, object] | None = None
) -> Memory:
    """Create a Memory. Reviewers without a Memory scope, and staff, may.

    Without a ``policy`` the Memory starts with the recommended one
    (``settings.STEWARD_NEW_MEMORY_POLICY``, chosen from ``manage.py evaluate``: see
    docs/evaluation.md); an explicit policy — ``{}`` included — is taken as given. Existing
    Memories keep theirs.
    """
    if not (actor.is_staff or (actor.is_reviewer and actor.memory_ids is None)):
        raise Forbidden("Only a reviewer without a Memory scope, or staff, may create a Memory.")
    slug = clean_id(slug, field="slug")
    if policy is None:
        policy = dict(getattr(settings, "STEWARD_NEW_MEMORY_POLICY", {}))
    cleaned = clean_policy(policy)
    refuse = refused_kinds(cleaned)
    name = clean_text(name, field="name", required=True, limit=200, refuse=refuse)
    check_policy_text(policy, refuse)
    check_policy_text(cleaned, refuse)
    if Memory.objects.filter(slug=slug).exists():
        raise MemoryExists(f"A memory '{slug}' already exists.")
    try:
        with transaction.atomic():
            memory = Memory.objects.create(slug=slug, name=name, policy=cleaned)
    except IntegrityError as exc:
        raise MemoryExists(f"A memory '{slug}' already exists.") from exc
    audit.record(
        "memory.created", actor=actor, memory=memory, label=name, payload={"policy": cleaned}
    )
    return memory


def may_patch_policy(actor: Actor) -> bool:
    """Operators change a policy directly (``PATCH``): staff and reviewer keys without a
    Memory scope. Everyone else — a reviewer key scoped to the Memory, a reviewer in the
    browser — files a ``policy`` proposal that a second reviewer approves."""
    return actor.is_staff or (actor.is_reviewer and actor.memory_ids is None)


@transaction.atomic(durable=True)
def update_memory_policy(
    memory: Memory,
    *,
    actor: Actor,
    policy: Mapping[str, object],
    expected: Mapping[str, object] | None = None,
) -> Memory:
    """Merge ``policy`` keys into the Memory's policy (operators: :func:`may_patch_policy`,
    else 403 ``forbidden``). With ``expected`` (the policy the change was prepared against),
    409 ``policy_changed`` when the policy is another by now. Keys that already hold the given
    values change nothing and record nothing. Locks: the Memory row."""
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may change a Memory's policy.")
    if not may_patch_policy(actor):
        raise Forbidden(
            "A reviewer key scoped to a Memory changes its policy through a policy proposal "
            "(POST /api/v1/proposals with kind 'policy'), which another reviewer approves."
        )
    cleaned = clean_policy(policy)
    memory = lock_memory(memory.pk)
    if expected is not None and memory.policy != expected:
        raise PolicyChanged()
    return write_policy(memory, actor=actor, changes=cleaned, sent=policy)


def write_policy(
    memory: Memory,
    *,
    actor: Actor,
    changes: Mapping[str, Any],
    sent: Mapping[str, object] | None = None,
    proposal_id: int | None = None,
) -> Memory:
    """Merge ``changes`` (a cleaned policy change) into the policy of ``memory`` and audit it
    as ``memory.policy_changed`` (naming the proposal that approved it, if any).

    Precondition: the caller holds the Memory lock (``memory`` is the locked row) inside a
    transaction: ``PATCH`` and the approval of a ``policy`` proposal. A change that leaves
    every key as it is writes nothing."""
    before = memory.policy
    merged = {**before, **changes}
    if merged == before:
        return memory
    # As sent and as cleaned: cleaning folds a no-break space inside a token into a space.
    refuse = refused_kinds(merged)
    if sent is not None:
        check_policy_text(sent, refuse)
    check_policy_text(changes, refuse)
    memory.policy = merged
    memory.save(update_fields=["policy"])
    audit.record(
        "memory.policy_changed",
        actor=actor,
        memory=memory,
        label=memory.name,
        proposal_id=proposal_id,
        payload={"before": before, "after": memory.policy},
    )
    return memory
