"""Approval, rejection and compensation through HTTP: the only path to a Revision."""

from __future__ import annotations

from memory.models import AuditEvent, Head, Revision
from proposals.models import Proposal
from review.models import Compensation, Decision, MaintenanceOperation
from tests.factories import add_via_api
from tests.review.conftest import submit

E = "/api/v1/memories/acme/entries"


def recall(api, query: str) -> list[str]:
    r = api.post("/api/v1/memories/acme/search", {"query": query, "limit": 10})
    assert r.status_code == 200, r.text
    return [h["entry_id"] for h in r.json()["hits"]]


def approve(api, pid: int, **body):
    return api.post(f"/api/v1/proposals/{pid}/approve", body)


def acknowledged(api, pid: int) -> list[str]:
    """Every lost detail of the proposal, as a reviewer ticks them."""
    lost = api.get(f"/api/v1/proposals/{pid}").json()["verification"]["lost_details"]
    return [d["text"] for d in lost]


def test_consolidation_approval_writes_one_revision_and_one_operation(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    a, b = consolidation["a"], consolidation["b"]
    assert set(recall(ag, "deploy 02:00 UTC")) == {a, b}
    head_before = Revision.objects.count()
    r = approve(rv, pid, comment="Same fact")
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "approved"
    assert Revision.objects.count() == head_before + 1
    revision = Revision.objects.get(number=out["revision"])
    assert revision.kind == "consolidate" and revision.proposal_id == pid
    assert revision.operation_id == out["operation"]
    assert MaintenanceOperation.objects.count() == 1
    target = ag.get(f"{E}/{a}").json()
    assert target["version"] == 2
    assert target["body"] == "Deploys run nightly at 02:00 UTC via deploy.sh"
    assert {(e["source"], e["ref"]) for e in target["evidence"]} == {
        ("repo", "deploy.sh"),
        ("chat", "msg-1"),
    }
    redundant = ag.get(f"{E}/{b}").json()
    assert redundant["state"] == "inactive"
    assert redundant["lifecycle"]["validity_reason"] == f"consolidated_into:{a}"
    assert redundant["lifecycle"]["successor_entry"] == a
    assert recall(ag, "deploy 02:00 UTC") == [a]
    op = ag.get(f"/api/v1/operations/{out['operation']}").json()
    assert op["pre_state"][0]["entry_id"] == a and op["pre_state"][0]["version"] == 1
    assert op["produced"]["relations"] == [
        {"kind": "consolidated_into", "from_entry": b, "to_entry": a}
    ]
    assert op["irreversible_effects"]
    assert AuditEvent.objects.filter(action="proposal.approved", proposal_id=pid).count() == 1


def test_compensation_restores_exact_prior_heads_and_recall(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    b = consolidation["b"]
    heads_before = {
        h.entry.uid: (h.version_id, h.state) for h in Head.objects.select_related("entry")
    }
    recall_before = recall(ag, "deploy 02:00 UTC")
    op_id = approve(rv, pid).json()["operation"]
    r = rv.post(f"/api/v1/operations/{op_id}/compensate", {"comment": "Merged too eagerly"})
    assert r.status_code == 200, r.text
    heads_after = {
        h.entry.uid: (h.version_id, h.state) for h in Head.objects.select_related("entry")
    }
    assert heads_after == heads_before
    assert sorted(recall(ag, "deploy 02:00 UTC")) == sorted(recall_before)
    assert Revision.objects.get(number=r.json()["revision"]).kind == "compensate"
    assert Proposal.objects.get(pk=pid).status == "compensated"
    assert ag.get(f"{E}/{b}").json()["lifecycle"]["validity"] == "current"
    again = rv.post(f"/api/v1/operations/{op_id}/compensate", {"comment": "undo"})
    assert again.status_code == 409
    assert Compensation.objects.count() == 1


def test_compensation_refused_when_entries_moved_on(ag, rv, consolidation):
    op_id = approve(rv, consolidation["proposal"]["id"]).json()["operation"]
    ag.post(
        f"{E}/{consolidation['a']}/revise",
        {"body": "Deploys run nightly at 03:00 UTC via deploy.sh"},
    )
    count = Revision.objects.count()
    r = rv.post(f"/api/v1/operations/{op_id}/compensate", {"comment": "undo"})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "compensation_conflict"
    assert r.json()["error"]["details"]["moved"][0]["entry_id"] == consolidation["a"]
    assert Revision.objects.count() == count


def test_supersession_approval_and_compensation(ag, rv):
    old = add_via_api(ag, "The deploy target is eu-2", current_state=True, dedupe=False)["entry_id"]
    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved to eu-3 in October",
            "old": {"entry_id": old, "version": 1},
            "successor": {
                "body": "The deploy target is eu-3",
                "kind": "fact",
                "evidence": [{"source": "repo", "ref": "deploy/prod.yaml"}],
            },
        },
    )
    r = approve(rv, p["id"], acknowledge_lost_details=acknowledged(rv, p["id"]))
    assert r.status_code == 200, r.text
    old_now = ag.get(f"{E}/{old}").json()
    assert old_now["state"] == "active"
    assert old_now["lifecycle"]["validity"] == "superseded"
    successor = old_now["lifecycle"]["successor_entry"]
    assert ag.get(f"{E}/{successor}").json()["body"] == "The deploy target is eu-3"
    assert recall(ag, "deploy target") == [successor]
    assert Revision.objects.get(number=r.json()["revision"]).kind == "supersede"
    c = rv.post(f"/api/v1/operations/{r.json()['operation']}/compensate", {"comment": "undo"})
    assert c.status_code == 200, c.text
    assert ag.get(f"{E}/{old}").json()["lifecycle"]["validity"] == "current"
    assert recall(ag, "deploy target") == [old]


