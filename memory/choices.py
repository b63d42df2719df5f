"""The controlled vocabularies of the Memory: entry kinds, tiers, source authority and
verification, head states, revision and relation kinds, validity, evidence strength and pin
categories. ``memory.models`` re-exports every name.

Who acts and what they may see — actor types, API roles, the sensitivity scale that clearance is
measured on — belongs to identity (:mod:`lib.identity`); it is re-exported here, so the Memory's
fields and readers keep importing one vocabulary module.
"""

from __future__ import annotations

from django.db import models

from lib.identity import SENSITIVITY_ORDER as SENSITIVITY_ORDER
from lib.identity import ActorType as ActorType
from lib.identity import ApiRole as ApiRole
from lib.identity import Sensitivity as Sensitivity
from lib.identity import sensitivities_up_to as sensitivities_up_to


class Kind(models.TextChoices):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    CONSTRAINT = "constraint"
    WORKING_NOTE = "working_note"


class Tier(models.TextChoices):
    SESSION = "session"
    SHORT = "short"
    LONG = "long"


class Authority(models.TextChoices):
    UNTRUSTED = "untrusted"
    USER_ASSERTED = "user_asserted"
    REPOSITORY_ATTESTED = "repository_attested"
    SYSTEM_ATTESTED = "system_attested"


class Verification(models.TextChoices):
    UNKNOWN = "unknown"
    VERIFIED = "verified"
    NOT_VERIFIED = "not_verified"


class HeadState(models.TextChoices):
    ACTIVE = "active"
    INACTIVE = "inactive"
    #: Written under admission review: waits for its ``admission`` proposal, never recalled.
    CANDIDATE = "candidate"
    #: Withheld by a reviewer (or an approved ``quarantine`` proposal) until released.
    QUARANTINED = "quarantined"


#: Head states no recall view returns (current, history, context packs, the vector channel).
WITHHELD_STATES = (HeadState.CANDIDATE, HeadState.QUARANTINED)


class RevisionKind(models.TextChoices):
    ADD = "add"
    REVISE = "revise"
    FORGET = "forget"
    REACTIVATE = "reactivate"
    PIN = "pin"
    SUPERSEDE = "supersede"
    CONSOLIDATE = "consolidate"
    PROMOTE = "promote"
    CLEANUP = "cleanup"
    SESSION_END = "session_end"
    COMPENSATE = "compensate"
    RELATE = "relate"
    ADMIT = "admit"
    REJECT_ADMISSION = "reject_admission"
    QUARANTINE = "quarantine"
    RELEASE = "release"
    CONFIRM = "confirm"
    REVERIFY = "reverify"


class RelationKind(models.TextChoices):
    DUPLICATE_OF = "duplicate_of"
    NEAR_DUPLICATE_OF = "near_duplicate_of"
    CONFLICTS_WITH = "conflicts_with"
    SUPERSEDES = "supersedes"
    CONSOLIDATED_INTO = "consolidated_into"
    PROMOTED_FROM = "promoted_from"


AUTHORITATIVE_RELATIONS = frozenset(
    {RelationKind.SUPERSEDES, RelationKind.CONSOLIDATED_INTO, RelationKind.PROMOTED_FROM}
)


class Validity(models.TextChoices):
    CURRENT = "current"
    INACTIVE = "inactive"
    SUPERSEDED = "superseded"
    UNRESOLVED_CONFLICT = "unresolved_conflict"
    CANDIDATE = "candidate"
    QUARANTINED = "quarantined"


class EvidenceStrength(models.TextChoices):
    DIRECT = "direct"
    WEAK = "weak"


class PinCategory(models.TextChoices):
    SAFETY_POLICY = "safety_policy"
    LEGAL_CONSTRAINT = "legal_constraint"
    DURABLE_DECISION = "durable_decision"
