"""Every memory action, driven over real HTTP, writes exactly its documented audit events with
the right actor, and every record of one request shares the request's correlation id (made by
the server and returned as ``X-Request-ID``; a caller's own ``X-Request-ID`` is only echoed back
as ``X-Client-Request-ID`` and never recorded).

The documented events (``docs/audit.md``):

=========================================  ==================================================
request                                    events
=========================================  ==================================================
POST /memories                             memory.created
PATCH /memories/{slug}                     memory.policy_changed
POST /sources                              source.registered
POST /sources/{name}/declarations          source.declared
POST .../entries (new)                     entry.added (+ its revision); a near-duplicate adds
                                           relation.observed; a duplicate also
                                           proposal.submitted (system consolidation)
POST .../entries (exact duplicate)         nothing
POST .../entries/{id}/revise               entry.revised (+ its revision); nothing if no-op;
                                           proposal.stale for each pending proposal it moves
POST .../entries/{id}/forget               entry.forgotten (+ its revision)
POST .../entries/{id}/reactivate           entry.reactivated (+ its revision)
POST .../entries/{id}/pin                  entry.pinned (+ its revision)
POST .../entries/{id}/quarantine           entry.quarantined (+ its revision)
POST .../entries/{id}/release              entry.released (+ its revision)
POST .../sessions/{id}/end                 session.ended (+ one revision for all entries)
POST .../relations                         relation.observed (no revision)
POST /proposals                            proposal.submitted
POST /proposals/{id}/withdraw              proposal.withdrawn
POST /proposals/{id}/comments              proposal.commented (no revision)
POST /proposals/{id}/comments/{c}/resolve  proposal.comment_resolved (no revision)
POST /proposals/{id}/assign                proposal.assigned (no revision)
POST /proposals/{id}/request-changes       proposal.changes_requested (no revision)
POST /proposals/{id}/amend                 proposal.amended (no revision)
POST /proposals/{id}/approve               proposal.approved (+ revision, operation)
POST /proposals/{id}/reject                proposal.rejected (no revision)
POST /proposals/bulk                       each proposal's own approval or rejection events
POST /operations/{id}/compensate           operation.compensated (+ its revision)
manage.py issue_api_key                    key.issued (actor: system)
any refused request (4xx)                  nothing
=========================================  ==================================================
"""

from __future__ import annotations

import uuid

import pytest
from django.core.management import call_command

from memory.models import AuditEvent, Revision
from tests.factories import add_via_api

E = "/api/v1/memories/acme/entries"


def rid() -> str:
    return "req-" + uuid.uuid4().hex[:12]


def send(client, method: str, path: str, body=None, expect=(200, 201)):
    sent = rid()
    r = client.request(method, path, json=body, headers={"X-Request-ID": sent})
    assert r.status_code in expect, (r.status_code, r.text)
    cid = r.headers["X-Request-ID"]
    assert cid != sent and r.headers["X-Client-Request-ID"] == sent
    assert not events(sent)
    return cid, r


def events(cid: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(correlation_id=cid).order_by("id"))


def actions_of(cid: str) -> list[str]:
    return [e.action for e in events(cid)]


@pytest.fixture
def a(api, agent):
    return api.as_(agent)


@pytest.fixture
def r(api, reviewer):
    return api.as_(reviewer)


def assert_actor(event: AuditEvent, key, type_: str) -> None:
    assert event.actor_type == type_
    assert event.actor_id == key.actor.id
    assert event.actor_label == key.key.name
    assert event.on_behalf_of == key.actor.on_behalf_of


def test_add_writes_entry_added_with_its_revision_under_the_request_id(a, agent):
    cid, resp = send(a, "POST", E, {"body": "Backups run at 03:00 UTC", "kind": "fact"})
    [event] = events(cid)
    body = resp.json()
    assert event.action == "entry.added"
    assert_actor(event, agent, "agent")
    assert event.memory_label == "acme"
    assert event.revision_number == body["revision"]
    assert event.entry_ids == [body["entry_id"]]
    assert event.label == "Backups run at 03:00 UTC"
    assert event.payload["version"] == 1 and event.payload["kind"] == "fact"
    assert list(Revision.objects.filter(correlation_id=cid).values_list("number", flat=True)) == [
        body["revision"]
    ]


