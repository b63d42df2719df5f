"""Read models of the proposal and operation pages: what a reviewer needs to decide, in a
fixed number of queries.

The proposal page shows inputs → result side by side (three panes for two-input operations)
with word-level highlights (``review.compare``), lost details marked where they occur, the
evidence of every input with its source's declaration snapshot, the server's verification, the
recall preview (``review.recall_preview``), any open ``conflicts_with`` observation between two
of its entries, and the discussion: comments, verdicts and amendments (each with a word diff of
the proposed text it replaced), oldest first. The operation page's read model is
``review.operation_page``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, QuerySet

from memory.actors import Actor
from memory.models import Evidence, Relation, RelationKind
from proposals.evidence import parse_time, union
from proposals.kinds import ResultPane, kind_of
from proposals.kinds.policy import moved_keys
from proposals.models import (
    Proposal,
    ProposalAmendment,
    ProposalComment,
    ProposalStatus,
    ProposalTarget,
    TargetRole,
    target_map,
)
from proposals.selectors import get_proposal, visible_proposals

from . import compare
from .actions import approvals_required, lost_detail_names
from .forms import reason_label
from .governance_card import Governance, governance
from .inbox import ProposalFlags, moved_entries, result_text, targets_with_heads
from .links import entry_href
from .models import Decision, MaintenanceOperation, ReviewClaim
from .recall_preview import RecallPreview, recall_preview

# --- Evidence ----------------------------------------------------------------------------------


@dataclass
class EvidenceView:
    source: str
    ref: str
    authority: str
    verification: str
    declaration_version: int | None
    observed_at: datetime | None = None
    quote: str = ""

    @property
    def identity(self) -> str:
        """What the evidence union compares (``proposals.evidence.union``)."""
        return f"{self.source}|{self.ref}"

    @property
    def authority_label(self) -> str:
        return self.authority.replace("_", " ")

    @property
    def strong(self) -> bool:
        return self.verification == "verified" or self.authority in (
            "repository_attested",
            "system_attested",
        )


def evidence_from_rows(rows: Iterable[Evidence]) -> list[EvidenceView]:
    return [
        EvidenceView(
            e.source.name,
            e.ref,
            e.authority,
            e.verification,
            e.declaration_version,
            e.observed_at,
            e.quote,
        )
        for e in rows
    ]


def evidence_from_json(items: Iterable[dict[str, Any]] | None) -> list[EvidenceView]:
    out = []
    for item in items or []:
        snap = item.get("snapshot") or {}
        out.append(
            EvidenceView(
                str(item.get("source", "")),
                str(item.get("ref", "")),
                str(snap.get("authority", "untrusted")),
                str(snap.get("verification", "unknown")),
                snap.get("declaration_version"),
                parse_time(item.get("observed_at")),
                str(item.get("quote") or ""),
            )
        )
    return out


# --- Panes -------------------------------------------------------------------------------------


@dataclass
class Pane:
    title: str
    segments: list[compare.Segment]
    entry_id: str = ""
    version: int | None = None
    role: str = ""
    href: str = ""
    state: str = ""
    evidence: list[EvidenceView] = field(default_factory=list)
    moved: bool = False
    lost: list[str] = field(default_factory=list)


@dataclass
class Panes:
    inputs: list[Pane]
    result: Pane | None
    inline: list[compare.Segment]
    inline_title: str = ""

    @property
    def three(self) -> bool:
        """Two inputs → one result: the three-pane view."""
        return self.result is not None and len(self.inputs) == 2


def _input_pane(
    t: ProposalTarget,
    *,
    title: str,
    slug: str,
    diff: bool,
    result: str,
    lost: list[str],
    evidence: dict[int, list[EvidenceView]],
    moved: set[str],
) -> Pane:
    """The pane of one affected entry, headed ``title``: its text (highlighted against the result
    when ``diff``), its evidence, whether its head moved on, and which of the lost details
    ``lost`` occur in it."""
    return Pane(
        title=title,
        segments=(
            compare.annotate_input(t.version.body, result, lost)
            if diff
            else [compare.Segment(t.version.body)]
        ),
        entry_id=t.entry.uid,
        version=t.version_number,
        role=t.role,
        href=entry_href(slug, t.entry.uid),
        state=t.state,
        evidence=evidence.get(t.version_id, []),
        moved=t.entry.uid in moved,
        lost=[d for d in lost if compare.lost_spans(t.version.body, [d])],
    )


def _result_pane(
    described: ResultPane,
    *,
    slug: str,
    result: str,
    input_bodies: list[str],
    evidence: dict[int, list[EvidenceView]],
) -> Pane:
    """The result pane the kind described: the result text highlighted against the inputs,
    with the evidence of the versions and items it names (their union when it says so)."""
    groups = [
        *(evidence.get(pk, []) for pk in described.evidence_versions),
        *(evidence_from_json(items) for items in described.evidence_json),
    ]
    return Pane(
        title=described.title,
        segments=compare.annotate_result(result, input_bodies),
        entry_id=described.entry_id,
        version=described.version,
        role=described.role,
        href=entry_href(slug, described.entry_id) if described.entry_id else "",
        evidence=union(*groups) if described.union else [e for g in groups for e in g],
    )


def build_panes(
    proposal: Proposal,
    targets: Sequence[ProposalTarget],
    evidence: dict[int, list[EvidenceView]],
) -> Panes:
    """Input panes for every affected entry but an existing successor, and the result pane the
    kind describes (``proposals.kinds``), with word-level highlights and lost details."""
    spec = kind_of(proposal.kind)
    slug = proposal.memory.slug
    lost = lost_detail_names(proposal)
    info = {
        str(d.get("detail")): d.get("entries") or []
        for d in (proposal.verification or {}).get("lost_detail_info") or []
        if isinstance(d, dict)
    }
    moved = set(moved_entries(targets)) if proposal.status == ProposalStatus.PENDING else set()
    result = result_text(proposal, targets)
    inputs_t = [t for t in targets if t.role != TargetRole.SUCCESSOR]
    inputs = [
        _input_pane(
            t,
            title=spec.role_label(t.role, proposal.status),
            slug=slug,
            diff=spec.diff_inputs,
            result=result,
            lost=[d for d in lost if not info.get(d) or t.entry.uid in info[d]],
            evidence=evidence,
            moved=moved,
        )
        for t in inputs_t
    ]
    described = spec.result_pane(proposal, target_map(targets))
    if described is None:
        return Panes(inputs=inputs, result=None, inline=[])
    result_pane = _result_pane(
        described,
        slug=slug,
        result=result,
        input_bodies=[t.version.body for t in inputs_t],
        evidence=evidence,
    )
    inline = (
        compare.inline_diff(described.inline_from, result)
        if described.inline_from is not None
        else []
    )
    return Panes(
        inputs=inputs,
        result=result_pane,
        inline=inline,
        inline_title=described.inline_title if described.inline_from is not None else "",
    )


def input_conflicts(proposal: Proposal, targets: Sequence[ProposalTarget]) -> list[Relation]:
    """Open ``conflicts_with`` observations between two of the proposal's own entries (one
    query; none with fewer than two): the page says the inputs contradict each other."""
    ids = [t.entry_id for t in targets]
    if len(ids) < 2:
        return []
    return list(
        Relation.objects.filter(
            memory_id=proposal.memory_id,
            kind=RelationKind.CONFLICTS_WITH,
            retired_by__isnull=True,
            from_entry_id__in=ids,
            to_entry_id__in=ids,
        )
        .select_related("from_entry", "to_entry")
        .order_by("created_at", "pk")
    )


# --- The proposal page -------------------------------------------------------------------------


def proposal_queryset(actor: Actor) -> QuerySet[Proposal]:
    """Everything the page reads about one proposal: the row with memory, claim, operation and
    compensation (1 query), targets with entry, version and head (1), decisions (1), the
    discussion's comments with their resolutions (1) and amendments (1)."""
    return (
        visible_proposals(actor)
        .select_related("memory", "stale_revision", "claim", "operation__compensation")
        .prefetch_related(
            targets_with_heads(),
            Prefetch("decisions", queryset=Decision.objects.order_by("decided_at", "pk")),
            Prefetch(
                "comments",
                queryset=ProposalComment.objects.select_related("resolution").order_by(
                    "created_at", "pk"
                ),
            ),
            Prefetch("amendments", queryset=ProposalAmendment.objects.order_by("number")),
        )
    )


