"""What every proposal kind provides, and the values kinds exchange with intake and review.

A kind (:class:`ProposalKindSpec`) answers, in one module: its input schema, which entries it
references and in which role, how a submission is verified, what approval writes (an
:class:`ApprovalPlan`: the memory :class:`~memory.actions.plans.Plan`, the heads it leaves, how to
undo it), what it does to current-state recall (:class:`RecallEffect`, used by the recall preview
and the operation's derived-view impact) and how the proposal page shows its result
(:class:`ResultPane`). Intake, approval, preview, the proposal page and the inbox loop over
``proposals.kinds.KINDS`` instead of branching on the kind.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lib.identity import Actor
from memory.actions import Change, EvidenceInput, NewBody, ResolvedEvidence, resolve_evidence
from memory.actions.plans import Plan
from memory.admission import clean_body
from memory.models import Entry, Head, HeadState, Memory
from memory.text import content_hash

from ..models import OPEN_STATUSES, Proposal, ProposalStatus, ProposalTarget, TargetRole
from ..verify import Report

# --- Intake -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    """A submission that passed its kind's schema: ``fields`` is the validated request (memory,
    kind, common and kind fields); ``request_hash`` identifies the request for idempotency."""

    kind: str
    fields: Mapping[str, Any]
    request_hash: str

    @classmethod
    def of(cls, kind: str, fields: Mapping[str, Any]) -> Submission:
        """A submission the server builds itself (already in its validated form)."""
        return cls(str(kind), fields, request_hash(fields))


def request_hash(data: Any) -> str:
    """SHA-256 over the canonical JSON of a request (key order does not matter)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Ref:
    """One referenced entry of a submission: where it was named, its role, the claimed head."""

    path: str
    role: str
    entry_id: str
    version: int


def ref(path: str, role: str, raw: dict[str, Any]) -> Ref:
    return Ref(path, role, str(raw["entry_id"]), int(raw["version"]))


def refs_of(path: str, role: str, items: list[dict[str, Any]]) -> list[Ref]:
    return [ref(f"{path}[{i}]", role, r) for i, r in enumerate(items)]


@dataclass
class Draft:
    """A submission after shape and text checks, before anything is read from the Memory."""

    kind: str
    memory_slug: str
    rationale: str
    evidence: list[ResolvedEvidence]
    claimed_policy_version: str | None
    refs: list[Ref]
    body: str = ""
    target_kind: str = ""
    successor_new: dict[str, Any] | None = None
    successor_evidence: list[ResolvedEvidence] | None = None
    reason: str = ""
    policy: dict[str, Any] = field(default_factory=dict)


@dataclass
class Resolved:
    """A reference resolved to its entry and the head read for it."""

    ref: Ref
    entry: Entry
    head: Head

    def ref_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry.uid, "version": self.ref.version}

    def text(self) -> tuple[str, str]:
        return (self.entry.uid, self.head.version.body)


# --- Approval ---------------------------------------------------------------------------------


