"""Who may do what in the memory core: the role checks every surface applies.

Each ``require_*`` raises 403 ``forbidden`` (``memory.exceptions.Forbidden``) for a role that
may not; the actions call them, and the REST views and MCP tools call them first, before the
body or the arguments are parsed, so a request the role may never make is 403 whatever it sent.
The role predicates themselves are the actor's (``memory.actors.Actor``).
"""

from __future__ import annotations

from .actors import STAFF, Actor
from .exceptions import Forbidden
from .models import ApiRole


def require_writer(actor: Actor) -> None:
    """Agents (and staff) write entries."""
    if not actor.can_write_entries:
        raise Forbidden("Your role may not write entries.")


def require_reviewer(actor: Actor, what: str) -> None:
    """Reviewers only: ``what`` names the decision (pin, quarantine, release)."""
    if not actor.is_reviewer:
        raise Forbidden(f"Only reviewers may {what} entries.")


def require_writer_or_reviewer(actor: Actor, *, as_reviewer: bool) -> None:
    """Writers forget and reactivate over REST and MCP; a reviewer does so only as a decision
    from the browser's entry page (``as_reviewer``), never with a key: the REST contract keeps
    reviewer keys away from entry writes."""
    if not as_reviewer:
        require_writer(actor)
    elif not actor.is_reviewer or actor.key_pk is not None:
        raise Forbidden("Only reviewers may forget or reactivate entries from the entry page.")


def require_confirmer(actor: Actor) -> None:
    """Agents (writers) and reviewers confirm; auditors change nothing."""
    if not (actor.can_write_entries or actor.is_reviewer):
        raise Forbidden("Only agents and reviewers may confirm entries.")


def require_reader(actor: Actor) -> None:
    """403 ``forbidden`` for a role that may not recall (checked before the Memory is looked up,
    by the REST views and the MCP tools alike)."""
    if not actor.can_read:
        raise Forbidden("Your role may not recall memories.")


def may_see_trace(actor: Actor) -> bool:
    """Reviewers, auditors and staff see ranking traces (and a Memory's health pages); agents
    do not."""
    return actor.role in (ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF)
