"""Who may do what with proposals: one place for the proposal app's permission predicates.

The REST views, the MCP tools, the request helper and the actions all ask these functions, so
a role is refused (403) before its request body is even parsed, and again inside the action.
"""

from __future__ import annotations

from memory.actors import Actor
from memory.models import ActorType

from .exceptions import Forbidden
from .kinds import KINDS


def require_reader(actor: Actor) -> None:
    """Agents, reviewers, auditors, staff and the system read proposals."""
    if not actor.can_read:
        raise Forbidden("Your role may not read proposals.")


def require_submitter(actor: Actor) -> None:
    """Agents, staff and the system submit proposals; reviewers and auditors do not."""
    if not actor.can_write_entries:
        raise Forbidden("Your role may not submit proposals.")


def require_assigner(actor: Actor) -> None:
    """Reviewers (and staff) assign proposals."""
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may assign proposals.")


def kinds_filed_by(actor: Actor) -> list[str]:
    """The proposal kinds ``actor`` may file: a kind the server files itself (``admission``)
    is filed by the system only."""
    system = actor.type == ActorType.SYSTEM
    return [str(name) for name, spec in KINDS.items() if system or not spec.server_filed]


def require_may_file(actor: Actor, kind: str) -> None:
    """403 for a known kind ``actor`` may not file (see :func:`kinds_filed_by`)."""
    if kind in KINDS and kind not in kinds_filed_by(actor):
        raise Forbidden(f"'{kind}' proposals are filed by the server only.")


def require_submitter_of(actor: Actor, data: object) -> None:
    """:func:`require_submitter` and :func:`require_may_file` for a submission as sent: 403
    before its shape is checked, so a caller who may never file that kind is told so, not
    which of its fields are missing."""
    require_submitter(actor)
    kind = data.get("kind") if isinstance(data, dict) else None
    if isinstance(kind, str):
        require_may_file(actor, kind)
