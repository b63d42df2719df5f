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


def require_submitter(actor: Actor, kind: str | None = None) -> None:
    """Agents, staff and the system submit proposals; reviewers and auditors do not — except a
    kind reviewers file (``reviewer_filed``: a ``policy`` change), which reviewers, staff and
    the system submit and agents do not."""
    spec = KINDS.get(kind) if kind else None
    if spec is not None and spec.reviewer_filed:
        if not (actor.is_reviewer or actor.type == ActorType.SYSTEM):
            raise Forbidden(f"'{kind}' proposals are filed by reviewers.")
        return
    if not actor.can_write_entries:
        raise Forbidden("Your role may not submit proposals.")


def require_assigner(actor: Actor) -> None:
    """Reviewers (and staff) assign proposals."""
    if not actor.is_reviewer:
        raise Forbidden("Only reviewers may assign proposals.")


def kinds_filed_by(actor: Actor) -> list[str]:
    """The proposal kinds ``actor`` may file: a kind the server files itself (``admission``)
    is filed by the system only; a kind reviewers file (``policy``) by reviewers, staff and
    the system; the others by agents, staff and the system."""
    system = actor.type == ActorType.SYSTEM
    out = []
    for name, spec in KINDS.items():
        if spec.server_filed:
            ok = system
        elif spec.reviewer_filed:
            ok = system or actor.is_reviewer
        else:
            ok = actor.can_write_entries
        if ok:
            out.append(str(name))
    return out


def require_may_file(actor: Actor, kind: str) -> None:
    """403 for a known kind ``actor`` may not file (see :func:`kinds_filed_by`)."""
    if kind in KINDS and kind not in kinds_filed_by(actor):
        who = "reviewers" if KINDS[kind].reviewer_filed else "the server only"
        raise Forbidden(f"'{kind}' proposals are filed by {who}.")


def require_submitter_of(actor: Actor, data: object) -> None:
    """:func:`require_submitter` and :func:`require_may_file` for a submission as sent: 403
    before its shape is checked, so a caller who may never file that kind is told so, not
    which of its fields are missing."""
    kind = data.get("kind") if isinstance(data, dict) else None
    require_submitter(actor, kind if isinstance(kind, str) else None)
    if isinstance(kind, str):
        require_may_file(actor, kind)
