"""API routes of the approval engine (mounted under /api/v1/)."""

from django.urls import path

from . import engine_api

urlpatterns = [
    path(
        "proposals/<int:pk>/approve",
        engine_api.ProposalApproveApi.as_view(),
        name="proposal-approve",
    ),
    path(
        "proposals/<int:pk>/reject", engine_api.ProposalRejectApi.as_view(), name="proposal-reject"
    ),
    path("operations/<int:pk>", engine_api.OperationDetailApi.as_view(), name="operation-detail"),
    path(
        "operations/<int:pk>/compensate",
        engine_api.OperationCompensateApi.as_view(),
        name="operation-compensate",
    ),
]
