"""Browser routes of the notification list, its nav badge and preference, and the DEBUG outbox."""

from lib.urls import actions

from . import notification_views as views

urlpatterns = [
    *actions(
        "notifications/",
        "review-notifications",
        {
            "": views.notification_list,
            "badge": views.notification_badge,
            "seen": views.notification_seen,
            "preferences": views.notification_preferences,
        },
    ),
    *actions("outbox/", "review-outbox", {"": views.outbox, "digests": views.outbox_send_digests}),
]
