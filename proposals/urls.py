"""API routes of proposal intake (mounted under /api/v1/)."""

from lib.urls import under

from . import api

urlpatterns = under(
    "proposals",
    ("", api.ProposalListSubmitApi, "proposal-list"),
    ("/<int:proposal_id>", api.ProposalDetailApi, "proposal-detail"),
    ("/<int:proposal_id>/comments", api.ProposalCommentsApi, "proposal-comments"),
    ("/<int:proposal_id>/amend", api.ProposalAmendApi, "proposal-amend"),
    ("/<int:proposal_id>/assign", api.ProposalAssignApi, "proposal-assign"),
    ("/<int:proposal_id>/withdraw", api.ProposalWithdrawApi, "proposal-withdraw"),
)
