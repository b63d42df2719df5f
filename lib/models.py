"""Abstract model bases the apps share. ``lib`` is no app: nothing here has a table, and the
apps' models subclass what is here.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class AppendOnlyError(Exception):
    """Raised when code tries to update or delete an append-only record."""


class AppendOnlyModel(models.Model):
    """A row that is written once. Python refuses updates and deletes, and so does the
    database: UPDATE and DELETE on both backends, TRUNCATE on PostgreSQL (triggers installed by
    migration through ``lib.append_only.triggers``; ``tests/test_database_triggers.py`` finds every
    subclass's table and fails when one lacks them)."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError(f"{type(self).__name__} is append-only")