def get_visible_proposal(actor: Actor, pk: int) -> Proposal:
    """The proposal with everything its page reads; 404 when the actor may not see it."""
    return get_proposal(actor, pk, proposal_queryset(actor))


# --- The discussion ----------------------------------------------------------------------------


def proposed_text(kind: str, payload: dict[str, Any] | None) -> str | None:
    """The text a reviewer may edit in ``payload`` (the kind's ``proposed_text``): the body of
    a consolidation or promotion, a new successor's body; None for other kinds and for an
    existing successor."""
    return kind_of(kind).proposed_text(payload or {})


#: The proposal status each verdict stands for (badge colour and wording).
VERDICT_STATUS = {
    "approve": "approved",
    "reject": "rejected",
    "request_changes": "changes_requested",
}


@dataclass
class ThreadItem:
    """One entry of the discussion: a comment, a verdict or an amendment."""

    type: str  # "comment" | "decision" | "amendment"
    pk: int
    author: str
    created_at: datetime
    revision: int
    body: str = ""
    verdict: str = ""
    reason: str = ""
    acknowledged: list[str] = field(default_factory=list)
    # An amendment: the word diffs of the proposed text and of the rationale (when changed).
    text_diff: list[compare.DiffSegment] = field(default_factory=list)
    rationale_diff: list[compare.DiffSegment] = field(default_factory=list)
    # A comment anchored to a passage of the proposed text: ``{quote, start, end}``.
    anchor: dict[str, Any] = field(default_factory=dict)
    # A resolved comment: who resolved it, when, on which proposal revision.
    resolved_by: str = ""
    resolved_at: datetime | None = None
    resolved_revision: int | None = None

    @property
    def verdict_status(self) -> str:
        """The status the verdict stands for (the badge's colour)."""
        return VERDICT_STATUS.get(self.verdict, self.verdict)

    @property
    def verdict_label(self) -> str:
        return self.verdict_status.replace("_", " ")


