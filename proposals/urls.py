"""API routes of proposal intake (mounted under /api/v1/)."""

from lib.urls import actions, under

from . import api

urlpatterns = [
    *under(
        "proposals",
        ("", api.ProposalListSubmitApi, "proposal-list"),
        ("/<int:proposal_id>", api.ProposalDetailApi, "proposal-detail"),
    ),
    *under(
        "proposals/<int:proposal_id>/comments/<int:comment_id>",
        ("/resolve", api.ProposalCommentResolveApi, "proposal-comment-resolve"),
    ),
    *actions(
        "proposals/<int:proposal_id>",
        "proposal",
        {
            "comments": api.ProposalCommentsApi,
            "amend": api.ProposalAmendApi,
            "assign": api.ProposalAssignApi,
            "withdraw": api.ProposalWithdrawApi,
            "rebase": api.ProposalRebaseApi,
        },
    ),
]
