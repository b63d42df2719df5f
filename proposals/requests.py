"""Submitting a proposal from a request object (a dict shaped like the REST body).

For callers that hold the request as data — the maintenance passes, the demo, scripts and tests:
the shape is checked once by the kind's schema (``proposals.serializers.parse_submission``), then
the typed submission goes to the one intake action. The REST view does the same in two steps.
"""

from __future__ import annotations

from typing import Any

from memory.actors import Actor

from .actions import SubmitResult, submit_proposal
from .permissions import require_submitter_of
from .serializers import parse_submission


def submit_request(*, actor: Actor, data: Any, idempotency_key: str | None = None) -> SubmitResult:
    """Parse ``data`` (400 ``invalid`` on a wrong shape) and submit it (see ``submit_proposal``)."""
    require_submitter_of(actor, data)
    return submit_proposal(
        actor=actor, submission=parse_submission(data), idempotency_key=idempotency_key
    )