def _amendment_item(kind: str, a: ProposalAmendment) -> ThreadItem:
    before, after = a.before or {}, a.after or {}
    old_text = proposed_text(kind, before.get("payload"))
    new_text = proposed_text(kind, after.get("payload"))
    old_why, new_why = str(before.get("rationale") or ""), str(after.get("rationale") or "")
    return ThreadItem(
        type="amendment",
        pk=a.pk,
        author=a.author_label,
        created_at=a.created_at,
        revision=a.number,
        body=a.comment,
        text_diff=(
            compare.word_diff(old_text, new_text)
            if old_text is not None and new_text is not None and old_text != new_text
            else []
        ),
        rationale_diff=compare.word_diff(old_why, new_why) if old_why != new_why else [],
    )


def _comment_item(c: ProposalComment) -> ThreadItem:
    resolution = c.resolution_or_none()
    return ThreadItem(
        type="comment",
        pk=c.pk,
        author=c.author_label,
        created_at=c.created_at,
        revision=c.proposal_revision,
        body=c.body,
        anchor=c.anchor or {},
        resolved_by=resolution.author_label if resolution else "",
        resolved_at=resolution.created_at if resolution else None,
        resolved_revision=resolution.proposal_revision if resolution else None,
    )


def thread(proposal: Proposal) -> list[ThreadItem]:
    """The discussion, oldest first (``decisions``, ``comments`` with their resolutions and
    ``amendments`` are prefetched): the order of ``proposals.serializers.thread_out``, with the
    amendments."""
    items = [
        ThreadItem(
            type="decision",
            pk=d.pk,
            author=d.actor_label,
            created_at=d.decided_at,
            revision=d.proposal_revision,
            body=d.comment,
            verdict=d.verdict,
            reason=reason_label(d.reason) if d.reason else "",
            acknowledged=list(d.acknowledged_lost_details or []),
        )
        for d in proposal.decisions.all()
    ]
    items += [_comment_item(c) for c in proposal.comments.all()]
    items += [_amendment_item(proposal.kind, a) for a in proposal.amendments.all()]
    return sorted(items, key=lambda i: (i.created_at, i.type, i.pk))


@dataclass
class ProposalPage(ProposalFlags):
    proposal: Proposal
    targets: list[ProposalTarget]
    panes: Panes
    lost_details: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    similarity: float | None
    similarity_method: str | None
    proposal_evidence: list[EvidenceView]
    preview: RecallPreview | None
    decisions: list[Decision]
    claim: ReviewClaim | None
    operation: MaintenanceOperation | None
    approvals: int
    required: int
    is_self: bool
    governance: Governance | None = None
    thread: list[ThreadItem] = field(default_factory=list)
    #: The actor counts as self because they amended it (not because they submitted it).
    is_editor: bool = False
    #: The text a reviewer may edit (None: the kind has none, or the proposal is closed).
    editable_text: str | None = None
    #: Open ``conflicts_with`` observations between two of the proposal's entries.
    conflicts: list[Relation] = field(default_factory=list)
    #: A policy change: each key it sets, before and after (``{key, before, after}``).
    policy_rows: list[dict[str, Any]] = field(default_factory=list)
    #: A pending policy change: the keys that changed since it was filed (approval is 409).
    policy_moved: list[str] = field(default_factory=list)

    @property
    def changes_requested(self) -> bool:
        return self.proposal.status == ProposalStatus.CHANGES_REQUESTED

    @property
    def is_stale(self) -> bool:
        return self.proposal.status == ProposalStatus.STALE

    @property
    def moved(self) -> list[str]:
        """Affected entries whose head moved on since the proposal was made."""
        return moved_entries(self.targets)

    @property
    def status_label(self) -> str:
        return self.proposal.status.replace("_", " ")

    @property
    def text_label(self) -> str:
        return kind_of(self.proposal.kind).text_label

    @property
    def last_change_request(self) -> ThreadItem | None:
        """The request for changes the proposal waits on (shown while changes are requested)."""
        asks = [i for i in self.thread if i.verdict == "request_changes"]
        return asks[-1] if asks else None

    @property
    def lost_names(self) -> list[str]:
        return [str(d["detail"]) for d in self.lost_details]

    @property
    def rejection_reason_label(self) -> str:
        """Why the proposal was rejected, in the words of the reject form's reasons."""
        reason = self.proposal.rejection_reason
        return reason_label(reason) if reason else ""


