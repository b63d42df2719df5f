"""Admission review and quarantine: which writes wait for a reviewer, and the state reasons.

A Memory opts in with ``policy.admission_review``::

    {"below_authority": "repository_attested", "injection_scan": true}

- ``below_authority``: a write whose evidence cites no source declared at or above that
  authority (``untrusted < user_asserted < repository_attested < system_attested``; a source
  without a declaration counts as ``untrusted``), or that cites nothing, lands as a *candidate*
  and is filed as an ``admission`` proposal right after the write commits. Absent: writes are
  direct.
- ``injection_scan``: each write's text is scanned for instructions aimed at a model
  (``memory.injection``); findings go on the admission proposal of a candidate, or file a
  ``quarantine`` proposal for a direct write. Nothing is quarantined without a reviewer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .models import Authority

#: Source authorities, weakest first.
AUTHORITY_ORDER: tuple[str, ...] = (
    Authority.UNTRUSTED,
    Authority.USER_ASSERTED,
    Authority.REPOSITORY_ATTESTED,
    Authority.SYSTEM_ATTESTED,
)
#: ``policy.admission_review`` settings.
ADMISSION_KEYS = frozenset({"below_authority", "injection_scan"})

#: ``Head.state_reason`` prefixes this module writes (followed by the reviewer's reason).
ADMISSION_PENDING = "admission_review"
ADMISSION_REJECTED = "admission_rejected"


@dataclass(frozen=True)
class AdmissionPolicy:
    below_authority: str | None = None
    injection_scan: bool = False

    @classmethod
    def of(cls, policy: Mapping[str, Any] | None) -> AdmissionPolicy:
        section = (policy or {}).get("admission_review")
        if not isinstance(section, Mapping):
            return cls()
        below = section.get("below_authority")
        return cls(
            below_authority=below if below in AUTHORITY_ORDER else None,
            injection_scan=section.get("injection_scan") is True,
        )

    def needs_review(self, authorities: Iterable[str]) -> bool:
        """Whether a write citing sources of ``authorities`` lands as a candidate."""
        if self.below_authority is None:
            return False
        floor = AUTHORITY_ORDER.index(self.below_authority)
        return not any(rank(a) >= floor for a in authorities)


def rank(authority: str) -> int:
    """The position of ``authority`` in :data:`AUTHORITY_ORDER` (unknown: the weakest)."""
    return AUTHORITY_ORDER.index(authority) if authority in AUTHORITY_ORDER else 0


def clean_admission_policy(value: Any) -> dict[str, Any] | None:
    """The validated ``admission_review`` section, or None when it is malformed."""
    if not isinstance(value, dict) or not set(value) <= ADMISSION_KEYS:
        return None
    below = value.get("below_authority")
    if below is not None and below not in AUTHORITY_ORDER:
        return None
    scan = value.get("injection_scan", False)
    if not isinstance(scan, bool):
        return None
    out: dict[str, Any] = {}
    if below is not None:
        out["below_authority"] = below
    if "injection_scan" in value:
        out["injection_scan"] = scan
    return out


def rejected_reason(reason: str) -> str:
    return f"{ADMISSION_REJECTED}:{reason}"


def is_rejected_admission(state_reason: str) -> bool:
    return state_reason.startswith(f"{ADMISSION_REJECTED}:")
