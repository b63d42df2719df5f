"""Browser routes of the entry page's reviewer actions (mounted at the site root).

The entry page (``/memories/{slug}/entries/{entry_id}/``) posts Pin, Forget and Reactivate, and
Confirm and Require re-verification, under ``/review/entries/``, beside Quarantine and Release
(``review.inbox_urls``).
"""

from django.urls import path

from . import entry_views, policy_views

urlpatterns = [
    path(
        "review/entries/<slug:slug>/<str:entry_id>/pin/",
        entry_views.entry_pin,
        name="review-entry-pin",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/forget/",
        entry_views.entry_forget,
        name="review-entry-forget",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/reactivate/",
        entry_views.entry_reactivate,
        name="review-entry-reactivate",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/confirm/",
        entry_views.entry_confirm,
        name="review-entry-confirm",
    ),
    path(
        "review/entries/<slug:slug>/<str:entry_id>/require-reverification/",
        entry_views.entry_require_reverification,
        name="review-entry-require-reverification",
    ),
    path(
        "review/memories/<slug:slug>/jobs/<slug:job>/schedule/",
        policy_views.job_schedule,
        name="review-job-schedule",
    ),
]
