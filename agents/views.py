"""``/mcp``: the Streamable HTTP endpoint, behind the same DRF machinery as every REST view.

DRF authenticates the Bearer key (401 in the error envelope without one), applies the REST
permission and throttle classes (429 ``throttled`` with ``Retry-After``), and Django's middleware
sets the correlation id. Only then is the request handed to the MCP SDK (:mod:`agents.server`).
Browser sessions are not accepted here: MCP is for API keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from lib.api import ActorApiView
from lib.correlation import current_correlation_id
from lib.errors import Forbidden
from memory.identity import ApiKeyAuthentication

from .server import Caller, serve


class FirstRenderer(BaseContentNegotiation):
    """The MCP transport answers JSON whatever ``Accept`` says (the SDK checks it itself); DRF
    only renders our error envelope."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> Any:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


@extend_schema(exclude=True)
class McpApi(ActorApiView):
    """POST carries every exchange; no GET: the server is stateless and opens no stream of its
    own, so a GET is answered 405 at once (as Streamable HTTP asks) rather than held open."""

    authentication_classes = [ApiKeyAuthentication]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRenderer

    def post(self, request: Request) -> HttpResponse:
        return self._exchange(request)

    def delete(self, request: Request) -> HttpResponse:
        return self._exchange(request)

    def _exchange(self, request: Request) -> HttpResponse:
        origin = request.headers.get("Origin")
        if origin and origin not in settings.STEWARD_MCP_ALLOWED_ORIGINS:
            # DNS-rebinding protection: a browser page may only call from a listed origin.
            raise Forbidden("This Origin may not call /mcp (see STEWARD_MCP_ALLOWED_ORIGINS).")
        caller = Caller(actor=self.actor(request), correlation_id=current_correlation_id())
        django_request = request._request
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": django_request.method,
            "scheme": django_request.scheme,
            "path": django_request.path,
            "raw_path": django_request.path.encode(),
            "query_string": django_request.META.get("QUERY_STRING", "").encode("latin-1"),
            "headers": [
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in django_request.headers.items()
            ],
            "client": (django_request.META.get("REMOTE_ADDR", ""), 0),
            "server": (django_request.get_host(), 0),
        }
        exchange = serve(scope, django_request.body, caller)
        try:
            response = McpResponse(exchange.body, status=exchange.status)
            for name, value in exchange.headers:
                if name.lower() not in ("content-length", "date", "server"):
                    response[name] = value
        except BaseException:
            exchange.finish()
            raise
        response.finish = exchange.finish
        return response


class McpResponse(HttpResponse):
    """The SDK's response; once the server has sent it (``close()``), the SDK winds the exchange
    down (:meth:`agents.server.Exchange.finish`) without the client waiting for it."""

    finish: Callable[[], None] | None = None

    def close(self) -> None:
        finish, self.finish = self.finish, None
        try:
            if finish is not None:
                finish()
        finally:
            super().close()
