"""App config for review: registers the reviewer notification on new proposals."""

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        from proposals import hooks

        from . import notifications

        hooks.on_submitted(notifications.proposal_submitted)
