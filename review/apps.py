"""App config for review: registers the reviewer notification on new proposals, the owners'
notification of facts that fell due for re-checking, and the app's system checks."""

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        from memory import effects
        from proposals import hooks

        from . import checks, exposed, notifications  # noqa: F401 - checks registers itself

        effects.retired.connect(exposed.revision_retired)
        hooks.on_submitted(notifications.proposal_submitted)
        hooks.on_commented(notifications.comment_posted)
        hooks.on_amended(notifications.proposal_amended)
        effects.entries_fell_due.connect(notifications.entries_fell_due)
