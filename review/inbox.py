"""Reads behind the reviewer inbox: filters from the URL, the page of proposals, counts per kind
and the "new items" badge. Every read starts from the actor (``Proposal.objects.visible_to``).

Cost does not grow with the queue: the page is a keyset page over the primary key (oldest /
newest first), the counts per kind are capped (:data:`COUNT_CAP`, shown as "1000+") and computed
in one statement, and the badge counts only proposals newer than the page's watermark, capped
too. A page costs the same fixed number of queries whether 5 or 100,000 proposals wait.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections
from django.db.models import (
    Count,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.timesince import timesince

from lib.list_pages import UrlFilter
from lib.wording import one_of
from memory.actors import Actor
from memory.models import Memory
from proposals.kinds import KINDS as PROPOSAL_KINDS
from proposals.kinds import kind_of
from proposals.kinds.base import ProposalKindSpec
from proposals.models import (
    Proposal,
    ProposalQuerySet,
    ProposalStatus,
    ProposalTarget,
    TargetRole,
)
from proposals.selectors import filter_proposals, visible_proposals

from .actions import approvals_required, lost_detail_names
from .models import Decision, ReviewClaim, Verdict

#: Counts per kind stop here ("1000+"): counting a 100,000-item queue exactly on every page
#: view would make the page as slow as the queue is long.
COUNT_CAP = 1000
#: The polled badge stops here ("99+").
NEW_CAP = 99
#: Most reviewers a row's "Assign" select lists.
MAX_REVIEWERS = 200

STATUS_CHOICES = [*ProposalStatus.values, "all"]
#: How each status reads in the filter and on its badge.
STATUS_LABELS = {**{s: s.replace("_", " ").capitalize() for s in STATUS_CHOICES}, "all": "All"}
SORTS = ("oldest", "newest")
KINDS = list(PROPOSAL_KINDS)
#: "Has lost details": any (empty), yes or no.
LOST_CHOICES = ("yes", "no")
#: Longest free-text filter value (q, submitter, entry) taken from the URL.
MAX_TEXT = 200
#: Parameters that order or page the queue without narrowing it.
ORDER_PARAMS = frozenset({"sort", "limit"})


# --- Filters -----------------------------------------------------------------------------------


@dataclass
class InboxFilter(UrlFilter):
    """The inbox's state, all of it in the URL (shareable, works without JavaScript)."""

    not_in_url = ("memory_id",)

    memory: str = ""
    memory_id: int | None = None
    kind: str = ""
    status: str = ProposalStatus.PENDING
    sort: str = "oldest"
    #: Words of the rationale or proposed text, or an affected entry id.
    q: str = ""
    #: An actor id or label, or "me".
    submitter: str = ""
    #: An affected entry id.
    entry: str = ""
    #: "yes", "no" or "" (either).
    lost: str = ""
    #: "me": only proposals the viewer holds a live claim on.
    claimed: str = ""
    #: "me": only proposals assigned to the viewer.
    assigned: str = ""
    #: The page size asked for ("" = the default); kept by "Next page".
    limit: str = ""

    @property
    def descending(self) -> bool:
        return self.sort == "newest"

    @property
    def filter_count(self) -> int:
        """How many filters narrow the queue (any status but the default "pending" counts; the
        order and the page size do not)."""
        return len(self.params().keys() - ORDER_PARAMS)

    def cleared_query(self) -> str:
        """The query string of the same order and page size with every filter cleared."""
        return self.query(**dict.fromkeys(self.params().keys() - ORDER_PARAMS, ""))

    def selector_filters(self) -> dict[str, Any]:
        """The filters :func:`proposals.selectors.filter_proposals` applies."""
        return {
            "q": self.q,
            "submitter": self.submitter,
            "entry": self.entry,
            "has_lost_details": {"yes": True, "no": False}.get(self.lost),
            "assigned": self.assigned,
        }

    def query(self, **override: Any) -> str:
        encoded = self.query_string(**override)
        return f"?{encoded}" if encoded else ""


