"""API routes of proposal intake (mounted under /api/v1/)."""

from django.urls import path

from . import api

urlpatterns = [
    path("proposals", api.ProposalListSubmitApi.as_view(), name="proposal-list"),
    path("proposals/<int:proposal_id>", api.ProposalDetailApi.as_view(), name="proposal-detail"),
    path(
        "proposals/<int:proposal_id>/comments",
        api.ProposalCommentsApi.as_view(),
        name="proposal-comments",
    ),
    path(
        "proposals/<int:proposal_id>/amend",
        api.ProposalAmendApi.as_view(),
        name="proposal-amend",
    ),
    path(
        "proposals/<int:proposal_id>/assign",
        api.ProposalAssignApi.as_view(),
        name="proposal-assign",
    ),
    path(
        "proposals/<int:proposal_id>/withdraw",
        api.ProposalWithdrawApi.as_view(),
        name="proposal-withdraw",
    ),
]
