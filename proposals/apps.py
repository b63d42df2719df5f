"""App config for proposals: registers the proposal hooks on the memory core.

``memory`` never imports ``proposals``; it offers explicit hook points (``memory.hooks``) that are
called inside its transactions. Here ``proposals`` registers:

- ``on_heads_changed`` → :func:`proposals.actions.mark_stale_for_heads` (a changed head makes the
  pending proposals touching it stale, atomically with the change);
- ``on_entry_admitted`` → :func:`proposals.actions.file_duplicate_consolidation` (a duplicate on
  add files a consolidation proposal as the system actor).
"""

from django.apps import AppConfig


class ProposalsConfig(AppConfig):
    name = "proposals"
    verbose_name = "Proposals"

    def ready(self) -> None:
        from memory import hooks

        from . import actions

        hooks.on_heads_changed(actions.mark_stale_for_heads)
        hooks.on_entry_admitted(actions.file_duplicate_consolidation)