def parse_filter(params: Mapping[str, str], memories: Sequence[Memory]) -> InboxFilter:
    """Filters from the query string. Unknown values are reported and fall back to defaults."""
    f = InboxFilter()
    errors: dict[str, list[str]] = {}
    slug = (params.get("memory") or "").strip()
    if slug:
        found = next((m for m in memories if m.slug == slug), None)
        if found is None:
            errors["memory"] = [f"No memory '{slug}' you can see."]
        else:
            f.memory, f.memory_id = found.slug, found.pk
    f.kind = _choice(params, "kind", KINDS, f.kind, errors, one_of(KINDS))
    f.status = _choice(params, "status", STATUS_CHOICES, f.status, errors, one_of(STATUS_CHOICES))
    f.sort = _choice(params, "sort", SORTS, f.sort, errors, "oldest or newest.")
    for name in ("q", "submitter", "entry"):
        value = (params.get(name) or "").strip()
        if len(value) > MAX_TEXT:
            errors[name] = [f"At most {MAX_TEXT} characters."]
        else:
            setattr(f, name, value)
    f.lost = _choice(params, "lost", LOST_CHOICES, "", errors, "yes or no.")
    f.claimed = _choice(params, "claimed", ("me",), "", errors, "Only 'me'.")
    f.assigned = _choice(params, "assigned", ("me",), "", errors, "Only 'me'.")
    limit = (params.get("limit") or "").strip()
    if limit:
        if limit.isdigit() and 1 <= int(limit) <= int(settings.STEWARD_MAX_PAGE_SIZE):
            f.limit = str(int(limit))
        else:
            errors["limit"] = [f"Between 1 and {settings.STEWARD_MAX_PAGE_SIZE}."]
    f.errors = errors
    return f


def _choice(
    params: Mapping[str, str],
    name: str,
    allowed: Sequence[str],
    default: str,
    errors: dict[str, list[str]],
    message: str,
) -> str:
    """``params[name]`` when it is one of ``allowed``; else ``default`` (an error if given)."""
    value = (params.get(name) or "").strip()
    if not value:
        return default
    if value in allowed:
        return value
    errors[name] = [message]
    return default


# --- Queries -----------------------------------------------------------------------------------


def filtered(actor: Actor, f: InboxFilter, *, with_kind: bool = True) -> QuerySet[Proposal]:
    qs = visible_proposals(actor)
    if f.status != "all":
        qs = qs.filter(status=f.status)
    if f.memory_id is not None:
        qs = qs.filter(memory_id=f.memory_id)
    if with_kind and f.kind:
        qs = qs.filter(kind=f.kind)
    qs = filter_proposals(qs, actor, f.selector_filters())
    if f.claimed == "me":
        qs = claimed_by(qs, actor)
    return qs


def claimed_by(qs: ProposalQuerySet, actor: Actor) -> ProposalQuerySet:
    """Proposals ``actor`` holds a live claim on ("Claimed by me": one join, no query)."""
    return qs.filter(claim__actor_id=actor.id, claim__expires_at__gt=timezone.now())


def page_queryset(actor: Actor, f: InboxFilter) -> QuerySet[Proposal]:
    """What one inbox row needs, in 2 queries for a whole page: the proposals (with memory,
    claim and approval count) and their targets (with entry, version and head)."""
    approvals = (
        Decision.objects.filter(
            proposal=OuterRef("pk"),
            verdict=Verdict.APPROVE,
            proposal_revision=OuterRef("revision"),
        )
        .order_by()
        .values("proposal")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        filtered(actor, f)
        .select_related("memory", "claim", "operation", "assigned_to")
        .annotate(approvals=Coalesce(Subquery(approvals), Value(0), output_field=IntegerField()))
        .prefetch_related(targets_with_heads())
    )


def targets_with_heads() -> Prefetch:
    """A proposal's targets with entry, version and the entry's head now (one query)."""
    return Prefetch(
        "targets",
        queryset=ProposalTarget.objects.select_related("entry", "version", "entry__head").order_by(
            "position"
        ),
    )


@dataclass(frozen=True)
class CappedCount:
    value: int
    capped: bool

    def __str__(self) -> str:
        return f"{COUNT_CAP}+" if self.capped else str(self.value)


def kind_counts(actor: Actor, f: InboxFilter) -> dict[str, CappedCount]:
    """How many proposals of each kind match the other filters, each capped at
    :data:`COUNT_CAP` — one statement whatever the queue size."""
    base = filtered(actor, f, with_kind=False).order_by()
    parts: list[str] = []
    params: list[Any] = []
    for i, kind in enumerate(KINDS):
        inner = base.filter(kind=kind).values("pk")[: COUNT_CAP + 1]
        sql, p = inner.query.get_compiler(using=inner.db).as_sql()
        parts.append(f"(SELECT COUNT(*) FROM ({sql}) capped_{i})")
        params.extend(p)
    with connections[base.db].cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        row = cursor.fetchone()
    return {
        kind: CappedCount(min(int(n), COUNT_CAP), int(n) > COUNT_CAP)
        for kind, n in zip(KINDS, row or [0] * len(KINDS), strict=True)
    }


def kind_links(actor: Actor, f: InboxFilter) -> list[tuple[str, str, Any, bool]]:
    """The inbox's kind tabs: label, query, capped count under the other filters, current
    (one query)."""
    counts = kind_counts(actor, f)
    return [("All", f.query(kind=""), total(counts), not f.kind)] + [
        (k.capitalize(), f.query(kind=k), counts[k], f.kind == k) for k in KINDS
    ]