@dataclass
class RecallEffect:
    """What approval does to current-state recall, described once per kind.

    ``leaves``: affected entries that stop being current. ``rewrites``: an entry that gets a new
    body. ``joins``: new entries (a label and the body) that become current.
    """

    leaves: list[ProposalTarget] = field(default_factory=list)
    rewrites: list[tuple[ProposalTarget, str]] = field(default_factory=list)
    joins: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ApprovalPlan:
    """What approving a proposal writes (``plan``, applied by ``memory.actions.plans.apply_plan``)
    and what the operation records: the heads it leaves and how compensation puts them back."""

    plan: Plan = field(default_factory=Plan)
    heads_after: dict[str, dict[str, Any]] = field(default_factory=dict)
    restore: list[dict[str, Any]] = field(default_factory=list)

    def after(self, entry: Entry, version: int, state: str) -> None:
        self.heads_after[entry.uid] = {"version": version, "state": state}

    def restore_head(self, t: ProposalTarget, head: Head, *, governance: bool = False) -> None:
        """Undo puts ``t``'s head back exactly as it is now: version, state, reason and the start
        of its lifecycle interval (undoing an operation never resets a retention clock); with
        ``governance``, its owner, confidence and review date too (an approval that rewrote
        them)."""
        item: dict[str, Any] = {
            "entry_id": t.entry.uid,
            "version": t.version_number,
            "state": head.state,
            "reason": head.state_reason,
            "interval_started_at": head.interval_started_at.isoformat(),
        }
        if governance:
            item["governance"] = {
                "owner": head.owner,
                "confidence": head.confidence,
                "review_at": head.review_at.isoformat() if head.review_at else None,
            }
        self.restore.append(item)

    def retire_created(self, entry: Entry, why: str) -> None:
        """Undo retires an entry the operation created (it stops being current)."""
        self.restore.append(
            {"entry_id": entry.uid, "version": 1, "state": HeadState.INACTIVE, "reason": why}
        )

    def move(
        self,
        t: ProposalTarget,
        head: Head,
        state: str,
        reason: str = "",
        *,
        restart_interval: bool = False,
    ) -> None:
        """``t``'s head keeps its version and takes ``state`` with ``reason``; undo puts the head
        back exactly as it is now."""
        self.plan.changes.append(
            Change(
                entry=t.entry,
                to_state=state,
                state_reason=reason,
                restart_interval=restart_interval,
            )
        )
        self.after(t.entry, t.version_number, state)
        self.restore_head(t, head)

    def create(
        self,
        entry: Entry,
        body: str,
        evidence: list[EvidenceInput],
        why: str,
        *,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        """``entry`` (a new, unsaved entry) gets its first version, ``body`` citing ``evidence``,
        and becomes current, with ``attributes`` on its head (its governance fields); undo
        retires it with ``why``."""
        digest = content_hash(entry.kind, body, [e.identity for e in evidence])
        self.plan.changes.append(
            Change(
                entry=entry,
                new_body=NewBody(body, digest, resolve_evidence(evidence)),
                restart_interval=True,
                attributes=dict(attributes or {}),
            )
        )
        self.after(entry, 1, HeadState.ACTIVE)
        self.retire_created(entry, why)


ByRole = dict[str, list[ProposalTarget]]
Heads = dict[int, Head]
#: Resolved references of a submission by role.
Found = dict[str, list[Resolved]]
Payload = dict[str, Any]


# --- The proposal page ------------------------------------------------------------------------


@dataclass(frozen=True)
class Wording:
    """What the proposal page says about an effect of approval, by what became of the proposal:
    ``open`` says what approval will do (pending, changes requested); ``done`` what it did
    (approved; compensated adds that it was undone); ``closed`` claims nothing
    (rejected, withdrawn, stale: approval never happened); ``rejected`` is what a rejection
    itself did, for a kind whose rejection writes (admission), else ``closed``."""

    open: str
    done: str
    closed: str
    rejected: str = ""

    def for_status(self, status: str) -> str:
        """The wording for a proposal in ``status``."""
        if status in OPEN_STATUSES:
            return self.open
        if status == ProposalStatus.APPROVED:
            return self.done
        if status == ProposalStatus.COMPENSATED:
            return f"{self.done}, undone by compensation"
        if status == ProposalStatus.REJECTED and self.rejected:
            return self.rejected
        return self.closed


@dataclass
class ResultPane:
    """The result side of the proposal page, described by the kind and rendered by review.

    Evidence is the union of ``evidence_versions`` (stored versions, by pk) then
    ``evidence_json`` (groups of stored citations); with ``union=False`` the one version's
    evidence is shown as it is. ``inline_from`` is the text the word-by-word diff starts from.
    """

    title: str
    entry_id: str = ""
    version: int | None = None
    role: str = ""
    evidence_versions: list[int] = field(default_factory=list)
    evidence_json: list[list[dict[str, Any]]] = field(default_factory=list)
    union: bool = True
    inline_from: str | None = None
    inline_title: str = ""


# --- The kind ---------------------------------------------------------------------------------


def ids(uids: list[str]) -> str:
    """Entry ids in a sentence: ``e_1``, ``e_1 and e_2``, ``e_1, e_2 and e_3``."""
    return uids[0] if len(uids) == 1 else ", ".join(uids[:-1]) + " and " + uids[-1]


def role_ids(by_role: ByRole, role: str) -> str:
    return ids([t.entry.uid for t in by_role.get(role, [])] or ["(none)"])


class ProposalKindSpec:
    """One proposal kind. Subclasses live in ``proposals/kinds/<kind>.py``."""

    name: ClassVar[str]
    #: The revision kind an approval writes.
    revision_kind: ClassVar[str]
    #: The submission schema (a ``proposals.inputs.ProposalCommonIn`` subclass).
    serializer: ClassVar[type]
    #: Roles shown as inputs in an inbox row.
    input_roles: ClassVar[tuple[str, ...]]
    #: How the page names each role of this kind (:meth:`role_label`).
    role_labels: ClassVar[dict[str, Wording]]
    #: Whether input panes mark the words the result drops.
    diff_inputs: ClassVar[bool] = True
    #: Roles whose entries may already be inactive at submission.
    inactive_roles: ClassVar[frozenset[str]] = frozenset()
    #: Only the server files this kind (agents and reviewers get 403).
    server_filed: ClassVar[bool] = False
    #: The kind's own fields an amendment may replace (rationale and evidence always may).
    amendable_fields: ClassVar[tuple[str, ...]] = ()
    #: Reviewers file this kind (and agents do not): a change to the Memory itself, not to
    #: entries an agent wrote.
    reviewer_filed: ClassVar[bool] = False
    #: Approval changes the Memory's policy (:meth:`apply_policy`) instead of writing a
    #: revision of entries: no operation, nothing to compensate.
    changes_policy: ClassVar[bool] = False

    # What the inbox and the proposal page say of this kind (no template branches on names)

    #: The heading of the proposal page's changes section (a policy change names its Memory).
    changes_title: ClassVar[str] = "Inputs → result"
    #: Whether that section shows the legend of the result's diff marks.
    diff_legend: ClassVar[bool] = True
    #: What an inbox row shows after the arrow when the kind writes no result text.
    outcome: ClassVar[str] = ""
    #: The heading of the governance section, and what follows "The scan found no
    #: instruction-like text" there.
    governance_title: ClassVar[str] = "Admission review"
    clean_scan_note: ClassVar[str] = ""

    # Intake

    def accepts(self, role: str, state: str) -> bool:
        """Whether an entry in head ``state`` may be referenced in ``role`` (default: active,
        or inactive in :attr:`inactive_roles`)."""
        return state == HeadState.ACTIVE or (
            state == HeadState.INACTIVE and role in self.inactive_roles
        )

    def refs(self, parsed: dict[str, Any]) -> list[Ref]:
        raise NotImplementedError

    def resubmission(self, proposal: Proposal) -> dict[str, Any]:
        """The kind's fields of ``proposal`` as its submission schema takes them (what an
        amendment starts from). Default: the stored payload's keys that are schema fields
        (what the server added, such as scan findings, is recomputed)."""
        fields = self.serializer().fields
        return {k: v for k, v in (proposal.payload or {}).items() if k in fields}

    def amended(self, fields: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
        """The submission an amendment makes of ``fields`` (:meth:`resubmission` and the common
        fields): each field named in ``changes`` is replaced. Default: as given."""
        return {**fields, **changes}

    def clean(self, parsed: dict[str, Any], draft: Draft) -> None:
        """Kind fields of the draft (bodies cleaned, evidence resolved). Default: none."""

    def scope_key(self, payload: Mapping[str, Any]) -> str | None:
        """What the one-open-proposal rule compares, for a kind that affects no entry (a
        policy change: the keys it sets). Default: None (the set of affected entries)."""
        return None

    def apply_policy(self, memory: Memory, proposal: Proposal, *, actor: Actor) -> None:
        """Approval's effect for a kind that :attr:`changes_policy`, under the Memory lock."""
        raise NotImplementedError

    def policy_rows(self, proposal: Proposal) -> list[dict[str, Any]]:
        """The keys a policy change sets, before and after, for the page. Default: none."""
        return []

    def verify(self, memory: Memory, draft: Draft, found: Found, report: Report) -> Payload:
        """Kind rules and checks on the report; returns the normalized payload."""
        raise NotImplementedError

    # Approval

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads
    ) -> ApprovalPlan:
        raise NotImplementedError

    def rejection_plan(
        self, memory: Memory, proposal: Proposal, by_role: ByRole, reason: str
    ) -> tuple[str, Plan] | None:
        """What rejecting writes, as ``(revision kind, plan)``. Default: nothing (a rejected
        proposal leaves memory as it is); admission retires its candidate."""
        return None

    def recall_effect(self, proposal: Proposal, by_role: ByRole) -> RecallEffect:
        raise NotImplementedError

    def irreversible(
        self, proposal: Proposal, by_role: ByRole, approval: ApprovalPlan, revision: int
    ) -> list[str]:
        """What compensating this approval cannot take back, in words, recorded on the
        operation: the kind's lasting effects (:meth:`lasting_effects`), the entries it
        created (compensation retires them; it never deletes), and the history it wrote. What
        happened after the approval (notifications sent, recall served) is added when the
        operation is read (``review.selectors.irreversible_effects``)."""
        affected = {t.entry.uid for ts in by_role.values() for t in ts}
        created = [
            c.entry.uid
            for c in approval.plan.changes
            if c.new_body is not None and c.entry.uid not in affected
        ]
        out = self.lasting_effects(proposal, by_role)
        if created:
            out.append(
                f"{ids(created)} created by this approval: compensation retires "
                f"{'it' if len(created) == 1 else 'them'}, never deletes; the text stays "
                "readable in history and the audit log."
            )
        out.append(
            f"Revision r{revision} stays in the append-only history; a compensation adds its "
            "own revision after it."
        )
        return out

    #: What agents may have acted on while the approval was in force, in one sentence; each
    #: ``{role}`` names the entries in that role (``{entry}``, ``{old}``…). Default: none.
    lasting_effect: ClassVar[str] = ""

    def lasting_effects(self, proposal: Proposal, by_role: ByRole) -> list[str]:
        """:attr:`lasting_effect` with the entry ids of each role filled in."""
        if not self.lasting_effect:
            return []
        return [self.lasting_effect.format(**{r: role_ids(by_role, r) for r in TargetRole.values})]

    # Pages

    def role_label(self, role: str, status: str) -> str:
        """How the page names an entry in ``role`` of this kind's proposal in ``status``: the
        kind's own label (two kinds may share a role and say different things of it)."""
        wording = self.role_labels.get(role)
        return wording.for_status(status) if wording else role

    #: Checks whose stored message says what approval would do, by check code: how the page
    #: words each once the proposal is decided (:meth:`check_message`).
    check_wording: ClassVar[dict[str, Wording]] = {}

    def check_message(self, check: Mapping[str, Any], status: str) -> str:
        """The message of a stored verification check as the page shows it for a proposal in
        ``status`` (the stored message, unless :attr:`check_wording` words the check)."""
        wording = self.check_wording.get(str(check.get("code", "")))
        return wording.for_status(status) if wording else str(check.get("message", ""))

    def result_text(self, proposal: Proposal) -> str:
        """What the proposal would write, in words. Default: nothing."""
        return ""

    def result_pane(self, proposal: Proposal, by_role: ByRole) -> ResultPane | None:
        """The result pane. Default: none (inputs only)."""
        return None

    #: How the page names the text a reviewer may edit.
    text_label: ClassVar[str] = "Proposed text"

    def proposed_text(self, payload: dict[str, Any]) -> str | None:
        """The text a reviewer may edit in ``payload`` (a proposal's, or one an amendment
        replaced). Default: None (the kind has none)."""
        return None

    def text_changes(self, proposal: Proposal, text: str) -> dict[str, Any]:
        """The amendment that replaces the proposed text with ``text`` (only for a proposal
        that has one, :meth:`proposed_text`)."""
        raise NotImplementedError

    #: Whether the page shows the governance card (the reason to withhold, the injection scan).
    governs: ClassVar[bool] = False

    def withhold_reason(self, proposal: Proposal) -> str:
        """The reason given for withholding the entries. Default: none."""
        return ""

    def scan_of(self, proposal: Proposal, entry_id: str) -> dict[str, Any]:
        """The injection scan stored for one affected entry (``{rules_version, rules, spans}``).
        Default: none."""
        return {}


class BodyKind(ProposalKindSpec):
    """A kind whose result is a text submitted as ``body`` (consolidation, promotion): it is
    cleaned at intake, shown as the result and may be edited by a reviewer's amendment."""

    amendable_fields = ("body",)

    def clean(self, parsed: dict[str, Any], draft: Draft) -> None:
        draft.body = clean_body(parsed["body"])

    def result_text(self, proposal: Proposal) -> str:
        return str((proposal.payload or {}).get("body", ""))

    def proposed_text(self, payload: dict[str, Any]) -> str | None:
        body = payload.get("body")
        return body if isinstance(body, str) else None

    def text_changes(self, proposal: Proposal, text: str) -> dict[str, Any]:
        return {"body": text}


class EntryListKind(ProposalKindSpec):
    """A kind whose input is a list of ``entries`` that approval moves, each keeping its version,
    to :attr:`to_state` (cleanup, quarantine): every one leaves current recall, and undo puts
    each head back as it was."""

    input_roles = (TargetRole.ENTRY,)
    diff_inputs = False
    #: The state approval moves the entries to.
    to_state: ClassVar[str]

    def state_reason(self, proposal: Proposal) -> str:
        """The state reason approval records on each entry."""
        raise NotImplementedError

    def refs(self, parsed: dict[str, Any]) -> list[Ref]:
        return refs_of("entries", TargetRole.ENTRY, parsed["entries"])

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: ByRole, heads: Heads
    ) -> ApprovalPlan:
        out = ApprovalPlan()
        reason = self.state_reason(proposal)
        for t in by_role.get(TargetRole.ENTRY, []):
            out.move(t, heads[t.entry_id], self.to_state, reason)
        return out

    def recall_effect(self, proposal: Proposal, by_role: ByRole) -> RecallEffect:
        return RecallEffect(leaves=list(by_role.get(TargetRole.ENTRY, [])))
