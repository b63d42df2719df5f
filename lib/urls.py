"""Routes of one resource, declared as a table under their common prefix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import URLPattern, path
from django.views import View

#: One route: the path after the prefix, the view (a view class or function), the route's name.
Route = tuple[str, type[View] | Callable[..., Any], str]


def under(prefix: str, *routes: Route) -> list[URLPattern]:
    """``path(prefix + suffix, view, name=name)`` for each route, in the order given (Django
    tries them in that order); a view class is served through ``as_view()``."""
    return [path(prefix + suffix, _callable(view), name=name) for suffix, view, name in routes]


def _callable(view: type[View] | Callable[..., Any]) -> Callable[..., Any]:
    if isinstance(view, type) and issubclass(view, View):
        return view.as_view()
    return view