def test_each_entry_write_writes_exactly_its_event(a, agent):
    first = add_via_api(a, "The cache TTL is 300 seconds", current_state=True)
    uid = first["entry_id"]
    cases = [
        ("POST", f"{E}/{uid}/revise", {"body": "The cache TTL is 600 seconds"}, "entry.revised"),
        ("POST", f"{E}/{uid}/forget", {"reason": "cache removed"}, "entry.forgotten"),
        ("POST", f"{E}/{uid}/reactivate", {"reason": "cache is back"}, "entry.reactivated"),
    ]
    for method, path, body, action in cases:
        cid, _ = send(a, method, path, body)
        [event] = events(cid)
        assert event.action == action
        assert_actor(event, agent, "agent")
        assert event.entry_ids == [uid]
        revision = Revision.objects.get(correlation_id=cid)
        assert event.revision_number == revision.number
        assert revision.actor_id == agent.actor.id
    forgotten = AuditEvent.objects.get(action="entry.forgotten")
    assert forgotten.payload == {"version": 2, "reason": "cache removed"}
    revised = AuditEvent.objects.get(action="entry.revised")
    assert revised.payload == {"from_version": 1, "to_version": 2}


def test_pin_by_a_reviewer_key_is_a_human_acting_for_its_owner(a, r, reviewer):
    uid = add_via_api(a, "Never store card numbers", kind="constraint")["entry_id"]
    cid, _ = send(
        r,
        "POST",
        f"{E}/{uid}/pin",
        {"pinned": True, "category": "legal_constraint", "reason": "PCI"},
    )
    [event] = events(cid)
    assert event.action == "entry.pinned"
    assert_actor(event, reviewer, "human")
    assert event.on_behalf_of.startswith("user:")
    assert event.payload == {"pinned": True, "pin_category": "legal_constraint", "reason": "PCI"}


def test_ending_a_session_is_one_event_and_one_revision_for_all_its_entries(a, agent):
    uids = [
        add_via_api(a, f"Scratch note {i}", kind="working_note", tier="session", session_id="s-9")[
            "entry_id"
        ]
        for i in range(3)
    ]
    cid, _ = send(a, "POST", "/api/v1/memories/acme/sessions/s-9/end")
    [event] = events(cid)
    assert event.action == "session.ended"
    assert sorted(event.entry_ids) == sorted(uids)
    assert event.payload == {"session_id": "s-9", "retired": 3}
    assert Revision.objects.filter(correlation_id=cid).count() == 1


def test_a_conflict_observation_is_an_event_without_a_revision(a):
    x = add_via_api(a, "The API rate limit is 100 rps")["entry_id"]
    y = add_via_api(a, "The API rate limit is 250 rps")["entry_id"]
    cid, _ = send(
        a,
        "POST",
        "/api/v1/memories/acme/relations",
        {"kind": "conflicts_with", "from_entry": x, "to_entry": y},
    )
    [event] = events(cid)
    assert event.action == "relation.observed"
    assert event.entry_ids == [x, y] and event.revision_number is None
    assert not Revision.objects.filter(correlation_id=cid).exists()


def test_memory_policy_and_source_writes(api, r, a, reviewer, agent):
    cid, _ = send(r, "POST", "/api/v1/memories", {"slug": "ops", "name": "Ops"})
    [created] = events(cid)
    assert (created.action, created.memory_label, created.label) == ("memory.created", "ops", "Ops")
    assert_actor(created, reviewer, "human")
    cid, _ = send(r, "PATCH", "/api/v1/memories/ops", {"policy": {"quality_ranking": True}})
    [changed] = events(cid)
    assert changed.action == "memory.policy_changed"
    assert changed.payload == {"before": {}, "after": {"quality_ranking": True}}
    cid, _ = send(a, "POST", "/api/v1/sources", {"name": "tickets"})
    [registered] = events(cid)
    assert registered.action == "source.registered" and registered.memory_id is None
    assert_actor(registered, agent, "agent")
    cid, _ = send(
        r,
        "POST",
        "/api/v1/sources/tickets/declarations",
        {"authority": "system_attested", "verification": "verified"},
    )
    [declared] = events(cid)
    assert declared.action == "source.declared" and declared.payload["version"] == 1


def test_noops_and_refusals_write_no_events(api, a, auditor):
    uid = add_via_api(a, "Logs are kept for 30 days")["entry_id"]
    count = AuditEvent.objects.count()
    send(a, "POST", E, {"body": "Logs are kept for 30 days", "kind": "fact"}, expect=(200,))
    send(a, "POST", f"{E}/{uid}/revise", {"body": "Logs are kept for 30 days"}, expect=(200,))
    send(a, "POST", f"{E}/{uid}/reactivate", {}, expect=(409,))
    send(api.as_(auditor), "POST", f"{E}/{uid}/forget", {"reason": "x"}, expect=(403,))
    send(a, "POST", E, {"body": "token=ghp_" + "a" * 36, "kind": "fact"}, expect=(422,))
    assert AuditEvent.objects.count() == count


