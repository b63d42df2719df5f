"""Domain errors of the review engine. Each carries one stable API code (lib.errors)."""

from lib.errors import DomainError, Forbidden, NotFound, ValidationFailed
from proposals.exceptions import IllegalTransition, StaleProposal

__all__ = [
    "AlreadyDecided",
    "CompensationConflict",
    "DetailsNotAcknowledged",
    "DomainError",
    "Forbidden",
    "IllegalTransition",
    "NotFound",
    "ProposalAmended",
    "SelfApproval",
    "StaleProposal",
    "ValidationFailed",
]


class AlreadyDecided(DomainError):
    """Somebody decided first (or the proposal was withdrawn / went stale). The details say who
    and when, so the second reviewer knows what happened instead of guessing."""

    code = "already_decided"
    http_status = 409
    default_message = "The proposal was already decided."


class ProposalAmended(DomainError):
    """The proposal was amended after the reviewer read it: an approval names the revision it
    was given for, so nobody approves a text they have not seen. The details give the current
    revision."""

    code = "proposal_amended"
    http_status = 409
    default_message = "The proposal was amended since you read it; read the new revision first."


class SelfApproval(DomainError):
    """Nobody approves what they submitted: the submitting key, its owner, and anyone who
    submitted or edited the proposal are "self"."""

    code = "self_approval"
    http_status = 403
    default_message = "You cannot decide a proposal you submitted."


class DetailsNotAcknowledged(DomainError):
    """The merged body drops specific details (numbers, names, paths…); approval requires the
    reviewer to acknowledge each one explicitly, so nothing is lost by accident."""

    code = "details_not_acknowledged"
    http_status = 422
    default_message = "Acknowledge every lost detail before approving."


class CompensationConflict(DomainError):
    """The entries the operation touched have moved on since; undoing it now would overwrite
    later changes. The details list what changed."""

    code = "compensation_conflict"
    http_status = 409
    default_message = "The affected entries changed since the operation; it cannot be undone."


class AlreadyCompensated(DomainError):
    """The operation was already undone."""

    code = "already_compensated"
    http_status = 409
    default_message = "The operation was already compensated."
