"""API routes of the approval engine (mounted under /api/v1/)."""

from django.urls import path

from . import engine_api as api

urlpatterns = [
    path(
        "proposals/<int:proposal_id>/approve",
        api.ProposalApproveApi.as_view(),
        name="proposal-approve",
    ),
    path(
        "proposals/<int:proposal_id>/reject",
        api.ProposalRejectApi.as_view(),
        name="proposal-reject",
    ),
    path(
        "proposals/<int:proposal_id>/request-changes",
        api.ProposalRequestChangesApi.as_view(),
        name="proposal-request-changes",
    ),
    path("proposals/bulk", api.ProposalBulkApi.as_view(), name="proposal-bulk"),
    path(
        "operations/<int:operation_id>",
        api.OperationDetailApi.as_view(),
        name="operation-detail",
    ),
    path(
        "operations/<int:operation_id>/compensate",
        api.OperationCompensateApi.as_view(),
        name="operation-compensate",
    ),
]