def test_without_a_request_id_one_is_generated_echoed_and_recorded(a):
    r = a.post(E, {"body": "Alerts page the on-call phone", "kind": "fact"})
    cid = r.headers["X-Request-ID"]
    assert len(cid) == 32
    assert actions_of(cid) == ["entry.added"]
    bad = a.post(
        E, {"body": "Alerts go to #ops", "kind": "fact"}, headers={"X-Request-ID": "bad id!"}
    )
    assert bad.headers["X-Request-ID"] != "bad id!"
    assert actions_of(bad.headers["X-Request-ID"]) == ["entry.added"]


def test_two_requests_never_share_a_correlation_id(a):
    first = a.post(E, {"body": "Fact one for correlation", "kind": "fact"})
    second = a.post(E, {"body": "Fact two for correlation", "kind": "fact"})
    assert first.headers["X-Request-ID"] != second.headers["X-Request-ID"]


@pytest.mark.django_db(transaction=True)
def test_issuing_a_key_is_recorded_as_the_system(memory, capsys):
    call_command("issue_api_key", "--name", "ci-bot", "--role", "agent", "--memory", "acme")
    event = AuditEvent.objects.filter(action="key.issued").latest("id")
    assert event.actor_type == "system" and event.actor_id == "system"
    assert event.label == "ci-bot"
    assert event.payload["role"] == "agent" and event.payload["memories"] == ["acme"]
    secret = capsys.readouterr().out.strip()
    prefix, _, hidden = secret.partition(".")
    assert event.payload["prefix"] == prefix
    assert hidden and hidden not in str(event.payload) and hidden not in event.label


def test_a_near_duplicate_add_also_records_the_observation_in_the_same_request(a, agent):
    first = add_via_api(a, "Deploys run nightly at 02:00 UTC via deploy.sh")["entry_id"]
    cid, resp = send(
        a,
        "POST",
        E,
        {"body": "Deploys run nightly at 02:00 UTC via deploy.sh on prod", "kind": "fact"},
    )
    added, observed = events(cid)
    assert (added.action, observed.action) == ("entry.added", "relation.observed")
    assert observed.entry_ids == [resp.json()["entry_id"], first]
    assert observed.payload["near_duplicates"][0]["relation"] == "near_duplicate_of"
    assert_actor(observed, agent, "agent")


def test_a_duplicate_add_files_a_consolidation_under_the_same_request_id(a):
    body = "The staging cluster runs Kubernetes 1.29 on three nodes in eu-west-1 with Cilium"
    first = add_via_api(a, body)["entry_id"]
    cid, resp = send(a, "POST", E, {"body": body + " networking", "kind": "fact"})
    got = events(cid)
    assert [e.action for e in got] == ["entry.added", "relation.observed", "proposal.submitted"]
    submitted = got[-1]
    assert submitted.proposal_id is not None
    assert set(submitted.entry_ids) == {first, resp.json()["entry_id"]}
    assert got[1].payload["near_duplicates"][0]["relation"] == "duplicate_of"


