"""Browser routes of the reviewer inbox, proposal and operation pages (mounted at the site root).

API.md "Browser pages": ``/review/`` inbox · ``/review/proposals/{id}/`` · ``/operations/{id}/``;
a user's saved inbox views live under ``/review/views/``.
Each form posts to its own URL under the page it belongs to; the entry timeline's Quarantine and
Release forms post under ``/review/entries/``.
"""

from lib.urls import actions, under

from . import entry_views, inbox_views, operation_views, proposal_views

urlpatterns = [
    *actions("review/", "review-inbox", {"": inbox_views.inbox_page, "new": inbox_views.inbox_new}),
    *under(
        "review/",
        ("claim/", inbox_views.claim_next, "review-claim-next"),
        ("claim/release/", inbox_views.release_claim, "review-claim-release"),
        ("bulk/", inbox_views.bulk_decide_view, "review-bulk-decide"),
        ("views/", inbox_views.saved_view_create, "review-saved-view-create"),
    ),
    *actions(
        "review/views/<int:pk>/",
        "review-saved-view",
        {"": inbox_views.saved_view_open, "delete": inbox_views.saved_view_delete},
    ),
    *actions(
        "review/proposals/<int:pk>/",
        "review-proposal",
        {
            "assign": inbox_views.assign_view,
            "": proposal_views.proposal_detail,
            "approve": proposal_views.proposal_approve,
            "reject": proposal_views.proposal_reject,
            "request-changes": proposal_views.proposal_request_changes,
            "comment": proposal_views.proposal_comment,
            "amend": proposal_views.proposal_amend,
            "rebase": proposal_views.proposal_rebase,
        },
    ),
    *under(
        "review/proposals/<int:pk>/comments/<int:comment_id>/",
        ("resolve/", proposal_views.proposal_comment_resolve, "review-proposal-comment-resolve"),
    ),
    *actions(
        "review/entries/<slug:slug>/<str:entry_id>/",
        "review-entry",
        {"quarantine": entry_views.entry_quarantine, "release": entry_views.entry_release},
    ),
    *actions(
        "operations/<int:pk>/",
        "review-operation",
        {"": operation_views.operation_detail, "compensate": operation_views.operation_compensate},
    ),
]
