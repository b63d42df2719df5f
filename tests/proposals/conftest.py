"""Helpers for the proposal tests: entries written over HTTP and request bodies per kind."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import add_via_api

P = "/api/v1/proposals"
E = "/api/v1/memories/acme/entries"


@pytest.fixture
def a(api, agent):
    """The agent's HTTP client."""
    return api.as_(agent)


def add(client: Any, body: str, kind: str = "fact", **extra: Any) -> dict[str, Any]:
    """Add an entry without the near-duplicate check (tests choose their duplicates)."""
    extra.setdefault("dedupe", False)
    return add_via_api(client, body, kind=kind, **extra)


def ref(entry: dict[str, Any]) -> dict[str, Any]:
    return {"entry_id": entry["entry_id"], "version": entry["version"]}


def consolidation(target: dict, redundant: list[dict], body: str, **extra: Any) -> dict:
    return {
        "memory": "acme",
        "kind": "consolidation",
        "rationale": "These say the same thing.",
        "target": ref(target),
        "redundant": [ref(r) for r in redundant],
        "body": body,
        **extra,
    }


def supersession(old: dict, successor: dict, **extra: Any) -> dict:
    return {
        "memory": "acme",
        "kind": "supersession",
        "rationale": "The old statement is outdated.",
        "old": ref(old),
        "successor": successor,
        **extra,
    }


def promotion(notes: list[dict], body: str, target_kind: str = "fact", **extra: Any) -> dict:
    return {
        "memory": "acme",
        "kind": "promotion",
        "rationale": "This came up in several sessions.",
        "notes": [ref(n) for n in notes],
        "target_kind": target_kind,
        "body": body,
        **extra,
    }


def cleanup(entries: list[dict], **extra: Any) -> dict:
    return {
        "memory": "acme",
        "kind": "cleanup",
        "rationale": "Low-value leftovers.",
        "entries": [ref(e) for e in entries],
        **extra,
    }
