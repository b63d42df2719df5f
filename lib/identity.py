"""Identity: who is acting — an API key, a browser user, or the system itself — with which role
and clearance.

This is the ground every app stands on: the key authentication, the API base view, the
throttles, the actions, the pages and the MCP tools all speak of an :class:`Actor`, so it imports
no app (only Django). The persisted side of identity — the ``ApiKey`` row, issuing a key and
authenticating a request by its key — lives in ``memory`` (``memory.models``, ``memory.keys``,
``memory.identity``), because a key is scoped to Memories; it hands this module an
:class:`IdentityKey`.

Every action takes ``actor=`` explicitly; nothing reads a global "current user".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from django.db import models

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractUser


class ActorType(models.TextChoices):
    HUMAN = "human"
    AGENT = "agent"
    SYSTEM = "system"


class ApiRole(models.TextChoices):
    AGENT = "agent"
    REVIEWER = "reviewer"
    AUDITOR = "auditor"


class Sensitivity(models.TextChoices):
    """How sensitive an entry is — and, as an actor's clearance, the most it may see."""

    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


SENSITIVITY_ORDER = {
    Sensitivity.PUBLIC: 0,
    Sensitivity.INTERNAL: 1,
    Sensitivity.CONFIDENTIAL: 2,
    Sensitivity.RESTRICTED: 3,
}


def sensitivities_up_to(clearance: str) -> list[str]:
    """Sensitivities visible to a clearance (at or below it)."""
    limit = SENSITIVITY_ORDER[Sensitivity(clearance)]
    return [str(s) for s, rank in SENSITIVITY_ORDER.items() if rank <= limit]


STAFF = "staff"
SYSTEM = "system"


class KeyOwner(Protocol):
    @property
    def pk(self) -> int: ...


class IdentityKey(Protocol):
    """What an actor is made from when a key authenticates (``memory.models.ApiKey``)."""

    @property
    def pk(self) -> object: ...
    @property
    def prefix(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def clearance(self) -> str: ...
    @property
    def owner(self) -> KeyOwner | None: ...


@dataclass(frozen=True)
class Actor:
    type: str
    id: str
    label: str
    role: str
    clearance: str = Sensitivity.INTERNAL
    # None: every Memory; otherwise the ids of the Memories this actor may see.
    memory_ids: frozenset[int] | None = None
    on_behalf_of: str = ""
    key_pk: str | None = None
    user_pk: int | None = None

    def identities(self) -> set[str]:
        """Everything that names the person behind this actor: the actor id, the key's owner and
        the signed-in user (a key and its owner are one person, so a reviewer's key and browser
        session never count as two approvals, nor as someone other than the submitter)."""
        ids = {self.id}
        if self.on_behalf_of:
            ids.add(self.on_behalf_of)
        if self.user_pk is not None:
            ids.add(f"user:{self.user_pk}")
        return ids

    def columns(self, prefix: str = "actor", *, on_behalf: bool = True) -> dict[str, str]:
        """Who acted, as the append-only rows store it: ``<prefix>_type``, ``<prefix>_id``,
        ``<prefix>_label`` and, for the rows that have it, ``on_behalf_of``."""
        out = {f"{prefix}_type": self.type, f"{prefix}_id": self.id, f"{prefix}_label": self.label}
        if on_behalf:
            out["on_behalf_of"] = self.on_behalf_of
        return out

    @classmethod
    def system(cls, label: str = "system") -> Actor:
        return cls(
            type=ActorType.SYSTEM,
            id="system",
            label=label,
            role=SYSTEM,
            clearance=Sensitivity.RESTRICTED,
        )

    @classmethod
    def for_key(cls, key: IdentityKey, memory_ids: frozenset[int] | None) -> Actor:
        owner = key.owner
        return cls(
            type=ActorType.AGENT if key.role == ApiRole.AGENT else ActorType.HUMAN,
            id=f"key:{key.prefix}",
            label=key.name,
            role=key.role,
            clearance=key.clearance,
            memory_ids=memory_ids,
            on_behalf_of=f"user:{owner.pk}" if owner is not None else "",
            key_pk=str(key.pk),
            user_pk=owner.pk if owner is not None else None,
        )

    @classmethod
    def for_user(cls, user: AbstractUser) -> Actor:
        if user.is_staff or user.is_superuser:
            role = STAFF
        else:
            groups = {g.name for g in user.groups.all()}
            role = (
                ApiRole.REVIEWER
                if "reviewer" in groups
                else ApiRole.AUDITOR
                if "auditor" in groups
                else "none"
            )
        return cls(
            type=ActorType.HUMAN,
            id=f"user:{user.pk}",
            label=user.get_username(),
            role=role,
            clearance=Sensitivity.RESTRICTED,
            user_pk=user.pk,
        )

    # --- role predicates ---
    @property
    def is_staff(self) -> bool:
        return self.role == STAFF

    @property
    def can_write_entries(self) -> bool:
        return self.role in (ApiRole.AGENT, STAFF, SYSTEM)

    @property
    def is_reviewer(self) -> bool:
        return self.role in (ApiRole.REVIEWER, STAFF)

    @property
    def sees_withheld(self) -> bool:
        """Reviewers, auditors and staff may search candidates (``view=candidates``)."""
        return self.role in (ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF)

    @property
    def can_read(self) -> bool:
        return self.role in (ApiRole.AGENT, ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF, SYSTEM)

    def sees_memory(self, memory_pk: int) -> bool:
        return self.memory_ids is None or memory_pk in self.memory_ids
