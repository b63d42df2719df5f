"""Routes of one resource, declared as a table under their common prefix."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.urls import URLPattern, path
from django.views import View

#: A view class or function.
ViewLike = type[View] | Callable[..., Any]
#: One route: the path after the prefix, the view, the route's name.
Route = tuple[str, ViewLike, str]


def under(prefix: str, *routes: Route) -> list[URLPattern]:
    """``path(prefix + suffix, view, name=name)`` for each route, in the order given (Django
    tries them in that order); a view class is served through ``as_view()``."""
    return [path(prefix + suffix, _callable(view), name=name) for suffix, view, name in routes]


def actions(prefix: str, name: str, views: Mapping[str, ViewLike]) -> list[URLPattern]:
    """The routes of one resource and its actions, each named after its path: action ``a`` is
    served at ``prefix/a`` and named ``name-a``; the action ``""`` is the resource itself, at
    ``prefix`` and named ``name``. The paths end as ``prefix`` does: a browser page's prefix
    ends in "/" and so do its actions' paths (``review/proposals/<int:pk>/approve/``); an API
    prefix does not (``proposals/<int:proposal_id>/approve``)."""
    sep, end = ("", "/") if prefix.endswith("/") else ("/", "")
    return under(
        prefix,
        *(
            (f"{sep}{a}{end}" if a else "", view, f"{name}-{a}" if a else name)
            for a, view in views.items()
        ),
    )


def _callable(view: ViewLike) -> Callable[..., Any]:
    if isinstance(view, type) and issubclass(view, View):
        return view.as_view()
    return view