def total(counts: Mapping[str, CappedCount]) -> CappedCount:
    n = sum(c.value for c in counts.values())
    return CappedCount(n, any(c.capped for c in counts.values()))


def watermark() -> int:
    """The newest proposal id right now: the badge counts what arrives after it."""
    return Proposal.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def new_since(actor: Actor, f: InboxFilter, after: int) -> int:
    """Pending proposals matching the filters that arrived after ``after`` (capped)."""
    qs = filtered(actor, replace(f, status=ProposalStatus.PENDING)).filter(pk__gt=after)
    return qs.order_by().values("pk")[: NEW_CAP + 1].count()


# --- Queue navigation: previous / next and "Approve & next" ----------------------------------


def nav_filter(actor: Actor, params: Mapping[str, str]) -> InboxFilter:
    """The inbox filter a proposal page was opened from (its query parameters), loading the
    one Memory it names, if any. Invalid values fall back to the defaults."""
    slug = (params.get("memory") or "").strip()
    memories = (
        list(Memory.objects.visible_to(actor).filter(slug=slug).only("pk", "slug")) if slug else []
    )
    return parse_filter(params, memories)


def neighbours(actor: Actor, f: InboxFilter, pk: int) -> tuple[int | None, int | None]:
    """The proposals before and after ``pk`` in the inbox order of ``f``: two keyset reads
    (one indexed row each), whatever the queue's length and whether ``pk`` itself matches."""
    qs = filtered(actor, f).order_by()
    lower = qs.filter(pk__lt=pk).order_by("-pk").values_list("pk", flat=True).first()
    higher = qs.filter(pk__gt=pk).order_by("pk").values_list("pk", flat=True).first()
    return (higher, lower) if f.descending else (lower, higher)


def open_neighbours(actor: Actor, f: InboxFilter, pk: int) -> tuple[int | None, int | None]:
    """The pending proposals before and after ``pk`` in the inbox order of ``f`` ("Approve &
    next" opens the one after)."""
    return neighbours(actor, replace(f, status=ProposalStatus.PENDING), pk)


def ago(when: datetime, now: datetime) -> str:
    """How long ago, in words: "just now" under a minute (never "0 minutes ago")."""
    if (now - when).total_seconds() < 60:
        return "just now"
    return f"{timesince(when, now)} ago"


# --- Rows --------------------------------------------------------------------------------------


@dataclass
class Snippet:
    entry_id: str
    version: int
    body: str
    role: str


class ProposalFlags:
    """What the inbox row and the proposal page both say of their proposal
    (``self.proposal``): whether it is pending, whether it is still open."""

    proposal: Proposal

    @property
    def is_pending(self) -> bool:
        return self.proposal.status == ProposalStatus.PENDING

    @property
    def is_open(self) -> bool:
        """Pending or waiting for an amendment: it may still be assigned."""
        return self.proposal.is_open

    @property
    def spec(self) -> ProposalKindSpec:
        """The proposal's kind: what the page and the row say of it."""
        return kind_of(self.proposal.kind)


@dataclass
class Row(ProposalFlags):
    """One proposal as the inbox shows it. Display strings are prepared here, once, so the
    template of a 50-row page stays cheap to render."""

    proposal: Proposal
    inputs: list[Snippet]
    result: str
    lost_details: list[str]
    moved: list[str]
    claim: ReviewClaim | None
    approvals: int
    required: int
    key: str = ""
    href: str = ""
    approve_href: str = ""
    reject_href: str = ""
    age: str = ""
    rationale_short: str = ""
    result_short: str = ""
    more_inputs: int = 0
    lost_title: str = ""
    #: Rules of the injection scan that matched (admission and quarantine proposals).
    injection_rules: list[str] = field(default_factory=list)
    #: The assigned reviewer's username ("" = nobody) and whether that is the viewer.
    assignee: str = ""
    assigned_to_me: bool = False
    assign_href: str = ""
    #: Who the row's "Assign" select offers (shared by every row of a page).
    reviewers: Sequence[str] = ()
    status_label: str = ""
    #: The viewer submitted or edited it (DESIGN.md §9 "self"): they cannot decide it, so the
    #: row offers no Approve / Reject and says why.
    is_self: bool = False
    is_submitter: bool = False

    @property
    def pk(self) -> int:
        return int(self.proposal.pk)

    @property
    def stale(self) -> bool:
        return self.proposal.status == ProposalStatus.STALE or bool(self.moved)


