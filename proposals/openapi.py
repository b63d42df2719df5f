"""The response bodies of the proposal API, for the OpenAPI document (``memory.api.openapi``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers as s

from memory.api.openapi import ActorOut, Null, cursor_page, ok


class PreState(s.Serializer):
    version = s.IntegerField()
    state = s.CharField()
    content_hash = s.CharField()


class TargetOut(s.Serializer):
    role = s.CharField()
    entry_id = s.CharField(**Null)
    kind = s.CharField()
    sensitivity = s.CharField()
    session_id = s.CharField(**Null)
    pre_state = PreState()
    body = s.CharField(allow_blank=True)


class DecisionOut(s.Serializer):
    decided_by = s.CharField(**Null)
    decided_by_label = s.CharField(**Null)
    decided_at = s.DateTimeField(**Null)
    rejection_reason = s.CharField(**Null)
    comment = s.CharField(**Null)


class AppliedOperationOut(s.Serializer):
    id = s.IntegerField()
    revision = s.IntegerField(help_text="The Memory revision the approval wrote.")
    compensation_revision = s.IntegerField(
        **Null, help_text="The revision that undid it, once compensated."
    )


class ProposalOut(s.Serializer):
    id = s.IntegerField()
    memory = s.CharField()
    kind = s.CharField()
    status = s.CharField()
    status_reason = s.CharField(**Null)
    rationale = s.CharField(allow_blank=True)
    evidence = s.JSONField()
    policy_version = s.CharField(**Null)
    payload = s.JSONField()
    targets = TargetOut(many=True)
    verification = s.JSONField(help_text="{similarity?, lost_details: [...], checks: [...]}")
    submitted_by = ActorOut()
    created_at = s.DateTimeField()
    status_changed_at = s.DateTimeField(**Null)
    stale_revision = s.IntegerField(**Null)
    decision = DecisionOut()
    revision = s.IntegerField(help_text="The proposal's own revision: 1, then one per amendment.")
    operation = AppliedOperationOut(
        **Null, help_text="Once approved: the operation the approval performed (null before)."
    )
    assigned_to = s.CharField(**Null)
    comments = s.ListField(child=s.JSONField())
    amendments = s.ListField(child=s.JSONField())


ProposalPage = cursor_page("ProposalPage", ProposalOut)


class AnchorOut(s.Serializer):
    quote = s.CharField()
    start = s.IntegerField()
    end = s.IntegerField()


class CommentOut(s.Serializer):
    id = s.IntegerField()
    type = s.ChoiceField(choices=["comment"])
    author = s.CharField()
    author_id = s.CharField()
    verdict = s.CharField(**Null)
    reason = s.CharField(**Null)
    body = s.CharField()
    revision = s.IntegerField(help_text="The proposal revision it was written on.")
    anchor = AnchorOut(**Null, help_text="The passage of the proposed text it is about.")
    created_at = s.DateTimeField()
    resolved_by = s.CharField(**Null, help_text="Who resolved it (null while it is open).")
    resolved_at = s.DateTimeField(**Null)


RESPONSES: dict[tuple[str, str], dict[int, Any]] = {
    ("ProposalListSubmitApi", "get"): {200: ProposalPage},
    ("ProposalListSubmitApi", "post"): {
        201: ok(ProposalOut, "A new pending proposal."),
        200: ok(ProposalOut, "The same Idempotency-Key and body again: the original proposal."),
    },
    ("ProposalDetailApi", "get"): {200: ProposalOut},
    ("ProposalWithdrawApi", "post"): {200: ProposalOut},
    ("ProposalCommentsApi", "post"): {201: CommentOut},
    ("ProposalCommentResolveApi", "post"): {200: ok(CommentOut, "The comment, now resolved.")},
}