def page_checks(proposal: Proposal, targets: Sequence[ProposalTarget]) -> list[dict[str, Any]]:
    """The verification checks as stored at submission, except that a check saying what
    approval would do reads as what it did once decided (the kind's ``check_message``), and the
    head check reads as it is now: once an affected entry moved on (stale, or about to be),
    "every referenced version is its entry's head" is no longer true and is shown as failing,
    naming the entries."""
    spec = kind_of(proposal.kind)
    checks = [
        {**c, "message": spec.check_message(c, proposal.status)}
        for c in (proposal.verification or {}).get("checks") or []
    ]
    if proposal.status not in (ProposalStatus.PENDING, ProposalStatus.STALE):
        return checks
    moved = moved_entries(targets)
    if not moved and proposal.status != ProposalStatus.STALE:
        return checks
    which = ", ".join(moved) if moved else "an affected entry"
    for c in checks:
        if c.get("code") == "heads_match":
            c["status"] = "fail"
            c["message"] = (
                f"No longer true: {which} changed since it was proposed, so a referenced "
                "version is not its entry's head any more."
            )
    return checks


def _evidence_by_version(targets: Sequence[ProposalTarget]) -> dict[int, list[EvidenceView]]:
    """The evidence of every affected version, by version pk, in its recorded order (one
    query)."""
    versions = [t.version_id for t in targets]
    evidence: dict[int, list[EvidenceView]] = {}
    rows = Evidence.objects.filter(version_id__in=versions).select_related("source")
    for e in rows.order_by("version_id", "position"):
        evidence.setdefault(e.version_id, []).extend(evidence_from_rows([e]))
    return evidence


def _lost_details(proposal: Proposal) -> list[dict[str, Any]]:
    """Each lost detail a reviewer must acknowledge, with its kind and the entries it was
    found in, as the verification recorded them."""
    names = lost_detail_names(proposal)
    info = {
        str(d.get("detail")): d
        for d in (proposal.verification or {}).get("lost_detail_info") or []
        if isinstance(d, dict)
    }
    return [
        {
            "detail": d,
            "kind": (info.get(d) or {}).get("kind", ""),
            "entries": (info.get(d) or {}).get("entries", []),
        }
        for d in names
    ]


def proposal_page(
    actor: Actor, proposal: Proposal, *, now: datetime, with_preview: bool = True
) -> ProposalPage:
    """What the proposal page shows ``actor`` about ``proposal`` at ``now``."""
    targets = list(proposal.targets.all())
    evidence = _evidence_by_version(targets)
    verification = proposal.verification or {}
    lost = _lost_details(proposal)
    decisions = list(proposal.decisions.all())
    claim = getattr(proposal, "claim", None)
    operation = getattr(proposal, "operation", None)
    pending = proposal.status == ProposalStatus.PENDING
    spec = kind_of(proposal.kind)
    return ProposalPage(
        proposal=proposal,
        targets=targets,
        panes=build_panes(proposal, targets, evidence),
        lost_details=lost,
        checks=page_checks(proposal, targets),
        pairs=list(verification.get("pairs") or []),
        similarity=verification.get("similarity"),
        similarity_method=verification.get("similarity_method"),
        proposal_evidence=evidence_from_json(proposal.evidence),
        preview=(
            recall_preview(proposal.memory, proposal, targets, actor=actor)
            if pending and with_preview and not spec.changes_policy
            else None
        ),
        decisions=decisions,
        claim=claim if claim is not None and claim.is_live(now) else None,
        operation=operation,
        approvals=sum(
            1
            for d in decisions
            if d.verdict == "approve" and d.proposal_revision == proposal.revision
        ),
        required=approvals_required(proposal.memory, proposal.kind),
        is_self=proposal.is_self(actor),
        governance=governance(proposal, targets),
        thread=thread(proposal),
        is_editor=proposal.is_self(actor) and not proposal.is_submitter(actor),
        editable_text=(
            proposed_text(proposal.kind, proposal.payload) if proposal.is_open else None
        ),
        conflicts=input_conflicts(proposal, targets),
        policy_rows=spec.policy_rows(proposal),
        policy_moved=(
            moved_keys(proposal.memory.policy or {}, proposal.payload or {})
            if spec.changes_policy and proposal.is_open
            else []
        ),
    )
