"""The base of the memory REST views: responses are redacted for the caller, always.

Every view under ``/api/v1/memories/<slug>/…`` derives from :class:`MemoryApiView`. Whatever a
view builds, a successful response that names an entry above the caller's clearance (in a reason,
a relation, a lifecycle reference) leaves with that id replaced — ``memory.visibility.scrub``
is applied here, once, so a new view cannot forget it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import ActorApiView

from ..actors import Actor
from ..models import Memory
from ..selectors import get_memory
from ..visibility import scrub


class MemoryApiView(ActorApiView):
    def scope(
        self, request: Request, slug: str, require: Callable[[Actor], None] | None = None
    ) -> tuple[Actor, Memory]:
        """The caller and the Memory ``slug`` in its scope (404 outside it); ``require`` checks
        the caller first, before the Memory is looked up."""
        actor = self.actor(request)
        if require is not None:
            require(actor)
        return actor, get_memory(actor, slug)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        slug = kwargs.get("slug")
        if (
            slug
            and isinstance(response, Response)
            and response.status_code < 400
            and response.data is not None
        ):
            response.data = scrub(response.data, memory_slug=slug, actor=self.actor(request))
        return super().finalize_response(request, response, *args, **kwargs)
