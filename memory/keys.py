"""Issuing API keys (the one writer of ApiKey rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from django.contrib.auth import get_user_model
from django.db import transaction

from lib.wording import one_of

from . import audit
from .actors import Actor
from .exceptions import NotFound, ValidationFailed
from .models import ApiKey, ApiRole, Memory, Sensitivity


@transaction.atomic(durable=True)
def issue_api_key(
    *,
    name: str,
    role: str,
    memory_slugs: Sequence[str] = (),
    clearance: str = Sensitivity.INTERNAL,
    owner_username: str | None = None,
    actor: Actor | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its secret, which is shown once and never stored."""
    if role not in ApiRole.values:
        raise ValidationFailed(details={"role": [one_of(ApiRole.values)]})
    if clearance not in Sensitivity.values:
        raise ValidationFailed(details={"clearance": [one_of(Sensitivity.values)]})
    memories = list(Memory.objects.filter(slug__in=memory_slugs))
    missing = sorted(set(memory_slugs) - {m.slug for m in memories})
    if missing:
        raise NotFound(f"No memory {', '.join(missing)}.")
    owner = None
    if owner_username:
        owner = get_user_model().objects.filter(username=owner_username).first()
        if owner is None:
            raise NotFound(f"No user '{owner_username}'.")
    created, secret = ApiKey.objects.create_key(
        name=name, role=role, clearance=clearance, owner=owner
    )
    key = cast(ApiKey, created)
    if memories:
        key.memories.set(memories)
    audit.record(
        "key.issued",
        actor=actor or Actor.system("issue_api_key"),
        label=name,
        payload={
            "prefix": key.prefix,
            "role": role,
            "clearance": clearance,
            "memories": sorted(m.slug for m in memories),
            "owner": owner_username,
        },
    )
    return key, secret
