"""REST endpoints of the approval engine: approve, reject, read and compensate operations."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import ActorApiView, StrictSerializer, parse
from memory.actors import Actor
from proposals.api import proposal_schema
from proposals.models import RejectionReason
from proposals.serializers import BulkIn

from . import actions
from .permissions import require_reviewer
from .selectors import get_operation, operation_json


class ApproveIn(StrictSerializer):
    comment = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    acknowledge_lost_details = serializers.ListField(
        child=serializers.CharField(trim_whitespace=False), required=False
    )
    revision = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The proposal revision you read; 409 proposal_amended if it has changed since.",
    )


class RejectIn(StrictSerializer):
    reason = serializers.ChoiceField(choices=RejectionReason.choices)
    comment = serializers.CharField(trim_whitespace=False)


class RequestChangesIn(StrictSerializer):
    comment = serializers.CharField(trim_whitespace=False)


class CompensateIn(StrictSerializer):
    comment = serializers.CharField(trim_whitespace=False)


def decision_out(result: actions.DecisionResult) -> dict[str, Any]:
    return {
        "id": result.proposal.pk,
        "status": result.proposal.status,
        "operation": result.operation.pk if result.operation else None,
        "revision": result.revision.number if result.revision else None,
        "approvals": result.approvals,
        "approvals_required": result.required,
    }


def reviewer_input(
    view: ActorApiView, request: Request, serializer: type[serializers.Serializer]
) -> tuple[Actor, dict[str, Any]]:
    """The caller and its parsed body: a role that may never decide is refused 403 before the
    body is read (it is not told which fields such a request needs)."""
    actor = view.actor(request)
    require_reviewer(actor)
    return actor, parse(serializer, request)


class ProposalApproveApi(ActorApiView):
    @proposal_schema("Approve a proposal (reviewers)", request=ApproveIn)
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data = reviewer_input(self, request, ApproveIn)
        result = actions.approve_proposal(
            proposal_id,
            actor=actor,
            comment=data.get("comment", ""),
            acknowledge_lost_details=data.get("acknowledge_lost_details"),
            revision=data.get("revision"),
        )
        return Response(decision_out(result))


class ProposalRejectApi(ActorApiView):
    @proposal_schema("Reject a proposal (reviewers)", request=RejectIn)
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data = reviewer_input(self, request, RejectIn)
        result = actions.reject_proposal(
            proposal_id, actor=actor, reason=data["reason"], comment=data["comment"]
        )
        return Response(
            decision_out(result)
            | {"reason": result.proposal.rejection_reason, "comment": result.decision.comment}
        )


class ProposalRequestChangesApi(ActorApiView):
    @proposal_schema("Ask the submitter for changes (reviewers)", request=RequestChangesIn)
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data = reviewer_input(self, request, RequestChangesIn)
        result = actions.request_changes(proposal_id, actor=actor, comment=data["comment"])
        return Response(
            {"id": result.proposal.pk, "status": result.proposal.status, "comment": data["comment"]}
        )


class ProposalBulkApi(ActorApiView):
    @proposal_schema(
        "Approve or reject many proposals, each in its own transaction (reviewers)", request=BulkIn
    )
    def post(self, request: Request) -> Response:
        actor, data = reviewer_input(self, request, BulkIn)
        outcomes = actions.bulk_decide(
            actor=actor,
            action=data["action"],
            ids=data["ids"],
            comment=data.get("comment", ""),
            reason=data.get("reason", ""),
        )
        return Response({"results": [o.as_dict() for o in outcomes]})


class OperationDetailApi(ActorApiView):
    @extend_schema(tags=["operations"], summary="A maintenance operation with its compensation")
    def get(self, request: Request, operation_id: int) -> Response:
        actor = self.actor(request)
        return Response(operation_json(actor, get_operation(actor, operation_id)))


class OperationCompensateApi(ActorApiView):
    @extend_schema(tags=["operations"], request=CompensateIn, summary="Undo an operation")
    def post(self, request: Request, operation_id: int) -> Response:
        actor = self.actor(request)
        get_operation(actor, operation_id)  # an operation the key may not see: 404 first
        require_reviewer(actor)  # then refused before the body is read
        data = parse(CompensateIn, request)
        result = actions.compensate_operation(operation_id, actor=actor, comment=data["comment"])
        return Response(
            {
                "operation": result.operation.pk,
                "revision": result.revision.number,
                "status": "compensated",
            }
        )