def test_promotion_approval(ag, rv):
    n1 = add_via_api(
        ag,
        "Working note: scheduler lease is 30s",
        kind="working_note",
        tier="session",
        session_id="s1",
        dedupe=False,
    )["entry_id"]
    n2 = add_via_api(
        ag,
        "Working note: the scheduler lease of 30s keeps expiring",
        kind="working_note",
        tier="session",
        session_id="s2",
        dedupe=False,
    )["entry_id"]
    p = submit(
        ag,
        {
            "kind": "promotion",
            "rationale": "Seen in two sessions",
            "notes": [{"entry_id": n1, "version": 1}, {"entry_id": n2, "version": 1}],
            "target_kind": "fact",
            "body": "The scheduler lease is 30s and keeps expiring under load; working note from sessions",
        },
    )
    ack = p["verification"]["lost_details"]
    r = approve(
        rv,
        p["id"],
        acknowledge_lost_details=[d["text"] for d in ack],
    )
    assert r.status_code == 200, r.text
    for n in (n1, n2):
        note = ag.get(f"{E}/{n}").json()
        assert note["state"] == "inactive"
        assert note["state_reason"].startswith("promoted:")
    promoted = ag.get(f"{E}/{n1}").json()["lifecycle"]["successor_entry"]
    entry = ag.get(f"{E}/{promoted}").json()
    assert entry["tier"] == "long" and entry["kind"] == "fact"


def test_cleanup_approval(ag, rv):
    ids = [
        add_via_api(
            ag, f"Scratch note {i} about the build cache", kind="working_note", dedupe=False
        )["entry_id"]
        for i in range(3)
    ]
    p = submit(
        ag,
        {
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": i, "version": 1} for i in ids],
        },
    )
    r = approve(rv, p["id"])
    assert r.status_code == 200, r.text
    for i in ids:
        e = ag.get(f"{E}/{i}").json()
        assert e["state"] == "inactive" and e["lifecycle"]["auto_action_reason"] == "cleanup:v1"
    assert Revision.objects.get(number=r.json()["revision"]).kind == "cleanup"


