"""Fixtures for the approval engine: entries and proposals built through the real API."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.factories import add_via_api

_keys = itertools.count()


def submit(api: Any, payload: dict[str, Any]) -> dict[str, Any]:
    r = api.post(
        "/api/v1/proposals",
        {"memory": "acme", **payload},
        headers={"Idempotency-Key": f"k-{next(_keys)}"},
    )
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def ag(api, agent):
    return api.as_(agent)


@pytest.fixture
def rv(api, reviewer):
    return api.as_(reviewer)


@pytest.fixture
def rv2(api, other_reviewer):
    return api.as_(other_reviewer)


@pytest.fixture
def consolidation(ag):
    """Two near-duplicates and a consolidation that keeps every detail."""
    a = add_via_api(
        ag,
        "Deploy runs at 02:00 UTC via deploy.sh",
        evidence=[{"source": "repo", "ref": "deploy.sh"}],
        dedupe=False,
    )
    b = add_via_api(
        ag,
        "Deploys run nightly at 02:00 UTC",
        evidence=[{"source": "chat", "ref": "msg-1"}],
        dedupe=False,
    )
    p = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Same deploy schedule stated twice",
            "target": {"entry_id": a["entry_id"], "version": 1},
            "redundant": [{"entry_id": b["entry_id"], "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    return {"a": a["entry_id"], "b": b["entry_id"], "proposal": p}


@pytest.fixture
def lossy(ag):
    """A consolidation whose body drops details (02:00, UTC, deploy.sh)."""
    a = add_via_api(ag, "Deploy runs at 02:00 UTC via deploy.sh", dedupe=False)
    b = add_via_api(ag, "Deploys run nightly", dedupe=False)
    p = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Shorter",
            "target": {"entry_id": b["entry_id"], "version": 1},
            "redundant": [{"entry_id": a["entry_id"], "version": 1}],
            "body": "Deploys run nightly",
        },
    )
    return {"a": a["entry_id"], "b": b["entry_id"], "proposal": p}
