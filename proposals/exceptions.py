"""Domain errors of proposal intake. Each carries one stable API code (mapped in lib.errors)."""

from lib.errors import DomainError, Forbidden, NotFound, TooLarge, ValidationFailed

__all__ = [
    "AlreadyResolved",
    "DomainError",
    "DuplicateProposal",
    "Forbidden",
    "IdempotencyKeyReused",
    "IllegalTransition",
    "InsufficientSessions",
    "NoopRewrite",
    "NotFound",
    "StaleProposal",
    "TooLarge",
    "ValidationFailed",
]


class StaleProposal(DomainError):
    """A referenced version is not its entry's head (any more): the proposal was built on a
    state that no longer exists and could never apply. The caller re-reads and proposes again."""

    code = "stale_proposal"
    http_status = 409
    default_message = "A referenced entry version is not the entry's head."


class NoopRewrite(DomainError):
    """The proposal would change nothing (e.g. a successor that says exactly what the old entry
    says): bodies are never "polished" through review."""

    code = "noop_rewrite"
    http_status = 422
    default_message = "The proposal changes nothing."


class DuplicateProposal(DomainError):
    """An open proposal of the same kind already covers exactly this set of entries; a reviewer
    should decide that one first. ``details.proposal`` is its id."""

    code = "duplicate_proposal"
    http_status = 409
    default_message = "An open proposal of this kind already covers these entries."


class IdempotencyKeyReused(DomainError):
    """The ``Idempotency-Key`` was already used by this submitter for a different request; a
    retry must send the same body, a new request needs a new key."""

    code = "idempotency_key_reused"
    http_status = 409
    default_message = "This Idempotency-Key was used for a different request."


class InsufficientSessions(DomainError):
    """A promotion needs working notes from at least ``promotion_min_sessions`` distinct sessions:
    a theme seen in one session is not yet a durable fact."""

    code = "insufficient_sessions"
    http_status = 422
    default_message = "Promotion needs working notes from more distinct sessions."


class IllegalTransition(DomainError):
    """The proposal's status does not allow the requested change (it was already decided,
    withdrawn or went stale)."""

    code = "already_decided"
    http_status = 409
    default_message = "The proposal is no longer pending."


class AlreadyResolved(DomainError):
    """The comment was resolved already (a resolution is written once and never undone): the
    caller re-reads the thread, which names who resolved it and when. To raise the point again,
    comment again."""

    code = "already_resolved"
    http_status = 409
    default_message = "The comment is already resolved."
