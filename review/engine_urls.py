"""API routes of the approval engine (mounted under /api/v1/)."""

from django.urls import path

from . import engine_api

urlpatterns = [
    path(
        "proposals/<int:proposal_id>/approve",
        engine_api.ProposalApproveApi.as_view(),
        name="proposal-approve",
    ),
    path(
        "proposals/<int:proposal_id>/reject", engine_api.ProposalRejectApi.as_view(), name="proposal-reject"
    ),
    path("operations/<int:operation_id>", engine_api.OperationDetailApi.as_view(), name="operation-detail"),
    path(
        "operations/<int:operation_id>/compensate",
        engine_api.OperationCompensateApi.as_view(),
        name="operation-compensate",
    ),
]
