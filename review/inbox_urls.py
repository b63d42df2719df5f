"""Browser routes of the reviewer inbox, proposal and operation pages (mounted at the site root).

API.md "Browser pages": ``/review/`` inbox · ``/review/proposals/{id}/`` · ``/operations/{id}/``.
Each form posts to its own URL under the page it belongs to.
"""

from django.urls import path

from . import inbox_views, operation_views, proposal_views

urlpatterns = [
    path("review/", inbox_views.inbox_page, name="review-inbox"),
    path("review/new/", inbox_views.inbox_new, name="review-inbox-new"),
    path("review/claim/", inbox_views.claim_next, name="review-claim-next"),
    path("review/claim/release/", inbox_views.release_claim, name="review-claim-release"),
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
    path("operations/<int:pk>/", operation_views.operation_detail, name="review-operation"),
    path(
        "operations/<int:pk>/compensate/",
        operation_views.operation_compensate,
        name="review-operation-compensate",
    ),
]
