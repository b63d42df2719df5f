"""Sources and their declarations."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from .. import audit
from ..actors import Actor
from ..admission import clean_id, clean_text
from ..exceptions import (
    Forbidden,
    MemoryExists,
    ValidationFailed,
)
from ..models import (
    Authority,
    Source,
    SourceDeclaration,
    Verification,
)


def _clean_declaration(raw: Any) -> tuple[str, str]:
    if not isinstance(raw, dict):
        raise ValidationFailed(details={"declaration": ["Must be an object."]})
    authority = raw.get("authority", Authority.UNTRUSTED)
    verification = raw.get("verification", Verification.UNKNOWN)
    if authority not in Authority.values:
        raise ValidationFailed(details={"authority": [f"One of {Authority.values}."]})
    if verification not in Verification.values:
        raise ValidationFailed(details={"verification": [f"One of {Verification.values}."]})
    return authority, verification


def _check_may_declare(actor: Actor, authority: str, verification: str) -> None:
    # Only a human may raise a source above untrusted/unknown: an agent's own claim can
    # never make its evidence count as attested.
    raised = authority != Authority.UNTRUSTED or verification == Verification.VERIFIED
    if raised and not actor.is_reviewer:
        raise Forbidden("Only reviewers may declare a source trusted or verified.")


@transaction.atomic(durable=True)
def register_source(
    *, actor: Actor, name: str, description: str = "", declaration: Any = None
) -> Source:
    """Register a source, optionally with its first declaration."""
    if not actor.can_write_entries and not actor.is_reviewer:
        raise Forbidden("Your role may not register sources.")
    name = clean_id(name, field="name")
    description = clean_text(description, field="description")
    decl = _clean_declaration(declaration) if declaration is not None else None
    if decl:
        _check_may_declare(actor, *decl)
    if Source.objects.filter(name=name).exists():
        raise MemoryExists(f"A source '{name}' already exists.")
    source = Source.objects.create(name=name, description=description)
    if decl:
        SourceDeclaration.objects.create(
            source=source, version=1, authority=decl[0], verification=decl[1], declared_by=actor.id
        )
    audit.record(
        "source.registered",
        actor=actor,
        label=name,
        payload={"declaration": {"authority": decl[0], "verification": decl[1]} if decl else None},
    )
    return source


@transaction.atomic(durable=True)
def declare_source(source: Source, *, actor: Actor, declaration: Any) -> SourceDeclaration:
    """Append a new declaration version. Existing evidence keeps its snapshot."""
    if not actor.can_write_entries and not actor.is_reviewer:
        raise Forbidden("Your role may not declare sources.")
    authority, verification = _clean_declaration(declaration)
    _check_may_declare(actor, authority, verification)
    source = Source.objects.select_for_update().get(pk=source.pk)
    last = source.declarations.order_by("-version").first()
    decl = SourceDeclaration.objects.create(
        source=source,
        version=(last.version + 1) if last else 1,
        authority=authority,
        verification=verification,
        declared_by=actor.id,
    )
    audit.record(
        "source.declared",
        actor=actor,
        label=source.name,
        payload={"version": decl.version, "authority": authority, "verification": verification},
    )
    return decl
