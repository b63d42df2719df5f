"""The entry page's reviewer actions: Pin / Unpin, Forget and Reactivate, each with a required
reason, each one revision attributed to the reviewer through the memory actions, audited; auditors
see no buttons and are refused."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lib.errors import Forbidden
from memory import actions
from memory.actors import Actor
from memory.models import AuditEvent, Head, HeadState, Memory, Revision, RevisionKind
from tests.factories import remember
from tests.review_ui.conftest import browser_client

pytestmark = pytest.mark.django_db


def page(uid: str) -> str:
    return f"/memories/acme/entries/{uid}/"


def act(uid: str, what: str) -> str:
    return f"/review/entries/acme/{uid}/{what}/"


def head(uid: str) -> Head:
    return Head.objects.get(entry__uid=uid)


def revisions(memory: Memory) -> int:
    return Revision.objects.filter(memory=memory).count()


def html_of(client: Client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.content[:500]
    return r.content.decode()


def test_a_reviewer_pins_and_unpins_from_the_entry_page(memory, agent, rita):
    uid = remember(memory, agent.actor, "Never store card numbers in memory").entry.uid
    html = html_of(rita, page(uid))
    assert f'action="{act(uid, "pin")}"' in html and 'name="category"' in html
    before = revisions(memory)
    r = rita.post(
        act(uid, "pin"), {"pinned": "true", "category": "safety_policy", "reason": "PCI rule"}
    )
    assert r.status_code == 302 and r["Location"] == page(uid)
    h = head(uid)
    assert h.pinned and h.pin_category == "safety_policy"
    revision = Revision.objects.filter(memory=memory).order_by("-number").first()
    assert revision is not None and revision.kind == RevisionKind.PIN
    assert revision.actor_label == "rita" and revision.reason == "PCI rule"
    event = AuditEvent.objects.filter(action="entry.pinned").get()
    assert event.actor_label == "rita" and event.payload["reason"] == "PCI rule"
    html = html_of(rita, page(uid))
    assert re.search(rf"Entry {uid} pinned \(revision \d+\)\.", html)
    assert "Pinned as safety_policy" in html and 'name="pinned" value="false"' in html

    r = rita.post(act(uid, "pin"), {"pinned": "false", "reason": "the rule moved to the vault"})
    assert r.status_code == 302
    assert not head(uid).pinned
    assert revisions(memory) == before + 2


def test_a_reviewer_forgets_and_reactivates_from_the_entry_page(memory, agent, rita):
    uid = remember(memory, agent.actor, "The staging cluster is k8s-stg-2").entry.uid
    html = html_of(rita, page(uid))
    assert f'action="{act(uid, "forget")}"' in html
    assert f'action="{act(uid, "reactivate")}"' not in html
    version = head(uid).version_id
    before = revisions(memory)
    r = rita.post(act(uid, "forget"), {"reason": "the cluster was decommissioned"})
    assert r.status_code == 302 and r["Location"] == page(uid)
    h = head(uid)
    assert h.state == HeadState.INACTIVE and h.state_reason == "the cluster was decommissioned"
    forget = Revision.objects.filter(memory=memory).order_by("-number").first()
    assert forget is not None and forget.kind == RevisionKind.FORGET
    assert forget.actor_id == f"user:{User.objects.get(username='rita').pk}"
    assert AuditEvent.objects.filter(action="entry.forgotten", actor_label="rita").count() == 1
    html = html_of(rita, page(uid))
    assert re.search(rf"Entry {uid} forgotten \(revision \d+\)\.", html)
    assert f'action="{act(uid, "reactivate")}"' in html
    assert f'action="{act(uid, "forget")}"' not in html

    r = rita.post(act(uid, "reactivate"), {"reason": "it came back for the migration"})
    assert r.status_code == 302
    h = head(uid)
    assert h.state == HeadState.ACTIVE and h.version_id == version
    assert AuditEvent.objects.filter(action="entry.reactivated", actor_label="rita").count() == 1
    assert revisions(memory) == before + 2


@pytest.mark.parametrize(
    ("what", "data"),
    [
        ("pin", {"pinned": "true", "category": "safety_policy", "reason": "  "}),
        ("forget", {"reason": ""}),
        ("reactivate", {"reason": " "}),
    ],
)
def test_every_action_needs_a_reason(memory, agent, staff, rita, what, data):
    uid = remember(memory, agent.actor, "Tickets live in Linear").entry.uid
    if what == "reactivate":
        actions.forget_entry(memory, actor=staff, entry_uid=uid, reason="old")
    before = revisions(memory)
    r = rita.post(act(uid, what), data)
    assert r.status_code == 400, r.content[:300]
    assert 'role="alert">Reason: This field is required.</p>' in r.content.decode()
    assert revisions(memory) == before


def test_refusals_show_the_page_again_with_the_problem(memory, agent, staff, rita):
    uid = remember(memory, agent.actor, "Sprint reviews are on Fridays").entry.uid
    actions.forget_entry(memory, actor=staff, entry_uid=uid, reason="old")
    before = revisions(memory)
    r = rita.post(act(uid, "forget"), {"reason": "again"})
    assert r.status_code == 409
    html = r.content.decode()
    assert "already inactive" in html and ">again</textarea>" in html
    r = rita.post(act(uid, "pin"), {"pinned": "true", "category": "nonsense", "reason": "x"})
    assert r.status_code == 400
    assert rita.post(act("e_missing", "forget"), {"reason": "x"}).status_code == 404
    assert rita.post("/review/entries/nowhere/e_x/pin/", {"reason": "x"}).status_code == 404
    assert revisions(memory) == before


def test_pinning_what_is_already_pinned_changes_nothing(memory, agent, rita):
    uid = remember(memory, agent.actor, "Data stays in the EU").entry.uid
    data = {"pinned": "true", "category": "legal_constraint", "reason": "GDPR"}
    assert rita.post(act(uid, "pin"), data).status_code == 302
    before = revisions(memory)
    r = rita.post(act(uid, "pin"), data, follow=True)
    assert f"Entry {uid} was already pinned; nothing changed." in r.content.decode()
    assert revisions(memory) == before


def test_an_auditor_sees_no_buttons_and_is_refused(memory, agent, staff, ada):
    uid = remember(memory, agent.actor, "The VPN uses WireGuard").entry.uid
    html = html_of(ada, page(uid))
    assert 'id="reviewer-actions"' not in html and "/review/entries/" not in html
    before = revisions(memory)
    assert (
        ada.post(act(uid, "pin"), {"category": "safety_policy", "reason": "x"}).status_code == 403
    )
    assert ada.post(act(uid, "forget"), {"reason": "x"}).status_code == 403
    actions.forget_entry(memory, actor=staff, entry_uid=uid, reason="old")
    assert ada.post(act(uid, "reactivate"), {"reason": "x"}).status_code == 403
    assert head(uid).state == HeadState.INACTIVE
    assert revisions(memory) == before + 1
    r = Client().post(act(uid, "reactivate"), {"reason": "x"})
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    assert ada.get(act(uid, "forget")).status_code == 405


def test_a_withheld_entry_offers_no_pin_or_forget(memory, agent, reviewer, rita):
    uid = remember(memory, agent.actor, "Build cache lives on S3").entry.uid
    actions.quarantine_entry(memory, actor=reviewer.actor, entry_uid=uid, reason="hostile")
    html = html_of(rita, page(uid))
    assert 'id="reviewer-actions"' not in html
    assert rita.post(act(uid, "forget"), {"reason": "x"}).status_code == 409


def test_the_forms_need_the_csrf_token(memory, agent, reviewer):
    uid = remember(memory, agent.actor, "Logs are kept 30 days").entry.uid
    client = browser_client("rita", enforce_csrf_checks=True)
    assert client.post(act(uid, "forget"), {"reason": "x"}).status_code == 403
    assert head(uid).state == HeadState.ACTIVE


def test_a_reviewer_key_still_may_not_forget_and_agents_may_not_act_as_reviewers(
    memory, agent, reviewer
):
    uid = remember(memory, agent.actor, "Alerts go to #ops").entry.uid
    with pytest.raises(Forbidden):
        actions.forget_entry(memory, actor=reviewer.actor, entry_uid=uid, reason="x")
    with pytest.raises(Forbidden):  # keys never act as reviewers from the entry page
        actions.forget_entry(
            memory, actor=reviewer.actor, entry_uid=uid, reason="x", as_reviewer=True
        )
    with pytest.raises(Forbidden):
        actions.forget_entry(memory, actor=agent.actor, entry_uid=uid, reason="x", as_reviewer=True)
    rita = Actor.for_user(User.objects.get(username="rita"))
    with pytest.raises(Forbidden):
        actions.forget_entry(memory, actor=rita, entry_uid=uid, reason="x")
    assert head(uid).state == HeadState.ACTIVE


def test_the_entry_page_costs_a_fixed_number_of_queries(
    memory, agent, rita, django_assert_max_num_queries
):
    uid = remember(memory, agent.actor, "Runbooks live in the wiki").entry.uid
    with django_assert_max_num_queries(40):
        html_of(rita, page(uid))
