"""Small factories that build state through the real actions (never by writing models)."""

from __future__ import annotations

from typing import Any

from memory import actions
from memory.actors import Actor
from memory.models import Memory


def remember(memory: Memory, actor: Actor, body: str, kind: str = "fact", **extra: Any):
    return actions.add_entry(memory, actor=actor, body=body, kind=kind, **extra)


def add_via_api(api: Any, body: str, kind: str = "fact", slug: str = "acme", **extra: Any) -> dict:
    """POST an entry and return the JSON body (asserting it was accepted)."""
    r = api.post(f"/api/v1/memories/{slug}/entries", {"body": body, "kind": kind, **extra})
    assert r.status_code in (200, 201), r.text
    return r.json()