@pytest.fixture
def consolidation(a):
    """Two entries and a consolidation proposal of them, over HTTP."""
    x = add_via_api(a, "Deploys run nightly at 02:00 UTC via deploy.sh")["entry_id"]
    y = add_via_api(a, "Nightly deploys start at 02:00 UTC", dedupe=False)["entry_id"]
    cid, resp = send(
        a,
        "POST",
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "the same schedule, twice",
            "target": {"entry_id": x, "version": 1},
            "redundant": [{"entry_id": y, "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    return {"cid": cid, "id": resp.json()["id"], "entries": [x, y]}


def test_submit_approve_and_compensate_each_write_one_event_linked_to_their_records(
    consolidation, r, agent, reviewer
):
    [submitted] = events(consolidation["cid"])
    assert submitted.action == "proposal.submitted"
    assert_actor(submitted, agent, "agent")
    assert submitted.proposal_id == consolidation["id"]
    assert sorted(submitted.entry_ids) == sorted(consolidation["entries"])

    cid, resp = send(r, "POST", f"/api/v1/proposals/{consolidation['id']}/approve", {})
    [approved] = events(cid)
    body = resp.json()
    assert approved.action == "proposal.approved"
    assert_actor(approved, reviewer, "human")
    assert (approved.proposal_id, approved.operation_id, approved.revision_number) == (
        consolidation["id"],
        body["operation"],
        body["revision"],
    )
    revision = Revision.objects.get(correlation_id=cid)
    assert (revision.number, revision.proposal_id, revision.operation_id) == (
        body["revision"],
        consolidation["id"],
        body["operation"],
    )

    cid, resp = send(
        r, "POST", f"/api/v1/operations/{body['operation']}/compensate", {"comment": "undo"}
    )
    [compensated] = events(cid)
    assert compensated.action == "operation.compensated"
    assert compensated.operation_id == body["operation"]
    assert compensated.revision_number == Revision.objects.get(correlation_id=cid).number


def test_reject_writes_one_event_and_no_revision(consolidation, r, reviewer):
    cid, _ = send(
        r,
        "POST",
        f"/api/v1/proposals/{consolidation['id']}/reject",
        {"reason": "wrong", "comment": "these are different schedules"},
    )
    [rejected] = events(cid)
    assert rejected.action == "proposal.rejected"
    assert_actor(rejected, reviewer, "human")
    assert rejected.proposal_id == consolidation["id"]
    assert not Revision.objects.filter(correlation_id=cid).exists()


def test_withdraw_writes_one_event(consolidation, a, agent):
    cid, _ = send(a, "POST", f"/api/v1/proposals/{consolidation['id']}/withdraw", {})
    [withdrawn] = events(cid)
    assert withdrawn.action == "proposal.withdrawn"
    assert_actor(withdrawn, agent, "agent")


def test_a_revision_that_moves_a_proposed_entry_marks_the_proposal_stale_in_the_same_request(
    consolidation, a
):
    x = consolidation["entries"][0]
    cid, _ = send(a, "POST", f"{E}/{x}/revise", {"body": "Deploys run nightly at 03:00 UTC"})
    # The hook inside the revision writer records the stale proposal first.
    assert sorted(actions_of(cid)) == ["entry.revised", "proposal.stale"]
    [stale] = [e for e in events(cid) if e.action == "proposal.stale"]
    assert stale.proposal_id == consolidation["id"]


def test_quarantine_and_release_each_write_one_event_with_their_revision(a, r, reviewer):
    uid = add_via_api(a, "The on-call rota lives in PagerDuty")["entry_id"]
    for action, path in (("entry.quarantined", "quarantine"), ("entry.released", "release")):
        cid, _ = send(r, "POST", f"{E}/{uid}/{path}", {"reason": "checked by hand"})
        [event] = events(cid)
        assert event.action == action
        assert_actor(event, reviewer, "human")
        assert event.entry_ids == [uid]
        assert event.revision_number == Revision.objects.get(correlation_id=cid).number


def test_each_discussion_action_writes_one_event_and_no_revision(
    consolidation, a, r, reviewer, other_reviewer
):
    pid = consolidation["id"]
    cases = [
        (a, "comments", {"body": "Same schedule, see deploy.sh"}, "proposal.commented"),
        (r, "assign", {"reviewer": "ravi"}, "proposal.assigned"),
        (r, "request-changes", {"comment": "Cite the runbook"}, "proposal.changes_requested"),
        (
            a,
            "amend",
            {"rationale": "the same schedule, cited", "comment": "cited"},
            "proposal.amended",
        ),
    ]
    for client, path, body, action in cases:
        cid, _ = send(client, "POST", f"/api/v1/proposals/{pid}/{path}", body)
        assert actions_of(cid) == [action]
        assert events(cid)[0].proposal_id == pid
        assert not Revision.objects.filter(correlation_id=cid).exists()


def test_resolving_a_comment_writes_one_event_and_no_revision(consolidation, a, r, reviewer):
    pid = consolidation["id"]
    _, made = send(a, "POST", f"/api/v1/proposals/{pid}/comments", {"body": "See deploy.sh"})
    cid, _ = send(r, "POST", f"/api/v1/proposals/{pid}/comments/{made.json()['id']}/resolve", {})
    [resolved] = events(cid)
    assert (resolved.action, resolved.proposal_id) == ("proposal.comment_resolved", pid)
    assert_actor(resolved, reviewer, "human")
    assert not Revision.objects.filter(correlation_id=cid).exists()


def test_a_bulk_decision_writes_each_proposals_own_event_under_one_request_id(
    consolidation, r, reviewer
):
    pid = consolidation["id"]
    cid, resp = send(
        r,
        "POST",
        "/api/v1/proposals/bulk",
        {"action": "reject", "ids": [pid], "reason": "wrong", "comment": "different schedules"},
    )
    assert resp.json()["results"] == [{"id": pid, "status": "rejected"}]
    [rejected] = events(cid)
    assert (rejected.action, rejected.proposal_id) == ("proposal.rejected", pid)
    assert_actor(rejected, reviewer, "human")
