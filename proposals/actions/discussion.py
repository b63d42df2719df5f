"""A proposal's discussion and its amendments (DESIGN.md §9): comments, amend, assign.

- :func:`add_comment` — reviewers and the submitter write to the proposal's thread (auditors
  and other agents read it). Append-only; nothing else changes.
- :func:`resolve_comment` — a comment's point is settled, as in a code review: its author or a
  reviewer marks it resolved. The resolution is a record of its own (:class:`CommentResolution`,
  one per comment, never undone); the comment is not updated. A reply may resolve a comment
  too (``add_comment(..., resolves=id)``: both are written in one transaction).
- :func:`amend_proposal` — the submitter, or a reviewer editing the proposed text, replaces
  the proposal's fields with a new *revision*: the same intake checks run again on the new
  fields (references, heads, secrets, lost details, similarity), the proposal is pending again,
  approvals given on earlier revisions no longer count, and an amending reviewer counts as
  "self" from then on. The entries a proposal affects never change by amendment.
- :func:`assign_proposal` — a reviewer assigns an open proposal to a named reviewer (or
  clears it). Advisory, like claims: the approval engine's locks are the real guard.

Lock order, as everywhere: the Memory row, then the proposal row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.actions import lock_memory
from memory.actors import Actor
from memory.admission import check_no_secrets, clean_text, memory_policy
from memory.models import ApiRole

from .. import hooks
from ..events import record_proposal_event
from ..exceptions import (
    AlreadyResolved,
    Forbidden,
    IllegalTransition,
    NoopRewrite,
    NotFound,
    ValidationFailed,
)
from ..kinds import kind_of
from ..models import (
    CommentResolution,
    Proposal,
    ProposalAmendment,
    ProposalComment,
    ProposalStatus,
)
from ..permissions import require_assigner
from .intake import Checked, check_submission, recheck_heads_locked

#: What an amendment replaces, besides the kind's own fields (``amendable_fields``).
COMMON_AMENDABLE = ("rationale", "evidence")
#: The proposal's fields an amendment rewrites (``verification`` is run again on the others),
#: recorded before and after on its :class:`ProposalAmendment`.
AMENDED_FIELDS = ("rationale", "evidence", "payload", "verification")


def may_comment(actor: Actor, proposal: Proposal) -> bool:
    """Reviewers and the submitter discuss a proposal; auditors and other agents read."""
    return actor.is_reviewer or (actor.role != ApiRole.AUDITOR and proposal.is_submitter(actor))


def may_resolve(actor: Actor, comment: ProposalComment) -> bool:
    """A comment is resolved by the person who wrote it (any of their keys or their browser
    session: ``Actor.identities``) or by a reviewer. The submitter answers a reviewer's comment
    (a reply, an amendment) but does not close it on the reviewer's behalf; auditors change
    nothing."""
    if actor.role == ApiRole.AUDITOR:
        return False
    author = {comment.author_id, comment.on_behalf_of} - {""}
    return actor.is_reviewer or bool(actor.identities() & author)


def may_amend(actor: Actor, proposal: Proposal) -> bool:
    """The submitter amends its proposal; a reviewer may edit the proposed text."""
    return actor.is_reviewer or (actor.role != ApiRole.AUDITOR and proposal.is_submitter(actor))


def refuse_if_closed(proposal: Proposal) -> None:
    """409 ``already_decided`` unless the proposal is open (pending or waiting for changes)."""
    if not proposal.is_open:
        raise IllegalTransition(
            f"The proposal is {proposal.status}; it can no longer be changed.",
            details={"proposal": proposal.pk, "status": proposal.status},
        )


def resolve_anchor(proposal: Proposal, anchor: Mapping[str, Any] | None) -> dict[str, Any]:
    """Where in the proposal's proposed text (as it is now) a comment's ``anchor`` points:
    ``{quote, start, end}``. ``start`` and ``end`` (character offsets) name the passage and
    ``quote``, when given too, must be its text; a ``quote`` alone is found in the text (its
    first occurrence). 400 ``invalid`` naming ``anchor`` when the kind has no proposed text or
    the passage is not in it. No anchor (None): ``{}``."""
    if anchor is None:
        return {}
    text = kind_of(proposal.kind).proposed_text(proposal.payload or {})
    if text is None:
        raise ValidationFailed(
            "This proposal has no proposed text to anchor a comment to.",
            details={"anchor": [f"A {proposal.kind} proposal has no proposed text."]},
        )
    quote = anchor.get("quote")
    start, end = anchor.get("start"), anchor.get("end")
    if start is None and end is None:
        if not quote:
            raise ValidationFailed(details={"anchor": ["Give a quote, or start and end."]})
        start = text.find(quote)
        if start < 0:
            raise ValidationFailed(
                "The quoted passage is not in the proposed text.",
                details={
                    "anchor.quote": [
                        f"Not in the proposed text of revision {proposal.revision}; quote it "
                        "exactly."
                    ]
                },
            )
        end = start + len(quote)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise ValidationFailed(
            details={"anchor": [f"start < end, within the text's {len(text)} characters."]}
        )
    if quote is not None and text[start:end] != quote:
        raise ValidationFailed(details={"anchor.quote": ["Is not the text between start and end."]})
    return {"quote": text[start:end], "start": start, "end": end}


@transaction.atomic(durable=True)
def add_comment(
    proposal: Proposal,
    *,
    actor: Actor,
    body: str,
    anchor: Mapping[str, Any] | None = None,
    resolves: int | None = None,
) -> ProposalComment:
    """One comment on ``proposal`` (visible to ``actor``: the caller resolved it), optionally
    anchored to a passage of its proposed text (:func:`resolve_anchor`) and, given
    ``resolves`` (a comment id), resolving that comment of the same thread as
    :func:`resolve_comment` does — the reply and the resolution are written together or not
    at all.

    403 ``forbidden`` for auditors and agents other than the submitter (and, with
    ``resolves``, for whoever may not resolve that comment); 400 ``invalid`` for an empty or
    over-long body or an anchor outside the proposed text; 404 ``not_found`` when ``resolves``
    names no comment of this proposal; 409 ``already_resolved``; 422 ``secret_detected``.
    Any status: a decided proposal can still be discussed. No lock: a comment changes no state.
    """
    if not may_comment(actor, proposal):
        raise Forbidden("Only reviewers and the submitter may comment on a proposal.")
    with memory_policy(proposal.memory.policy):
        text = clean_text(body, field="body", required=True)
    check_no_secrets("body", text)
    resolved = _resolvable(proposal, resolves, actor=actor) if resolves is not None else None
    comment = ProposalComment.objects.create(
        proposal=proposal,
        memory_id=proposal.memory_id,
        proposal_revision=proposal.revision,
        **actor.columns("author"),
        body=text,
        anchor=resolve_anchor(proposal, anchor),
        created_at=timezone.now(),
    )
    record_proposal_event(
        "proposal.commented",
        proposal,
        actor=actor,
        payload={"comment": comment.pk, "revision": proposal.revision},
    )
    if resolved is not None:
        _resolve(proposal, resolved, actor=actor)
    hooks.commented(proposal, comment, actor=actor)  # the people it @mentions are told
    return comment


def _resolvable(proposal: Proposal, comment_id: int, *, actor: Actor) -> ProposalComment:
    """Comment ``comment_id`` of ``proposal`` if ``actor`` may resolve it and it is open: 404
    ``not_found`` (no such comment in this thread), 403 ``forbidden``, 409
    ``already_resolved``."""
    comment = (
        ProposalComment.objects.select_related("resolution")
        .filter(proposal=proposal, pk=comment_id)
        .first()
    )
    if comment is None:
        raise NotFound(f"No comment {comment_id} on proposal {proposal.pk}.")
    if not may_resolve(actor, comment):
        raise Forbidden("Only the comment's author or a reviewer may resolve it.")
    _refuse_if_resolved(comment)
    return comment


def _refuse_if_resolved(comment: ProposalComment) -> None:
    done = comment.resolution_or_none()
    if done is not None:
        raise AlreadyResolved(
            f"Comment {comment.pk} was resolved by {done.author_label}.",
            details={
                "comment": comment.pk,
                "resolved_by": done.author_label,
                "resolved_at": done.created_at.isoformat(),
            },
        )


def _resolve(proposal: Proposal, comment: ProposalComment, *, actor: Actor) -> CommentResolution:
    """Write the resolution of ``comment`` and its audit event. Two resolvers at once: the
    unique comment column lets one in; the other gets ``already_resolved`` (its savepoint is
    rolled back, the caller's transaction goes on only to raise)."""
    try:
        with transaction.atomic():
            resolution = CommentResolution.objects.create(
                comment=comment,
                memory_id=proposal.memory_id,
                proposal_revision=proposal.revision,
                **actor.columns("author"),
                created_at=timezone.now(),
            )
    except IntegrityError:
        _refuse_if_resolved(ProposalComment.objects.select_related("resolution").get(pk=comment.pk))
        raise
    record_proposal_event(
        "proposal.comment_resolved",
        proposal,
        actor=actor,
        payload={"comment": comment.pk, "revision": proposal.revision},
    )
    comment.resolution = resolution
    return resolution


@transaction.atomic(durable=True)
def resolve_comment(proposal: Proposal, *, actor: Actor, comment_id: int) -> ProposalComment:
    """Mark comment ``comment_id`` of ``proposal`` (visible to ``actor``: the caller checked)
    resolved: one :class:`CommentResolution` naming who resolved it and on which proposal
    revision, and a ``proposal.comment_resolved`` audit event. Nothing else changes.

    403 ``forbidden`` unless the comment's author or a reviewer (:func:`may_resolve`); 404
    ``not_found`` when the proposal has no such comment; 409 ``already_resolved`` when it was
    resolved before (also when another resolver committed first). Any status, like comments.
    No lock: the one-to-one column keeps it to one resolution. Returns the comment with its
    resolution."""
    comment = _resolvable(proposal, comment_id, actor=actor)
    _resolve(proposal, comment, actor=actor)
    return comment


def _snapshot(p: Proposal) -> dict[str, Any]:
    return {name: getattr(p, name) for name in AMENDED_FIELDS}


def _evidence_inputs(stored: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Stored citations as the submission schema takes them (snapshots are re-resolved)."""
    return [
        {k: item[k] for k in ("source", "ref", "observed_at", "quote") if item.get(k)}
        for item in stored or []
    ]


def _fields_after(proposal: Proposal, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The submission the amended proposal would have been: its fields with ``changes``."""
    spec = kind_of(proposal.kind)
    allowed = (*COMMON_AMENDABLE, *spec.amendable_fields)
    refused = {
        name: [f"A {proposal.kind} proposal cannot amend '{name}'."]
        for name in changes
        if name not in allowed
    }
    if refused:
        raise ValidationFailed("Those fields cannot be amended.", details=refused)
    fields = {
        "memory": proposal.memory.slug,
        "kind": proposal.kind,
        "rationale": proposal.rationale,
        "evidence": _evidence_inputs(proposal.evidence),
        **spec.resubmission(proposal),
    }
    return spec.amended(fields, changes)


def amend_proposal(
    proposal: Proposal, *, actor: Actor, changes: Mapping[str, Any], comment: str = ""
) -> Proposal:
    """Replace ``proposal``'s fields with ``changes`` as its next revision.

    Preconditions: ``changes`` passed ``AmendIn`` (known field names, JSON types). 403
    ``forbidden`` unless the submitter or a reviewer; 400 ``invalid`` (a field the kind cannot
    amend, or the new fields fail the kind's schema, or the amendment names other entries);
    409 ``already_decided`` when the proposal is no longer open, ``stale_proposal`` when an
    affected entry moved; 422 ``noop_rewrite`` when nothing changes, and every intake refusal
    (secrets, lost details are listed — not refused — as at submission).
    Effects: the proposal's rationale / evidence / payload / verification, ``revision`` + 1,
    status ``pending``; an amending reviewer joins ``editors``; one :class:`ProposalAmendment`
    with the fields before and after; a ``proposal.amended`` audit event.
    Locks: the Memory row, then the proposal row (after every check that needs no lock).
    """
    from ..serializers import parse_submission

    if not may_amend(actor, proposal):
        raise Forbidden("Only the submitter or a reviewer may amend a proposal.")
    if kind_of(proposal.kind).server_filed and not actor.is_reviewer:
        raise Forbidden(f"'{proposal.kind}' proposals are amended by reviewers only.")
    refuse_if_closed(proposal)  # before the checks (a decided proposal's heads moved on)
    if not changes:
        raise ValidationFailed(
            "Say what to amend.",
            details={"non_field_errors": ["Give at least one field to amend."]},
        )
    with memory_policy(proposal.memory.policy):
        note = clean_text(comment, field="comment")
    submission = parse_submission(_fields_after(proposal, changes))
    checked = check_submission(actor, proposal.memory, proposal.kind, dict(submission.fields))
    refs = sorted((r.ref.role, r.ref.entry_id) for r in checked.resolved)
    with transaction.atomic(durable=True):
        lock_memory(proposal.memory_id)
        locked = Proposal.objects.select_for_update().select_related("memory").get(pk=proposal.pk)
        refuse_if_closed(locked)
        current = sorted((t.role, t.entry.uid) for t in locked.targets.select_related("entry"))
        if refs != current:
            raise ValidationFailed(
                "An amendment cannot change which entries the proposal affects.",
                details={"entries": ["Propose again for other entries."]},
            )
        recheck_heads_locked(locked.kind, checked.resolved)
        return _apply_amendment(locked, checked, actor=actor, note=note)


def _apply_amendment(proposal: Proposal, checked: Checked, *, actor: Actor, note: str) -> Proposal:
    from ..evidence import evidence_json

    before = _snapshot(proposal)
    after = {
        "rationale": checked.draft.rationale,
        "evidence": evidence_json(checked.draft.evidence),
        "payload": checked.payload,
        "verification": checked.verification,
    }
    if {k: after[k] for k in ("rationale", "evidence", "payload")} == {
        k: before[k] for k in ("rationale", "evidence", "payload")
    }:
        raise NoopRewrite("The amendment changes nothing.", details={"proposal": proposal.pk})
    fields = [*AMENDED_FIELDS, "revision"]
    if proposal.status != ProposalStatus.PENDING:
        fields += proposal.transition_to(ProposalStatus.PENDING, reason="amended")
    for name in AMENDED_FIELDS:
        setattr(proposal, name, after[name])
    proposal.revision += 1
    if not proposal.is_submitter(actor):
        proposal.editors = sorted(set(proposal.editors or []) | actor.identities())
        fields.append("editors")
    proposal.save(update_fields=fields)
    ProposalAmendment.objects.create(
        proposal=proposal,
        memory_id=proposal.memory_id,
        number=proposal.revision,
        **actor.columns("author"),
        comment=note,
        before=before,
        after=after,
    )
    record_proposal_event(
        "proposal.amended",
        proposal,
        actor=actor,
        entry_ids=[t.entry.uid for t in proposal.targets.select_related("entry")],
        payload={"revision": proposal.revision, "comment": note},
    )
    hooks.amended(proposal, actor=actor)  # the other reviewers are told
    return proposal


@transaction.atomic(durable=True)
def assign_proposal(proposal: Proposal, *, actor: Actor, reviewer: str | None) -> Proposal:
    """Assign an open proposal to the reviewer named ``reviewer`` (a username), or clear the
    assignment with ``None``. 403 unless a reviewer; 400 ``invalid`` when the user does not
    exist or may not review; 409 ``already_decided`` once the proposal is closed.
    Locks: the proposal row."""
    require_assigner(actor)
    user = None
    if reviewer:
        user = get_user_model().objects.filter(username=reviewer, is_active=True).first()
        if user is None or not (user.is_staff or user.groups.filter(name="reviewer").exists()):
            raise ValidationFailed(
                "Assign a proposal to a reviewer.",
                details={"reviewer": [f"'{reviewer}' is not a reviewer."]},
            )
    locked = Proposal.objects.select_for_update().select_related("memory").get(pk=proposal.pk)
    refuse_if_closed(locked)
    locked.assigned_to = user
    locked.assigned_by_label = actor.label if user else ""
    locked.assigned_at = timezone.now() if user else None
    locked.save(update_fields=["assigned_to", "assigned_by_label", "assigned_at"])
    record_proposal_event(
        "proposal.assigned",
        locked,
        actor=actor,
        payload={"assigned_to": user.get_username() if user else None},
    )
    return locked
