"""Browser routes of the notification list, its nav badge and preference, and the DEBUG outbox."""

from django.urls import path

from . import notification_views as views

urlpatterns = [
    path("notifications/", views.notification_list, name="review-notifications"),
    path("notifications/badge/", views.notification_badge, name="review-notifications-badge"),
    path("notifications/seen/", views.notification_seen, name="review-notifications-seen"),
    path(
        "notifications/preferences/",
        views.notification_preferences,
        name="review-notifications-preferences",
    ),
    path("outbox/", views.outbox, name="review-outbox"),
    path("outbox/digests/", views.outbox_send_digests, name="review-outbox-digests"),
]
