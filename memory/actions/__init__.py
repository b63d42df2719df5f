"""Actions of the memory core: the only code that writes memory models.

One module per domain; the revision writer (:mod:`.writer`) is the only code that changes heads.
Lock order, everywhere: the Memory row (``select_for_update``), then proposal rows, then entry
heads. Every public action is ``@transaction.atomic(durable=True)``, validates and scans its
input *before* taking the lock, and re-checks state after taking it.

The reads (``get_memory``, ``get_entry``, ``head_of``) and the role checks (``require_*``) are
re-exported from :mod:`memory.selectors` and :mod:`memory.permissions`, where they live, for
the callers that name them through ``memory.actions``.
"""

from ..permissions import require_confirmer, require_reviewer, require_writer
from ..selectors import get_entry, get_memory, head_of
from .batch import MAX_BATCH, BatchResult, add_entries, batch_out
from .common import WriteResult, label_of
from .entries import add_entry, forget_entry, pin_entry, reactivate_entry, revise_entry
from .evidence import (
    EvidenceArg,
    EvidenceInput,
    EvidenceItem,
    ResolvedEvidence,
    check_evidence_count,
    clean_evidence,
    dedupe_evidence,
    evidence_inputs_of,
    evidence_json,
    resolve_evidence,
)
from .memories import (
    POLICY_KEYS,
    check_policy_text,
    clean_policy,
    create_memory,
    may_patch_policy,
    update_memory_policy,
    write_policy,
)
from .quarantine import quarantine_entry, release_entry, state_before_quarantine
from .relations import record_conflict
from .revalidation import confirm_entry, require_reverification
from .sessions import SessionEndResult, end_session
from .sources import Declaration, declare_source, register_source
from .writer import Change, NewBody, NewRelation, lock_memory, write_revision

__all__ = [
    "MAX_BATCH",
    "POLICY_KEYS",
    "BatchResult",
    "Change",
    "Declaration",
    "EvidenceArg",
    "EvidenceInput",
    "EvidenceItem",
    "NewBody",
    "NewRelation",
    "ResolvedEvidence",
    "SessionEndResult",
    "WriteResult",
    "add_entries",
    "add_entry",
    "batch_out",
    "check_evidence_count",
    "check_policy_text",
    "clean_evidence",
    "clean_policy",
    "confirm_entry",
    "create_memory",
    "declare_source",
    "dedupe_evidence",
    "end_session",
    "evidence_inputs_of",
    "evidence_json",
    "forget_entry",
    "get_entry",
    "get_memory",
    "head_of",
    "label_of",
    "lock_memory",
    "may_patch_policy",
    "pin_entry",
    "quarantine_entry",
    "reactivate_entry",
    "record_conflict",
    "register_source",
    "release_entry",
    "require_confirmer",
    "require_reverification",
    "require_reviewer",
    "require_writer",
    "resolve_evidence",
    "revise_entry",
    "state_before_quarantine",
    "update_memory_policy",
    "write_policy",
    "write_revision",
]