def test_rejection_needs_reason_and_comment_and_submitter_reads_both(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    assert rv.post(f"/api/v1/proposals/{pid}/reject", {"reason": "wrong"}).status_code == 400
    assert (
        rv.post(f"/api/v1/proposals/{pid}/reject", {"reason": "nope", "comment": "x"}).status_code
        == 400
    )
    count = Revision.objects.count()
    r = rv.post(
        f"/api/v1/proposals/{pid}/reject",
        {"reason": "insufficient_evidence", "comment": "Cite the cron file"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "rejected"
    seen = ag.get(f"/api/v1/proposals/{pid}").json()
    assert seen["status"] == "rejected"
    assert "insufficient_evidence" in str(seen) and "Cite the cron file" in str(seen)
    assert Revision.objects.count() == count


def test_refusals_change_nothing(api, ag, rv, auditor, consolidation, lossy):
    pid = consolidation["proposal"]["id"]
    count = Revision.objects.count()
    # Agents and auditors never approve.
    r = approve(ag, pid)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    r = approve(api.as_(auditor), pid)
    assert r.status_code == 403
    # Lost details must each be acknowledged.
    lp = lossy["proposal"]["id"]
    r = approve(rv, lp)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == "details_not_acknowledged"
    assert {"02:00", "deploy.sh"} <= set(err["details"]["lost_details"])
    r = approve(rv, lp, acknowledge_lost_details=["02:00"])
    assert r.status_code == 422
    assert Revision.objects.count() == count
    assert Decision.objects.count() == 0
    assert Proposal.objects.get(pk=pid).status == "pending"


def test_self_approval_is_refused(api, memory):
    from tests.conftest import make_key

    key = make_key("self-reviewer", "reviewer", owner=None)
    agent_key = make_key("robot", "agent")
    a = add_via_api(api.as_(agent_key), "Cache TTL is 60 seconds", dedupe=False)["entry_id"]
    b = add_via_api(api.as_(agent_key), "The cache TTL is 60 seconds", dedupe=False)["entry_id"]
    # A reviewer-role key cannot submit (only writers may), so self is checked via the owner:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("sam", password="pw-sam-1234")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    owned_agent = make_key("sams-agent", "agent", owner="sam")
    sams_reviewer = make_key("sams-reviewer", "reviewer", owner="sam")
    p = submit(
        api.as_(owned_agent),
        {
            "kind": "consolidation",
            "rationale": "dup",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "The cache TTL is 60 seconds",
        },
    )
    r = approve(api.as_(sams_reviewer), p["id"])
    assert r.status_code == 403, r.text
    assert r.json()["error"]["code"] == "self_approval"
    assert approve(api.as_(key), p["id"]).status_code == 200


def test_already_decided_names_who_and_when(ag, rv, rv2, consolidation):
    pid = consolidation["proposal"]["id"]
    assert approve(rv, pid).status_code == 200
    r = approve(rv2, pid)
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "already_decided"
    assert err["details"]["decided_by"] == "rita-key"
    assert err["details"]["decided_at"]
    r = rv2.post(f"/api/v1/proposals/{pid}/reject", {"reason": "wrong", "comment": "late"})
    assert r.status_code == 409


def test_stale_proposal_cannot_be_approved(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 02:30 UTC"})
    count = Revision.objects.count()
    r = approve(rv, pid)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "stale_proposal"
    assert Revision.objects.count() == count


def test_policy_can_require_two_distinct_approvals(ag, rv, rv2, reviewer, consolidation):
    rv.patch("/api/v1/memories/acme", {"policy": {"approvals_required": {"consolidation": 2}}})
    pid = consolidation["proposal"]["id"]
    count = Revision.objects.count()
    first = approve(rv, pid)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "pending" and first.json()["approvals"] == 1
    assert Revision.objects.count() == count
    assert approve(rv, pid).status_code == 409  # the same reviewer twice does not count
    second = approve(rv2, pid)
    assert second.json()["status"] == "approved"
    assert Revision.objects.count() == count + 1


def test_unknown_or_out_of_scope_proposal_is_404(api, rv, consolidation, other_memory):
    from tests.conftest import make_key

    assert approve(rv, 999999).status_code == 404
    elsewhere = api.as_(make_key("other-team-reviewer", "reviewer", memories=("other",)))
    r = approve(elsewhere, consolidation["proposal"]["id"])
    assert r.status_code == 404, r.text
    assert Proposal.objects.get(pk=consolidation["proposal"]["id"]).status == "pending"


def test_decision_notifies_the_submitter_not_the_decider(api, rv, memory, mailoutbox):
    from django.contrib.auth.models import User

    from tests.conftest import make_key

    User.objects.create_user("owner", email="owner@example.com", password="pw-owner-123")
    robot = api.as_(make_key("owned-robot", "agent", owner="owner"))
    a = add_via_api(robot, "Alerts page the on-call phone", dedupe=False)["entry_id"]
    b = add_via_api(robot, "Alerts page the on-call phone number", dedupe=False)["entry_id"]
    p = submit(
        robot,
        {
            "kind": "consolidation",
            "rationale": "dup",
            "target": {"entry_id": b, "version": 1},
            "redundant": [{"entry_id": a, "version": 1}],
            "body": "Alerts page the on-call phone number",
        },
    )
    mailoutbox.clear()
    r = rv.post(f"/api/v1/proposals/{p['id']}/reject", {"reason": "other", "comment": "Keep both"})
    assert r.status_code == 200, r.text
    assert [m.to for m in mailoutbox] == [["owner@example.com"]]
    assert "rejected" in mailoutbox[0].subject and "Keep both" in mailoutbox[0].body


def test_new_proposal_notifies_reviewers_but_not_the_submitters_owner(api, memory, mailoutbox):
    from django.contrib.auth.models import Group, User

    from tests.conftest import make_key

    reviewers = Group.objects.get_or_create(name="reviewer")[0]
    for name in ("rev-a", "rev-b"):
        User.objects.create_user(
            name, email=f"{name}@example.com", password="pw-123456"
        ).groups.add(reviewers)
    # The agent's owner is also a reviewer: they acted (through their key), so no mail for them.
    User.objects.get(username="rev-b")
    robot = api.as_(make_key("b-robot", "agent", owner="rev-b"))
    a = add_via_api(robot, "Queue workers restart nightly", dedupe=False)["entry_id"]
    b = add_via_api(robot, "Queue workers are restarted every night", dedupe=False)["entry_id"]
    mailoutbox.clear()
    submit(
        robot,
        {
            "kind": "consolidation",
            "rationale": "dup",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "Queue workers restart nightly",
        },
    )
    assert sorted(m.to[0] for m in mailoutbox) == ["rev-a@example.com"]
    assert "consolidation" in mailoutbox[0].subject


def test_a_failing_webhook_never_fails_a_committed_decision(ag, rv, consolidation, monkeypatch):
    from review import tasks
    from review.models import Notification

    def refuse(url, payload):
        raise OSError("connection refused")

    monkeypatch.setattr(tasks, "post_webhook", refuse)
    rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": "https://hooks.example.com/x"}})
    pid = consolidation["proposal"]["id"]
    r = approve(rv, pid)
    assert r.status_code == 200, r.text
    assert Proposal.objects.get(pk=pid).status == "approved"
    hook = Notification.objects.get(proposal_id=pid, channel="webhook")
    assert hook.sent_at is None
    assert hook.attempts >= 1 and "connection refused" in hook.last_error


def test_webhooks_are_signed(consolidation, rv, monkeypatch):
    import hashlib
    import hmac
    import json

    from django.conf import settings

    from review import tasks

    seen = {}

    def fake_post_json(url, body, headers, *, timeout):
        # The network boundary: the send-time address check and the socket live in post_json.
        seen["body"] = body
        seen["signature"] = headers["X-Steward-Signature"]
        return 204

    monkeypatch.setattr(tasks, "post_json", fake_post_json)
    rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": "https://hooks.example.com/x"}})
    assert approve(rv, consolidation["proposal"]["id"]).status_code == 200
    key = (settings.WEBHOOK_SIGNING_KEY or settings.SECRET_KEY).encode()
    expected = "sha256=" + hmac.new(key, seen["body"], hashlib.sha256).hexdigest()
    assert seen["signature"] == expected
    assert json.loads(seen["body"])["event"] == "proposal.approved"


def test_approval_rechecks_the_pre_state_itself_when_a_head_moved_outside_the_writer(
    ag, rv, consolidation
):
    """The staleness hook only sees changes made by the revision writer. A head changed any
    other way (an operator's repair, a restored backup) is still caught at approval: the
    approval re-reads every affected head under the lock, refuses with 409 and marks the
    proposal stale, and nothing is written."""
    pid = consolidation["proposal"]["id"]
    b = consolidation["b"]
    Head.objects.filter(entry__uid=b).update(state="inactive", state_reason="operator repair")
    assert Proposal.objects.get(pk=pid).status == "pending"
    revisions = Revision.objects.count()
    r = approve(rv, pid)
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "stale_proposal"
    assert error["details"]["moved"] == [
        {
            "entry_id": b,
            "expected": {"version": 1, "state": "active"},
            "actual": {"version": 1, "state": "inactive"},
            "revision": Head.objects.get(entry__uid=b).revision.number,
        }
    ]
    proposal = Proposal.objects.get(pk=pid)
    assert proposal.status == "stale" and proposal.stale_revision is not None
    assert Revision.objects.count() == revisions
    assert not MaintenanceOperation.objects.exists()
    assert not Decision.objects.filter(proposal_id=pid).exists()
    stale = AuditEvent.objects.get(action="proposal.stale", proposal_id=pid)
    assert stale.payload["detected_by"] == "approval"
    assert approve(rv, pid).json()["error"]["code"] == "stale_proposal"


def test_irreversible_effects_are_specific_to_the_kind_and_to_what_happened(
    ag, rv, consolidation, monkeypatch
):
    """The operation lists what compensation cannot take back: the consolidation's own effect
    (naming its entries and its revision), then what happened after the approval — the
    webhook that went out, and which affected entries recall served since."""
    from memory import recall_events
    from review import tasks

    monkeypatch.setattr(tasks, "post_json", lambda url, body, headers, *, timeout: 204)
    policy = {"webhook_url": "https://hooks.example.com/x", "recall_events": True}
    assert rv.patch("/api/v1/memories/acme", {"policy": policy}).status_code == 200
    pid = consolidation["proposal"]["id"]
    a, b = consolidation["a"], consolidation["b"]
    out = approve(rv, pid).json()
    op_url = f"/api/v1/operations/{out['operation']}"
    effects = rv.get(op_url).json()["irreversible_effects"]
    assert effects[0].startswith(
        f"While it is in force, current recall and Context Packs return {a}"
    )
    assert f"in place of {b}" in effects[0]
    assert f"Revision r{out['revision']} stays in the append-only history" in effects[1]
    assert effects[2:] == [
        "1 notification about this approval went out (webhook ×1); they cannot be withdrawn."
    ]
    assert not any("superseded" in e or "candidate" in e for e in effects)

    recall_events.flush()
    assert recall(ag, "deploy 02:00 UTC") == [a]
    recall_events.flush()
    served = rv.get(op_url).json()["irreversible_effects"]
    assert len(served) == len(effects) + 1
    assert served[-1].startswith(f"Recall served {a} (last ")
    assert served[-1].endswith("after the approval; those reads are not repeated.")


def test_without_recall_events_the_operation_says_recall_is_not_recorded(ag, rv, consolidation):
    out = approve(rv, consolidation["proposal"]["id"]).json()
    effects = rv.get(f"/api/v1/operations/{out['operation']}").json()["irreversible_effects"]
    assert any("policy.recall_events is off" in e for e in effects)
    assert not any("notification" in e for e in effects)  # no owner e-mail, no webhook


def test_a_supersession_names_the_superseded_entry_and_the_successor_it_created(ag, rv):
    old = add_via_api(ag, "The on-call rotation changes every Monday", current_state=True)
    p = submit(
        ag,
        {
            "kind": "supersession",
            "old": {"entry_id": old["entry_id"], "version": 1},
            "successor": {"body": "The on-call rotation changes every Wednesday", "kind": "fact"},
            "rationale": "Rotation day moved",
            "evidence": [{"source": "chat", "ref": "msg-9"}],
        },
    )
    out = approve(rv, p["id"], acknowledge_lost_details=acknowledged(rv, p["id"])).json()
    effects = rv.get(f"/api/v1/operations/{out['operation']}").json()["irreversible_effects"]
    assert effects[0].startswith(
        f"While it is in force, recall labels {old['entry_id']} superseded"
    )
    created = MaintenanceOperation.objects.get(pk=out["operation"]).produced["created_entries"]
    assert len(created) == 1
    assert effects[1].startswith(f"{created[0]} created by this approval: compensation retires it")


def test_a_compensation_needs_a_reason(ag, rv, consolidation):
    op_id = approve(rv, consolidation["proposal"]["id"]).json()["operation"]
    for body in ({}, {"comment": "   "}):
        r = rv.post(f"/api/v1/operations/{op_id}/compensate", body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid", r.text
        assert "comment" in r.json()["error"]["details"]
    assert not Compensation.objects.exists()
    assert rv.post(f"/api/v1/operations/{op_id}/compensate", {"comment": "Wrong merge"}).ok
    assert Compensation.objects.get().comment == "Wrong merge"


def test_a_role_that_may_never_decide_is_refused_before_its_body(
    api, ag, rv, consolidation, auditor
):
    """An agent or auditor deciding, assigning or compensating is told 403 ``forbidden``, not
    which fields such a request would need (as bulk decisions and entry writes do)."""
    pid = consolidation["proposal"]["id"]
    op_id = approve(rv, pid).json()["operation"]
    forbidden = {"code": "forbidden"}
    for client in (ag, api.as_(auditor)):
        for path, body in [
            (f"/api/v1/proposals/{pid}/approve", {"colour": "blue"}),
            (f"/api/v1/proposals/{pid}/reject", {}),
            (f"/api/v1/proposals/{pid}/request-changes", {}),
            (f"/api/v1/proposals/{pid}/assign", {}),
            (f"/api/v1/operations/{op_id}/compensate", {}),
        ]:
            r = client.post(path, body)
            assert r.status_code == 403, (path, r.text)
            assert {"code": r.json()["error"]["code"]} == forbidden, (path, r.text)
            assert r.json()["error"]["details"] == {}, (path, r.text)
    assert Compensation.objects.count() == 0
    # An operation outside the key's view is still not found first.
    r = ag.post("/api/v1/operations/999999/compensate", {})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text


def test_the_submitter_reads_the_operation_its_approved_proposal_performed(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    assert ag.get(f"/api/v1/proposals/{pid}").json()["operation"] is None
    out = approve(rv, pid).json()
    applied = {"id": out["operation"], "revision": out["revision"], "compensation_revision": None}
    assert ag.get(f"/api/v1/proposals/{pid}").json()["operation"] == applied
    listed = ag.get("/api/v1/proposals?status=approved").json()["items"]
    assert [(p["id"], p["operation"]) for p in listed] == [(pid, applied)]
    undone = rv.post(f"/api/v1/operations/{out['operation']}/compensate", {"comment": "undo"})
    assert undone.status_code == 200, undone.text
    read = ag.get(f"/api/v1/proposals/{pid}").json()
    assert read["status"] == "compensated"
    assert read["operation"] == {**applied, "compensation_revision": undone.json()["revision"]}


def test_a_reviewer_closes_a_stale_proposal_and_it_leaves_the_queue(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 02:30 UTC"})
    assert rv.get(f"/api/v1/proposals/{pid}").json()["status"] == "stale"
    count = Revision.objects.count()
    r = rv.post(
        f"/api/v1/proposals/{pid}/reject", {"reason": "other", "comment": "Closed as stale"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "rejected"
    p = rv.get(f"/api/v1/proposals/{pid}").json()
    assert p["decision"]["rejection_reason"] == "other"
    assert p["decision"]["comment"] == "Closed as stale"
    assert Revision.objects.count() == count  # nothing but the decision is written
    assert pid not in [x["id"] for x in rv.get("/api/v1/proposals?status=stale").json()["items"]]
    # Decided once: a second close is 409.
    again = rv.post(f"/api/v1/proposals/{pid}/reject", {"reason": "other", "comment": "again"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"


def test_the_submitter_of_a_stale_proposal_cannot_close_it_as_a_reviewer(ag, rv, consolidation):
    pid = consolidation["proposal"]["id"]
    ag.post(f"{E}/{consolidation['b']}/revise", {"body": "Deploys run nightly at 02:30 UTC"})
    r = ag.post(f"/api/v1/proposals/{pid}/reject", {"reason": "other", "comment": "mine"})
    assert r.status_code == 403, r.text
