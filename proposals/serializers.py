"""Shapes of proposal requests (strict: unknown fields are refused) and the representation.

Each kind's schema lives in its module (``proposals.kinds``); shared pieces in ``proposals.inputs``.

:func:`parse_submission` is the one shape check of a submission: the API, the maintenance passes,
the demo and scripts parse here and hand the typed :class:`~proposals.kinds.Submission` to
``proposals.actions.submit_proposal``. Domain
rules (entries, heads, bodies, sessions) live in ``proposals.actions`` and ``proposals.verify``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import connection
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from lib.api import StrictSerializer, validated
from lib.errors import ValidationFailed
from lib.wording import one_of

from .inputs import ProposalCommonIn
from .kinds import KINDS, Submission, request_hash
from .models import (
    Proposal,
    ProposalAmendment,
    ProposalComment,
    ProposalKind,
    ProposalStatus,
    ProposalTarget,
    RejectionReason,
)

KIND_SERIALIZERS: dict[str, type[ProposalCommonIn]] = {
    name: spec.serializer for name, spec in KINDS.items()
}

ProposalSubmitIn = PolymorphicProxySerializer(
    component_name="ProposalSubmit",
    serializers={str(k): v for k, v in KIND_SERIALIZERS.items()},
    resource_type_field_name="kind",
)


def parse_submission(data: Any, kinds: Sequence[str] | None = None) -> Submission:
    """Check the shape of a submission for its ``kind``; 400 ``invalid`` with field details
    (unknown fields, fields of another kind, wrong types) otherwise. An unknown kind is answered
    with ``kinds``, the kinds the caller may file (``permissions.kinds_filed_by``; every kind
    when not given). The request hash is taken over the request as sent (an
    ``Idempotency-Key`` names that exact request)."""
    if not isinstance(data, dict):
        raise ValidationFailed(details={"non_field_errors": ["Expected a JSON object."]})
    kind = data.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise ValidationFailed(details={"kind": ["Not a valid string."]})
    if kind not in ProposalKind.values:
        offered = list(ProposalKind.values) if kinds is None else list(kinds)
        raise ValidationFailed(details={"kind": [one_of(offered)]})
    fields = validated(KIND_SERIALIZERS[kind], data)
    return Submission(str(kind), fields, request_hash(data))


class WithdrawIn(StrictSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class ProposalListQuery(StrictSerializer):
    status = serializers.ChoiceField(choices=ProposalStatus.choices, required=False)
    kind = serializers.ChoiceField(choices=ProposalKind.choices, required=False)
    memory = serializers.CharField(required=False, max_length=64)
    submitted_by = serializers.CharField(required=False, max_length=200)
    submitter = serializers.CharField(
        required=False, max_length=200, help_text="Submitter's actor id or label (or 'me')"
    )
    q = serializers.CharField(required=False, max_length=200)
    entry = serializers.CharField(required=False, max_length=128)
    has_lost_details = serializers.BooleanField(required=False)
    assigned = serializers.ChoiceField(choices=["me"], required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


class AnchorIn(StrictSerializer):
    """A passage of the proposed text: ``quote`` (found in the text), or ``start`` / ``end``
    character offsets (with ``quote`` too, it must be the text between them)."""

    quote = serializers.CharField(required=False, trim_whitespace=False, max_length=2000)
    start = serializers.IntegerField(required=False, min_value=0)
    end = serializers.IntegerField(required=False, min_value=1)


class CommentIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    anchor = AnchorIn(required=False)
    resolves = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The id of a comment of this proposal that this reply resolves.",
    )


class ResolveIn(StrictSerializer):
    """Resolving a comment takes no fields (say why in a comment: ``resolves`` there)."""


class AmendIn(StrictSerializer):
    """The fields an amendment may replace (which ones apply depends on the kind)."""

    body = serializers.CharField(required=False, trim_whitespace=False)
    rationale = serializers.CharField(required=False, trim_whitespace=False)
    evidence = serializers.ListField(child=serializers.DictField(), required=False)
    successor = serializers.DictField(required=False)
    reason = serializers.CharField(required=False, trim_whitespace=False)
    comment = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class RebaseIn(StrictSerializer):
    comment = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class AssignIn(StrictSerializer):
    reviewer = serializers.CharField(allow_null=True, max_length=150)


class BulkIn(StrictSerializer):
    action = serializers.ChoiceField(choices=["approve", "reject"])
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), allow_empty=False, max_length=100
    )
    comment = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    reason = serializers.ChoiceField(choices=RejectionReason.choices, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["action"] == "reject":
            errors = {}
            if not attrs.get("reason"):
                errors["reason"] = ["A rejection needs a reason code."]
            if not (attrs.get("comment") or "").strip():
                errors["comment"] = ["A rejection needs a comment."]
            if errors:
                raise serializers.ValidationError(errors)
        return attrs


# --- Output -----------------------------------------------------------------------------------


def target_out(t: ProposalTarget) -> dict[str, Any]:
    return {
        "role": t.role,
        "entry_id": t.entry.uid,
        "kind": t.entry.kind,
        "sensitivity": t.entry.sensitivity,
        "session_id": t.entry.session_id or None,
        "pre_state": {
            "version": t.version_number,
            "state": t.state,
            "content_hash": t.content_hash,
        },
        "body": t.version.body,
    }


def proposal_out(p: Proposal) -> dict[str, Any]:
    """The representation of a proposal as read (``targets``, the discussion, amendments and
    the operation loaded with it: see ``with_detail``)."""
    return _proposal_body(
        p,
        targets=p.targets.all(),
        evidence=p.evidence,
        payload=p.payload,
        verification=p.verification or {},
        operation=applied_operation(p),
        comments=thread_out(p),
        amendments=[amendment_out(a) for a in p.amendments.all()],
    )


def submitted_out(p: Proposal, targets: Sequence[ProposalTarget]) -> dict[str, Any]:
    """The representation of a proposal intake has just written, from the rows it wrote (the
    proposal and its ``targets``, with their entries and versions): no discussion, amendment
    or operation yet, and nothing read back. It equals :func:`proposal_out` of the same proposal
    read again, byte for byte: its JSON columns are given as the database returns them
    (:func:`as_read_back`)."""
    return _proposal_body(
        p,
        targets=targets,
        evidence=as_read_back(p.evidence),
        payload=as_read_back(p.payload),
        verification=as_read_back(p.verification or {}),
        operation=None,
        comments=[],
        amendments=[],
    )


def as_read_back(value: object) -> object:
    """A JSON column's value as the database returns it once written: PostgreSQL's ``jsonb``
    keeps an object's keys ordered by their length in bytes, then bytewise (not as written);
    SQLite keeps the text as written."""
    if connection.vendor != "postgresql":
        return value
    return _jsonb_order(value)


def _jsonb_order(value: object) -> object:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _jsonb_order(value[k]) for k in keys}
    if isinstance(value, list | tuple):
        return [_jsonb_order(v) for v in value]
    return value


def _proposal_body(
    p: Proposal,
    *,
    targets: Iterable[ProposalTarget],
    evidence: object,
    payload: object,
    verification: object,
    operation: dict[str, Any] | None,
    comments: list[dict[str, Any]],
    amendments: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "id": p.pk,
        "memory": p.memory.slug,
        "kind": p.kind,
        "status": p.status,
        "status_reason": p.status_reason or None,
        "rationale": p.rationale,
        "evidence": evidence,
        "policy_version": p.policy_version,
        "payload": payload,
        "targets": [target_out(t) for t in targets],
        "verification": verification,
        "submitted_by": {
            "type": p.submitted_by_type,
            "id": p.submitted_by,
            "label": p.submitted_by_label,
            "on_behalf_of": p.submitted_on_behalf_of or None,
        },
        "created_at": p.created_at,
        "status_changed_at": p.status_changed_at,
        "stale_revision": p.stale_revision.number if p.stale_revision else None,
        "decision": {
            "decided_by": p.decided_by or None,
            "decided_by_label": p.decided_by_label or None,
            "decided_at": p.decided_at,
            "rejection_reason": p.rejection_reason or None,
            "comment": p.decision_comment or None,
        },
        "revision": p.revision,
        "operation": operation,
        "assigned_to": p.assigned_to.get_username() if p.assigned_to else None,
        "comments": comments,
        "amendments": amendments,
    }


def applied_operation(p: Proposal) -> dict[str, Any] | None:
    """The operation an approval performed (review's record, ``with_detail`` joins it) and the
    revision that undid it, if any; None while the proposal is not approved."""
    try:
        operation = p.operation  # type: ignore[attr-defined]
    except ObjectDoesNotExist:
        return None
    try:
        undone: int | None = operation.compensation.revision_number
    except ObjectDoesNotExist:
        undone = None
    return {
        "id": operation.pk,
        "revision": operation.revision_number,
        "compensation_revision": undone,
    }


def comment_out(c: ProposalComment) -> dict[str, Any]:
    """One comment of the thread; ``resolved_by`` / ``resolved_at`` are null while it is open
    (``resolution`` is read with it: ``with_detail``)."""
    resolution = c.resolution_or_none()
    return {
        "id": c.pk,
        "type": "comment",
        "author": c.author_label,
        "author_id": c.author_id,
        "verdict": None,
        "reason": None,
        "body": c.body,
        "revision": c.proposal_revision,
        "anchor": c.anchor or None,
        "created_at": c.created_at,
        "resolved_by": resolution.author_label if resolution else None,
        "resolved_at": resolution.created_at if resolution else None,
    }


def thread_out(p: Proposal) -> list[dict[str, Any]]:
    """The discussion, oldest first: comments and the reviewers' verdicts (approve, reject,
    request changes) with their comments (``decisions`` and ``comments`` prefetched)."""
    verdicts = [
        {
            "id": d.pk,
            "type": "decision",
            "author": d.actor_label,
            "author_id": d.actor_id,
            "verdict": d.verdict,
            "reason": d.reason or None,
            "body": d.comment,
            "revision": d.proposal_revision,
            "created_at": d.decided_at,
        }
        for d in p.decisions.all()
    ]
    items = [*verdicts, *(comment_out(c) for c in p.comments.all())]
    return sorted(items, key=lambda i: (i["created_at"], i["type"], i["id"]))


def amendment_out(a: ProposalAmendment) -> dict[str, Any]:
    """One amendment: who, when, why, and what changed (fields before → after)."""
    changed = {
        k: {"before": a.before.get(k), "after": a.after.get(k)}
        for k in ("rationale", "evidence", "payload")
        if a.before.get(k) != a.after.get(k)
    }
    return {
        "revision": a.number,
        "author": a.author_label,
        "author_id": a.author_id,
        "comment": a.comment or None,
        "changed": changed,
        "created_at": a.created_at,
    }
