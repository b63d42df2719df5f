"""Domain errors of the memory core. Each maps to one stable API code (lib.errors)."""

from lib.errors import DomainError, Forbidden, NotFound, TooLarge, ValidationFailed

__all__ = [
    "AdmissionRejected",
    "DomainError",
    "EntryCandidate",
    "EntryInactive",
    "EntryQuarantined",
    "Forbidden",
    "NotFound",
    "PersonalDataDetected",
    "PolicyChanged",
    "SecretDetected",
    "TooLarge",
    "ValidationFailed",
    "VersionConflict",
]


class VersionConflict(DomainError):
    """The caller's ``expected_version`` is not the entry's head any more: somebody else wrote
    first. The caller re-reads and decides again; nothing was written."""

    code = "version_conflict"
    http_status = 409
    default_message = "The entry's head version is not the one you expected."


class PolicyChanged(DomainError):
    """The Memory's policy is not the one the change was prepared against (a replay's "current
    policy"): somebody changed it since. Nothing was written; replay again and decide."""

    code = "policy_changed"
    http_status = 409
    default_message = "The Memory's policy changed since you looked at it; replay again."


class EntryInactive(DomainError):
    """Revising an inactive entry would silently resurrect it; reactivate it first."""

    code = "entry_inactive"
    http_status = 409
    default_message = "The entry is inactive; reactivate it first."


class EntryStateConflict(DomainError):
    """The operation does not apply to the entry's current state (e.g. forgetting an inactive
    entry, reactivating an active one)."""

    code = "state_conflict"
    http_status = 409


class EntryCandidate(DomainError):
    """The entry waits for its admission review: only a reviewer's decision on its
    ``admission`` proposal (or a quarantine) changes it."""

    code = "entry_candidate"
    http_status = 409
    default_message = "The entry is a candidate waiting for admission review."


class EntryQuarantined(DomainError):
    """The entry is quarantined: nothing changes it until a reviewer releases it."""

    code = "entry_quarantined"
    http_status = 409
    default_message = "The entry is quarantined; a reviewer must release it first."


class AdmissionRejected(DomainError):
    """A reviewer rejected the entry at admission review: reactivating it would admit it
    without review. Write it again (with evidence that clears the policy) instead."""

    code = "admission_rejected"
    http_status = 409
    default_message = "The entry was rejected at admission review; it cannot be reactivated."


class SecretDetected(DomainError):
    """The body carries a credential; memories must never store secrets, so nothing is
    written and the caller is told what kind of secret was found."""

    code = "secret_detected"
    http_status = 422
    default_message = "The text contains a secret or credential and was not stored."


class PersonalDataDetected(DomainError):
    """The text carries personal data the Memory's policy refuses (card numbers and government
    ids by default; ``policy.personal_data.refuse``). Nothing is written; the caller is told
    which kind was found, never the value."""

    code = "personal_data_detected"
    http_status = 422
    default_message = "The text contains personal data this Memory refuses and was not stored."


class MemoryExists(DomainError):
    """A Memory with this slug already exists."""

    code = "conflict"
    http_status = 409


class MaintenanceDisabled(DomainError):
    """A real (mutating) L1 run was requested while the Memory's policy has ``l1_enabled``
    (and ``jobs.l1.enabled``) off — the default, so no job mutates anything unless a reviewer
    turned it on (DESIGN §4 invariant 7). Nothing was written; a dry run is always allowed."""

    code = "maintenance_disabled"
    http_status = 409
    default_message = (
        "L1 maintenance is disabled for this Memory "
        "(policy l1_enabled and jobs.l1.enabled are off)."
    )


class JobNotAvailable(DomainError):
    """The maintenance job name is known to the design but not available in this build, or
    unknown. Well-formed but refused."""

    code = "invalid"
    http_status = 422


class MaintenanceRunning(DomainError):
    """A run of the same job is already in progress on this Memory: two runs of one job never
    overlap (they would file the same proposals twice or retire on stale candidates). Nothing
    was written; retry when the other run has finished."""

    code = "maintenance_running"
    http_status = 409


class BatchRefused(DomainError):
    """At least one item of a batch add (``entries/batch``) is refused: a batch is all or
    nothing, so nothing was written. ``details.entries`` maps each refused item's index to its
    own error (``code``, ``message``, ``details``), exactly as that item alone would have been
    refused. The status and code are the refused items' when they share one (422
    ``secret_detected`` for secrets, 400 ``invalid`` for a malformed item), else 400
    ``invalid``."""

    code = "invalid"
    http_status = 400
    default_message = "Items of the batch were refused; nothing was written."

    def __init__(self, errors: dict[int, DomainError]):
        codes = {(e.code, e.http_status) for e in errors.values()}
        if len(codes) == 1:
            ((self.code, self.http_status),) = codes
        n = len(errors)
        super().__init__(
            f"{n} item{'s' if n != 1 else ''} of the batch {'were' if n != 1 else 'was'} "
            "refused; nothing was written.",
            details={
                "entries": {
                    str(i): {"code": e.code, "message": e.message, "details": e.details}
                    for i, e in sorted(errors.items())
                }
            },
        )


class IdempotencyKeyReused(DomainError):
    """The ``Idempotency-Key`` was already used by this caller for a different request; a
    retry must send the same body, a new request needs a new key."""

    code = "idempotency_key_reused"
    http_status = 409
    default_message = "This Idempotency-Key was used for a different request."
