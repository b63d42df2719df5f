"""New Memories start with the recommended policy chosen from the evaluation figures; an
explicit policy is taken as given; existing Memories keep theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config import settings as project_settings

EXPECTED = Path(__file__).parent / "expected" / "lifecycle_quick_seed11.json"


@pytest.fixture
def recommended(settings):
    settings.STEWARD_NEW_MEMORY_POLICY = project_settings.STEWARD_NEW_MEMORY_POLICY
    return project_settings.STEWARD_NEW_MEMORY_POLICY


def test_the_recommendation_follows_the_density_figures():
    figures = json.loads(EXPECTED.read_text())["density"]
    helps_never_hurts = figures["quality_on_helps"] and figures["quality_on_never_below_off"]
    assert project_settings.STEWARD_NEW_MEMORY_POLICY.get("quality_ranking", False) is (
        helps_never_hurts
    )


def test_a_new_memory_gets_the_recommended_policy_over_http(api, reviewer, recommended):
    r = api.as_(reviewer).post("/api/v1/memories", {"slug": "fresh", "name": "Fresh"})
    assert r.status_code == 201, r.text
    assert r.json()["policy"] == recommended == {"quality_ranking": True}
    explicit = api.as_(reviewer).post(
        "/api/v1/memories", {"slug": "plain", "name": "Plain", "policy": {}}
    )
    assert explicit.status_code == 201, explicit.text
    assert explicit.json()["policy"] == {}


def test_existing_memories_keep_their_policy(memory, recommended):
    # created before the recommendation applied (the suite's neutral default): unchanged
    memory.refresh_from_db()
    assert memory.policy == {}
