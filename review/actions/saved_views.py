"""Named saved inbox views: a user keeps the inbox's filters, search and order under a name.

A saved view is private to its owner and changes nothing but itself, so read-only users
(auditors) may keep views too. Names are unique per user (a database constraint); a second view
with the same name is a conflict, not an overwrite.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from lib.errors import DomainError, NotFound
from memory.admission import check_stored_json, check_stored_text

from ..models import SavedView

#: Longest name a view may have (``SavedView.name``).
MAX_NAME = 80
#: Most views one user keeps (the inbox lists them all).
MAX_VIEWS = 50


class DuplicateViewName(DomainError):
    """The user already has a view with that name: saving again must not silently replace
    the filters they saved before."""

    code = "duplicate_name"
    http_status = 409
    default_message = "You already have a saved view with that name."


class TooManyViews(DomainError):
    """The inbox lists every saved view of its user; the list stays short enough to read."""

    code = "too_many_views"
    http_status = 409
    default_message = f"At most {MAX_VIEWS} saved views; delete one first."


@transaction.atomic(durable=True)
def save_view(user: AbstractBaseUser, *, name: str, params: Mapping[str, str]) -> SavedView:
    """Save the inbox state ``params`` (non-default filter values) under ``name`` for ``user``.

    Raises :class:`DuplicateViewName` when ``user`` has a view of that name (the unique
    constraint decides, so two tabs saving at once cannot both win) and
    :class:`TooManyViews` past :data:`MAX_VIEWS`.
    """
    name = name.strip()
    # The name and the search are stored and shown again: no secret, no card or national id.
    check_stored_text("name", name)
    check_stored_json("params", dict(params))
    if SavedView.objects.filter(user_id=user.pk).count() >= MAX_VIEWS:
        raise TooManyViews()
    try:
        with transaction.atomic():
            return SavedView.objects.create(
                user_id=user.pk, name=name, params={k: str(v) for k, v in params.items()}
            )
    except IntegrityError as exc:
        raise DuplicateViewName(details={"name": [DuplicateViewName.default_message]}) from exc


@transaction.atomic(durable=True)
def delete_view(user: AbstractBaseUser, *, pk: int) -> None:
    """Delete ``user``'s view ``pk``; another user's view is :class:`NotFound` (never theirs
    to see)."""
    deleted, _ = SavedView.objects.filter(user_id=user.pk, pk=pk).delete()
    if not deleted:
        raise NotFound(f"No saved view {pk}.")
