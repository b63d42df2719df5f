"""Browser routes of the reviewer inbox, proposal and operation pages (mounted at the site root).

API.md "Browser pages": ``/review/`` inbox · ``/review/proposals/{id}/`` · ``/operations/{id}/``;
a user's saved inbox views live under ``/review/views/``.
Each form posts to its own URL under the page it belongs to; the entry timeline's Quarantine and
Release forms post under ``/review/entries/``.
"""

from django.urls import path

from . import entry_views, inbox_views, operation_views, proposal_views

urlpatterns = [
    path("review/", inbox_views.inbox_page, name="review-inbox"),
    path("review/new/", inbox_views.inbox_new, name="review-inbox-new"),
    path("review/claim/", inbox_views.claim_next, name="review-claim-next"),
    path("review/claim/release/", inbox_views.release_claim, name="review-claim-release"),
    path("review/bulk/", inbox_views.bulk_decide_view, name="review-bulk-decide"),
    path("review/views/", inbox_views.saved_view_create, name="review-saved-view-create"),
    path("review/views/<int:pk>/", inbox_views.saved_view_open, name="review-saved-view"),
    path(
        "review/views/<int:pk>/delete/",
        inbox_views.saved_view_delete,
        name="review-saved-view-delete",
    ),
    path(
        "review/proposals/<int:pk>/assign/",
        inbox_views.assign_view,
        name="review-proposal-assign",
    ),
    path("review/proposals/<int:pk>/", proposal_views.proposal_detail, name="review-proposal"),
    path(
        "review/proposals/<int:pk>/approve/",
        proposal_views.proposal_approve,
        name="review-proposal-approve",
    ),
    path(
        "review/proposals/<int:pk>/reject/",
        proposal_views.proposal_reject,
        name="review-proposal-reject",
    ),
    path(
        "review/proposals/<int:pk>/request-changes/",
        proposal_views.proposal_request_changes,
        name="review-proposal-request-changes",
    ),
    path(
        "review/proposals/<int:pk>/comment/",
        proposal_views.proposal_comment,
        name="review-proposal-comment",
    ),
    path(
        "review/proposals/<int:pk>/amend/",
        proposal_views.proposal_amend,
        name="review-proposal-amend",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/quarantine/",
        entry_views.entry_quarantine,
        name="review-entry-quarantine",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/release/",
        entry_views.entry_release,
        name="review-entry-release",
    ),
    path("operations/<int:pk>/", operation_views.operation_detail, name="review-operation"),
    path(
        "operations/<int:pk>/compensate/",
        operation_views.operation_compensate,
        name="review-operation-compensate",
    ),
]
