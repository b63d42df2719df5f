"""Sources and their declarations."""

from __future__ import annotations

from typing import TypedDict

from django.db import transaction

from .. import audit
from ..actors import Actor
from ..admission import clean_id, clean_text
from ..exceptions import (
    Forbidden,
    MemoryExists,
)
from ..models import (
    Authority,
    Source,
    SourceDeclaration,
    Verification,
)


class Declaration(TypedDict):
    """How far a source's evidence is trusted, as ``DeclarationIn`` parses it: an
    :class:`~memory.models.Authority` and a :class:`~memory.models.Verification` value."""

    authority: str
    verification: str


def _may_declare(actor: Actor) -> bool:
    """Sources are shared by every Memory, so a declaration weighs evidence everywhere: only a
    reviewer whose key is not limited to some Memories, or staff, may make one. (An agent's own
    claim can never make its evidence count as attested, and a key scoped to one Memory can
    neither raise nor weaken the evidence of the others.)"""
    return actor.is_staff or (actor.is_reviewer and actor.memory_ids is None)


def _check_may_declare(actor: Actor, authority: str, verification: str) -> None:
    # A new source registered as untrusted and unverified weighs nothing anywhere yet.
    raised = authority != Authority.UNTRUSTED or verification == Verification.VERIFIED
    if raised and not _may_declare(actor):
        raise Forbidden(
            "Only a reviewer without a Memory scope, or staff, may declare a source "
            "(sources are shared by every Memory)."
        )


@transaction.atomic(durable=True)
def register_source(
    *, actor: Actor, name: str, description: str = "", declaration: Declaration | None = None
) -> Source:
    """Register a source, optionally with its first declaration."""
    if not actor.can_write_entries and not actor.is_reviewer:
        raise Forbidden("Your role may not register sources.")
    name = clean_id(name, field="name")
    description = clean_text(description, field="description")
    decl = (
        (declaration["authority"], declaration["verification"]) if declaration is not None else None
    )
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
def declare_source(source: Source, *, actor: Actor, declaration: Declaration) -> SourceDeclaration:
    """Append a new declaration version. Existing evidence keeps its snapshot.

    Preconditions: a reviewer without a Memory scope, or staff (403 ``forbidden``)."""
    if not _may_declare(actor):
        raise Forbidden(
            "Only a reviewer without a Memory scope, or staff, may declare a source "
            "(sources are shared by every Memory)."
        )
    authority, verification = declaration["authority"], declaration["verification"]
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
