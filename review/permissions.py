"""Who may do what in the review app: one place for every permission predicate.

Pages, fragments, the REST API and the actions ask these functions; none re-decides a rule.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory.actors import Actor
from memory.models import ApiRole

from .exceptions import Forbidden
from .models import Decision, Verdict


def may_view(actor: Actor) -> bool:
    """Reviewers, auditors and staff read the inbox, proposal and operation pages."""
    return actor.is_reviewer or actor.role == ApiRole.AUDITOR


def may_decide(actor: Actor) -> bool:
    """Only reviewers and staff decide proposals and compensate operations; auditors read."""
    return actor.is_reviewer


def require_reviewer(actor: Actor) -> None:
    if not may_decide(actor):
        raise Forbidden("Only reviewers may decide proposals or compensate operations.")


def identities(actor: Actor) -> set[str]:
    """The person behind ``actor`` (``Actor.identities``: a key and its owner are one person)."""
    return actor.identities()


def has_approved(actor: Actor, decisions: Iterable[Decision], *, revision: int) -> bool:
    """Whether the person behind ``actor`` (by any of its identities) already approved the
    proposal's current ``revision`` (approvals of an earlier revision are void)."""
    me = identities(actor)
    return any(
        d.verdict == Verdict.APPROVE
        and d.proposal_revision == revision
        and me & {d.actor_id, d.on_behalf_of}
        for d in decisions
    )
