"""An MCP client on the official SDK, talking Streamable HTTP to the live server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Key

T = TypeVar("T")


class Mcp:
    """``run(script)`` opens one MCP session (initialize handshake) and runs ``script`` in it."""

    def __init__(self, url: str, secret: str | None = None, headers: dict[str, str] | None = None):
        self.url = url
        self.secret = secret
        self.headers = dict(headers or {})

    def as_(self, key: Key | None, **headers: str) -> Mcp:
        return Mcp(self.url, key.secret if key else None, headers)

    def run(self, script: Callable[[ClientSession], Awaitable[T]]) -> T:
        headers = dict(self.headers)
        if self.secret:
            headers["Authorization"] = f"Bearer {self.secret}"

        async def main() -> T:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(self.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await script(session)

        return anyio.run(main)

    def call(self, name: str, **arguments: Any) -> Any:
        return self.run(lambda s: s.call_tool(name, arguments))

    def tools(self) -> dict[str, Any]:
        listed = self.run(lambda s: s.list_tools())
        return {t.name: t for t in listed.tools}


@pytest.fixture
def mcp(live_server, transactional_db) -> Mcp:
    return Mcp(f"{live_server.url}/mcp")


def ok(result: Any) -> dict[str, Any]:
    """The structured result of a successful tool call."""
    assert not result.is_error, result.structured_content
    return result.structured_content  # type: ignore[no-any-return]


def refused(result: Any) -> dict[str, Any]:
    """The error of a refused tool call (the REST error envelope's inner object)."""
    assert result.is_error, result.structured_content
    return result.structured_content["error"]  # type: ignore[no-any-return]
