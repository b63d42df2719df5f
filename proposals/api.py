"""REST endpoints of proposal intake. Views translate: parse, scope, call one action, respond."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import ActorApiView, parse, parse_query
from lib.identity import Actor
from lib.pagination import keyset_page
from lib.schema import limit_parameter
from memory.selectors import get_memory

from . import actions
from .models import Proposal
from .permissions import (
    kinds_filed_by,
    require_assigner,
    require_reader,
    require_submitter_of,
)
from .selectors import (
    filter_proposals,
    get_proposal,
    proposal_json,
    submitted_json,
    visible_proposals,
)
from .serializers import (
    AmendIn,
    AssignIn,
    CommentIn,
    ProposalListQuery,
    ProposalSubmitIn,
    RebaseIn,
    ResolveIn,
    WithdrawIn,
    comment_out,
    parse_submission,
)

TAGS = ["proposals"]
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    description="Same key + same body → the original proposal (200); other body → 409.",
)


F = TypeVar("F", bound=Callable[..., Any])


def proposal_schema(
    summary: str, *, operation: str = "", responses: Any = OpenApiTypes.OBJECT, **more: Any
) -> Callable[[F], F]:
    """An operation on proposals in the OpenAPI document: tagged "proposals", with ``summary``,
    an object answered unless ``responses`` says otherwise and, given ``operation``, the id
    ``proposals_<operation>`` (else the id derived from the path)."""
    if operation:
        more["operation_id"] = f"proposals_{operation}"
    return extend_schema(tags=TAGS, summary=summary, responses=responses, **more)


def proposal_response(actor: Actor, proposal_id: int) -> Response:
    """The proposal as the caller sees it now (read again after a change)."""
    return Response(proposal_json(actor, get_proposal(actor, proposal_id)))


class ProposalChangeApi(ActorApiView):
    """A POST that changes one proposal: the body is parsed first, then the proposal is looked
    up as the caller may see it."""

    def parse_for(
        self, request: Request, proposal_id: int, body: type[Any]
    ) -> tuple[Any, dict[str, Any], Proposal]:
        actor = self.actor(request)
        data = parse(body, request)
        return actor, data, get_proposal(actor, proposal_id)


class ProposalListSubmitApi(ActorApiView):
    @proposal_schema(
        "List proposals (cursor pagination, newest first)",
        operation="list",
        parameters=[
            OpenApiParameter("status", str),
            OpenApiParameter("kind", str),
            OpenApiParameter("memory", str, description="Memory slug"),
            OpenApiParameter("submitted_by", str, description="Actor id (key:…), or 'me'"),
            OpenApiParameter(
                "submitter", str, description="Submitter's actor id or label, or 'me'"
            ),
            OpenApiParameter(
                "q", str, description="Words in the rationale, the proposed text or entry ids"
            ),
            OpenApiParameter("entry", str, description="Proposals affecting this entry id"),
            OpenApiParameter("has_lost_details", bool),
            OpenApiParameter("assigned", str, description="'me': assigned to the caller"),
            OpenApiParameter("cursor", str),
            limit_parameter(),
        ],
    )
    def get(self, request: Request) -> Response:
        actor = self.actor(request)
        require_reader(actor)
        filters = parse_query(ProposalListQuery, request)
        qs = visible_proposals(actor).with_detail()
        if "memory" in filters:
            qs = qs.filter(memory=get_memory(actor, filters["memory"]))
        if "status" in filters:
            qs = qs.filter(status=filters["status"])
        if "kind" in filters:
            qs = qs.filter(kind=filters["kind"])
        if "submitted_by" in filters:
            who = filters["submitted_by"]
            qs = qs.filter(submitted_by=actor.id if who == "me" else who)
        qs = filter_proposals(qs, actor, filters)
        rows, cursor = keyset_page(qs, request.query_params, descending=True)
        return Response({"items": [proposal_json(actor, p) for p in rows], "next_cursor": cursor})

    @proposal_schema(
        "Submit an L2 proposal",
        operation="submit",
        request=ProposalSubmitIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        actor = self.actor(request)
        require_submitter_of(actor, request.data)
        result = actions.submit_proposal(
            actor=actor,
            submission=parse_submission(request.data, kinds_filed_by(actor)),
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        if result.created:
            # Built from what the intake wrote: nothing is read back.
            body = submitted_json(actor, result.proposal, result.targets)
            return Response(body, status=status.HTTP_201_CREATED)
        proposal = Proposal.objects.with_detail().get(pk=result.proposal.pk)
        return Response(proposal_json(actor, proposal), headers={"Idempotent-Replayed": "true"})


class ProposalDetailApi(ActorApiView):
    @proposal_schema("Read a proposal", operation="read")
    def get(self, request: Request, proposal_id: int) -> Response:
        return proposal_response(self.actor(request), proposal_id)


class ProposalWithdrawApi(ActorApiView):
    @proposal_schema(
        "Withdraw a pending proposal (submitter)", operation="withdraw", request=WithdrawIn
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        actor = self.actor(request)
        proposal = get_proposal(actor, proposal_id)
        data = parse(WithdrawIn, request)
        actions.withdraw_proposal(proposal, actor=actor, reason=data.get("reason", ""))
        return proposal_response(actor, proposal_id)


class ProposalCommentsApi(ProposalChangeApi):
    @proposal_schema(
        "Comment on a proposal (reviewers and the submitter)",
        operation="comment",
        request=CommentIn,
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data, proposal = self.parse_for(request, proposal_id, CommentIn)
        comment = actions.add_comment(
            proposal,
            actor=actor,
            body=data["body"],
            anchor=data.get("anchor"),
            resolves=data.get("resolves"),
        )
        return Response(comment_out(comment), status=status.HTTP_201_CREATED)


class ProposalCommentResolveApi(ProposalChangeApi):
    @proposal_schema(
        "Resolve a comment, as in a code review (its author or a reviewer)",
        operation="comment_resolve",
        request=ResolveIn,
    )
    def post(self, request: Request, proposal_id: int, comment_id: int) -> Response:
        actor, _, proposal = self.parse_for(request, proposal_id, ResolveIn)
        comment = actions.resolve_comment(proposal, actor=actor, comment_id=comment_id)
        return Response(comment_out(comment))


class ProposalAmendApi(ProposalChangeApi):
    @proposal_schema(
        "Amend an open proposal: a new revision, verification rerun (submitter, reviewer)",
        operation="amend",
        request=AmendIn,
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data, proposal = self.parse_for(request, proposal_id, AmendIn)
        comment = data.pop("comment", "")
        amended = actions.amend_proposal(proposal, actor=actor, changes=data, comment=comment)
        return proposal_response(actor, amended.pk)


class ProposalRebaseApi(ProposalChangeApi):
    @proposal_schema(
        "Rebase a stale proposal onto the current heads: verification rerun, approvals void "
        "(submitter, reviewer)",
        operation="rebase",
        request=RebaseIn,
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        actor, data, proposal = self.parse_for(request, proposal_id, RebaseIn)
        rebased = actions.rebase_proposal(proposal, actor=actor, comment=data.get("comment", ""))
        return proposal_response(actor, rebased.pk)


class ProposalAssignApi(ProposalChangeApi):
    @proposal_schema(
        "Assign an open proposal to a reviewer (null clears it)",
        operation="assign",
        request=AssignIn,
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        actor = self.actor(request)
        proposal = get_proposal(actor, proposal_id)  # a proposal the key may not see: 404 first
        require_assigner(actor)  # then refused before the body is read
        data = parse(AssignIn, request)
        actions.assign_proposal(proposal, actor=actor, reviewer=data["reviewer"])
        return proposal_response(actor, proposal_id)