def result_text(proposal: Proposal, targets: Sequence[ProposalTarget]) -> str:
    """What the proposal would write, in words (the merged / successor / promoted body; an
    existing successor's own body)."""
    result = kind_of(proposal.kind).result_text(proposal)
    if not result:
        successor = next((t for t in targets if t.role == TargetRole.SUCCESSOR), None)
        if successor is not None:
            result = successor.version.body
    return result


def moved_entries(targets: Iterable[ProposalTarget]) -> list[str]:
    """Affected entries whose head is no longer the recorded pre-state."""
    out = []
    for t in targets:
        head = getattr(t.entry, "head", None)
        if head is not None and (head.version_id != t.version_id or head.state != t.state):
            out.append(t.entry.uid)
    return out


def injection_rules(proposal: Proposal, targets: Sequence[ProposalTarget]) -> list[str]:
    """The injection-scan rules that matched on the affected entries, as the kind stored them
    at submission (``scan_of``); [] for kinds without a scan."""
    spec = kind_of(proposal.kind)
    return sorted(
        {
            str(rule)
            for t in targets
            for rule in spec.scan_of(proposal, t.entry.uid).get("rules") or []
        }
    )


#: Inputs shown per row (the rest are counted).
ROW_INPUTS = 3


def reviewer_names() -> list[str]:
    """Usernames a proposal may be assigned to: active users in the "reviewer" group or staff
    (the rule of ``proposals.actions.discussion.assign_proposal``), in one query."""
    users = get_user_model().objects.filter(is_active=True)
    return list(
        users.filter(Q(is_staff=True) | Q(groups__name="reviewer"))
        .order_by("username")
        .values_list("username", flat=True)
        .distinct()[:MAX_REVIEWERS]
    )


def row_for(
    proposal: Proposal,
    *,
    now: datetime,
    actor: Actor | None = None,
    reviewers: Sequence[str] = (),
    query: str = "",
) -> Row:
    """One inbox row; ``query`` (the inbox's filters) is kept on the link to the proposal page,
    so its previous / next links follow the same queue."""
    targets = list(proposal.targets.all())
    claim = getattr(proposal, "claim", None)
    roles = kind_of(proposal.kind).input_roles
    inputs = [
        Snippet(t.entry.uid, t.version_number, Truncator(t.version.body).chars(120), t.role)
        for t in targets
        if t.role in roles
    ]
    result = result_text(proposal, targets)
    lost = lost_detail_names(proposal)
    pk = proposal.pk
    assignee = proposal.assigned_to if proposal.assigned_to_id else None
    return Row(
        proposal=proposal,
        inputs=inputs[:ROW_INPUTS],
        result=result,
        lost_details=lost,
        moved=moved_entries(targets) if proposal.status == ProposalStatus.PENDING else [],
        claim=claim if claim is not None and claim.is_live(now) else None,
        approvals=int(getattr(proposal, "approvals", 0) or 0),
        required=approvals_required(proposal.memory, proposal.kind),
        key=str(pk),
        href=reverse("review-proposal", args=[pk]) + query,
        approve_href=reverse("review-proposal-approve", args=[pk]),
        reject_href=reverse("review-proposal-reject", args=[pk]),
        age=ago(proposal.created_at, now),
        rationale_short=Truncator(proposal.rationale).chars(220),
        result_short=Truncator(result).chars(170),
        more_inputs=max(len(inputs) - ROW_INPUTS, 0),
        lost_title=", ".join(lost),
        injection_rules=injection_rules(proposal, targets),
        assignee=assignee.get_username() if assignee is not None else "",
        assigned_to_me=bool(
            assignee is not None and actor is not None and actor.user_pk == assignee.pk
        ),
        assign_href=reverse("review-proposal-assign", args=[pk]),
        reviewers=reviewers,
        status_label=STATUS_LABELS.get(proposal.status, proposal.status),
        is_self=actor is not None and proposal.is_self(actor),
        is_submitter=actor is not None and proposal.is_submitter(actor),
    )


def fresh_row(actor: Actor, pk: int, *, now: datetime) -> Row | None:
    """One row re-read from the database (after a decision or a conflict)."""
    rows = fresh_rows(actor, [pk], now=now)
    return rows[0] if rows else None


def fresh_rows(actor: Actor, pks: Sequence[int], *, now: datetime) -> list[Row]:
    """Rows re-read from the database, in the order of ``pks`` (after a bulk decision): the
    same 2 queries for the page's proposals plus 1 for the reviewers, whatever their number."""
    found = {p.pk: p for p in page_queryset(actor, InboxFilter(status="all")).filter(pk__in=pks)}
    if not found:
        return []
    reviewers = reviewer_names()
    return [
        row_for(found[pk], now=now, actor=actor, reviewers=reviewers) for pk in pks if pk in found
    ]
