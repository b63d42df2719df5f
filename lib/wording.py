"""How messages name things, alike over REST, MCP and the pages (no imports: any module, even
one Django's settings load, may use it)."""

from __future__ import annotations

from collections.abc import Iterable


def listed(names: Iterable[object]) -> str:
    """Names in a message, plainly and in the order given: ``a, b, c`` (never a Python list's
    or set's repr, which a client would have to parse)."""
    return ", ".join(str(name) for name in names)


def one_of(choices: Iterable[object]) -> str:
    """A refusal naming the accepted values: ``One of a, b, c.``"""
    return f"One of {listed(choices)}."
