"""Who may do what with proposals: one place for the proposal app's permission predicates.

The REST views, the MCP tools, the request helper and the actions all ask these functions, so
a role is refused (403) before its request body is even parsed, and again inside the action.
"""

from __future__ import annotations

from memory.actors import Actor

from .exceptions import Forbidden


def require_reader(actor: Actor) -> None:
    """Agents, reviewers, auditors, staff and the system read proposals."""
    if not actor.can_read:
        raise Forbidden("Your role may not read proposals.")


def require_submitter(actor: Actor) -> None:
    """Agents, staff and the system submit proposals; reviewers and auditors do not."""
    if not actor.can_write_entries:
        raise Forbidden("Your role may not submit proposals.")
