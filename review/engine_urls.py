"""API routes of the approval engine (mounted under /api/v1/)."""

from lib.urls import actions, under

from . import engine_api as api

urlpatterns = [
    *actions(
        "proposals/<int:proposal_id>",
        "proposal",
        {
            "approve": api.ProposalApproveApi,
            "reject": api.ProposalRejectApi,
            "request-changes": api.ProposalRequestChangesApi,
        },
    ),
    *actions("proposals", "proposal", {"bulk": api.ProposalBulkApi}),
    *under("operations/<int:operation_id>", ("", api.OperationDetailApi, "operation-detail")),
    *actions(
        "operations/<int:operation_id>", "operation", {"compensate": api.OperationCompensateApi}
    ),
]
