"""Policy proposals over REST: a reviewer files a change to a Memory's policy, another reviewer
approves it, and approval merges it like a PATCH (API.md "Proposals", kind ``policy``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from memory.models import AuditEvent, Memory
from tests.conftest import make_key

pytestmark = pytest.mark.django_db(transaction=True)

SCHEDULE = {"jobs": {"contradictions": {"enabled": True, "every_hours": 12}}}


@pytest.fixture
def scoped_reviewer(memory):
    user = User.objects.create_user("sam", password="pw-sam-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return make_key("sam-key", "reviewer", memories=("acme",), owner="sam")


def file(api, key, policy=None, **more):
    return api.as_(key).post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "policy",
            "policy": policy if policy is not None else SCHEDULE,
            "rationale": "Run the contradictions pass twice a day",
            **more,
        },
    )


def test_second_reviewer_approves_a_policy_change_and_the_policy_changes(
    api, scoped_reviewer, other_reviewer
):
    r = file(api, scoped_reviewer)
    assert r.status_code == 201, r.text
    p = r.json()
    assert p["kind"] == "policy" and p["status"] == "pending" and p["targets"] == []
    assert p["payload"] == {"policy": SCHEDULE, "before": {}}
    checks = {c["code"]: c for c in p["verification"]["checks"]}
    assert checks["policy_valid"]["status"] == "pass"
    assert "Schedules contradictions every 12 h" in checks["job_schedule"]["message"]
    assert Memory.objects.get(slug="acme").policy == {}  # nothing changes before approval

    own = api.as_(scoped_reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert own.status_code == 403, own.text
    assert own.json()["error"]["code"] == "self_approval"
    assert Memory.objects.get(slug="acme").policy == {}

    ok = api.as_(other_reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert ok.status_code == 200, ok.text
    assert ok.json()["status"] == "approved"
    assert ok.json()["operation"] is None and ok.json()["revision"] is None
    assert Memory.objects.get(slug="acme").policy == SCHEDULE
    event = AuditEvent.objects.get(action="memory.policy_changed")
    assert event.proposal_id == p["id"] and event.payload["after"] == SCHEDULE
    assert event.actor_label == "ravi-key"


def test_approving_a_policy_change_after_its_keys_moved_is_refused(
    api, scoped_reviewer, reviewer, other_reviewer
):
    p = file(api, scoped_reviewer).json()
    # An operator changes the same key directly in the meantime.
    moved = api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"jobs": {"promotion": {"enabled": True}}}}
    )
    assert moved.status_code == 200, moved.text
    r = api.as_(other_reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "policy_changed"
    assert r.json()["error"]["details"]["keys"] == ["jobs"]
    assert Memory.objects.get(slug="acme").policy == {"jobs": {"promotion": {"enabled": True}}}
    assert api.as_(reviewer).get(f"/api/v1/proposals/{p['id']}").json()["status"] == "pending"


def test_a_change_to_other_keys_does_not_block_approval(
    api, scoped_reviewer, reviewer, other_reviewer
):
    p = file(api, scoped_reviewer).json()
    api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"quality_ranking": True}})
    r = api.as_(other_reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert r.status_code == 200, r.text
    assert Memory.objects.get(slug="acme").policy == {"quality_ranking": True, **SCHEDULE}


def test_policy_approvals_required_counts_for_policy_changes(
    api, scoped_reviewer, reviewer, other_reviewer
):
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"approvals_required": {"policy": 2}}}
    )
    p = file(api, scoped_reviewer).json()
    first = api.as_(other_reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "pending" and first.json()["approvals_required"] == 2
    assert "jobs" not in Memory.objects.get(slug="acme").policy
    second = api.as_(reviewer).post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert second.status_code == 200, second.text
    assert second.json()["status"] == "approved"
    assert Memory.objects.get(slug="acme").policy["jobs"] == SCHEDULE["jobs"]


def test_a_scoped_reviewer_key_may_not_patch_the_policy(api, scoped_reviewer, reviewer):
    r = api.as_(scoped_reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"quality_ranking": True}}
    )
    assert r.status_code == 403, r.text
    assert "policy proposal" in r.json()["error"]["message"]
    assert Memory.objects.get(slug="acme").policy == {}
    # Operators (an unscoped reviewer key, staff) keep PATCH.
    ok = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"quality_ranking": True}})
    assert ok.status_code == 200, ok.text


def test_agents_and_auditors_do_not_file_policy_changes(api, agent, auditor):
    for key in (agent, auditor):
        r = file(api, key)
        assert r.status_code == 403, r.text
        assert r.json()["error"]["code"] == "forbidden"


def test_reviewers_still_do_not_file_entry_proposals(api, scoped_reviewer):
    r = api.as_(scoped_reviewer).post(
        "/api/v1/proposals",
        {"memory": "acme", "kind": "cleanup", "rationale": "x", "entries": []},
    )
    assert r.status_code == 403, r.text


@pytest.mark.parametrize(
    ("policy", "status", "code"),
    [
        ({}, 400, "invalid"),
        ({"no_such_key": 1}, 400, "invalid"),
        ({"jobs": {"nope": {"enabled": True}}}, 400, "invalid"),
        ({"quality_ranking": "yes"}, 400, "invalid"),
    ],
)
def test_a_bad_policy_change_is_refused_and_nothing_is_filed(
    api, scoped_reviewer, policy, status, code
):
    r = file(api, scoped_reviewer, policy)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert api.as_(scoped_reviewer).get("/api/v1/proposals?kind=policy").json()["items"] == []


def test_a_change_to_the_values_already_held_is_a_noop(api, scoped_reviewer, reviewer):
    api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"quality_ranking": True}})
    r = file(api, scoped_reviewer, {"quality_ranking": True})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "noop_rewrite"


def test_a_second_open_change_of_the_same_keys_is_a_duplicate(api, scoped_reviewer, other_reviewer):
    first = file(api, scoped_reviewer).json()
    again = file(api, other_reviewer, {"jobs": {"promotion": {"enabled": True}}})
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == "duplicate_proposal"
    assert again.json()["error"]["details"]["proposal"] == first["id"]
    other_keys = file(api, other_reviewer, {"quality_ranking": True})
    assert other_keys.status_code == 201, other_keys.text


def test_lowering_approvals_and_enabling_l1_are_flagged(api, scoped_reviewer, reviewer):
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"approvals_required": {"consolidation": 2}}}
    )
    p = file(
        api, scoped_reviewer, {"approvals_required": {"consolidation": 1}, "l1_enabled": True}
    ).json()
    checks = {c["code"]: c["status"] for c in p["verification"]["checks"]}
    assert checks["approvals_lowered"] == "warn"
    assert checks["l1_enabled"] == "warn"
    assert p["payload"]["before"] == {"approvals_required": {"consolidation": 2}}
