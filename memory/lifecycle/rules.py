"""The lifecycle rules that need no database: the importance formula, what counts as direct
evidence, and the columns of a projection row (DESIGN.md §5)."""

from __future__ import annotations

from ..models import Authority, EvidenceStrength, Kind, Tier, Verification

RULE_VERSION = 1

BASE_IMPORTANCE = {
    Kind.FACT: 1,
    Kind.PREFERENCE: 1,
    Kind.DECISION: 2,
    Kind.CONSTRAINT: 2,
    Kind.WORKING_NOTE: 0,
}
AUTO_ACTION_PREFIXES = ("auto_decay:", "session_end", "cleanup:")

# Fields compared by ``rebuild_projection --check`` (everything derived).
COMPARED_FIELDS = (
    "version_id",
    "state",
    "importance",
    "evidence_strength",
    "provenance",
    "validity",
    "validity_reason",
    "successor_entry_id",
    "recorded_at",
    "effective_at",
    "time_known",
    "tier",
    "kind",
    "sensitivity",
    "current_state",
    "pinned",
    "pin_category",
    "protected",
    "interval_started_at",
    "auto_action_reason",
    "rule_version",
    "body_bytes",
)


def is_direct(authority: str, verification: str) -> bool:
    return verification == Verification.VERIFIED or authority in (
        Authority.REPOSITORY_ATTESTED,
        Authority.SYSTEM_ATTESTED,
    )


def importance_seed(
    *,
    kind: str,
    tier: str,
    evidence_strength: str,
    corroborated: bool,
    evidence_backed_state_change: bool,
    override: int | None,
) -> int:
    """The deterministic importance formula of DESIGN.md §5 (pure)."""
    if override is not None:
        return max(0, min(3, override))
    value = BASE_IMPORTANCE.get(Kind(kind), 1) if kind in Kind.values else 1
    if evidence_backed_state_change:
        value += 1
    value = max(0, min(3, value))
    weak = evidence_strength == EvidenceStrength.WEAK
    uncorroborated_note = kind == Kind.WORKING_NOTE and not corroborated
    if weak or tier == Tier.SESSION or uncorroborated_note:
        value = min(value, 1)
    return value


#: The fields of a derived row, in order: the keys, then everything ``--check`` compares.
ROW_FIELDS = ("entry_id", "memory_id", *COMPARED_FIELDS)

#: The projection columns an upsert overwrites: the compared fields, relations by name (the
#: recall counters, not derived, are kept).
UPDATE_FIELDS = [name.removesuffix("_id") for name in COMPARED_FIELDS]
