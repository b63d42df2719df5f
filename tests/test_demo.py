"""The demo loader gives a new reviewer real work: history, retirements, pending proposals."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from memory.models import ApiKey, Entry, Head, Memory, Revision
from proposals.models import Proposal, ProposalComment


@pytest.mark.django_db
def test_load_demo_is_idempotent_and_has_work_waiting():
    out = StringIO()
    call_command("load_demo", stdout=out)
    text = out.getvalue()
    assert "rita / steward-demo" in text and "agent " in text
    memory = Memory.objects.get(slug="acme-platform")
    # A second Memory for loading a conversation: empty, and no admission review to wait on.
    chat = Memory.objects.get(slug="acme-chat")
    assert "admission_review" not in chat.policy and not Entry.objects.filter(memory=chat)
    assert "'acme-chat' is empty and has no admission review" in text
    # The summary counts every entry the Memory's pages show, the proposals' own included.
    assert f"  {Entry.objects.filter(memory=memory).count()} entries written," in text
    assert Head.objects.filter(memory=memory).count() >= 30
    assert Head.objects.filter(memory=memory, state="inactive").exists()
    kinds = set(Revision.objects.filter(memory=memory).values_list("kind", flat=True))
    assert {"add", "revise", "forget", "reactivate", "pin", "session_end"} <= kinds
    pending = Proposal.objects.filter(memory=memory, status="pending")
    assert set(pending.values_list("kind", flat=True)) == {
        "consolidation",
        "supersession",
        "promotion",
        "cleanup",
        "admission",
        "quarantine",
    }
    assert Head.objects.filter(memory=memory, state="candidate").count() == 1
    assert any(p.verification.get("lost_details") for p in pending)
    assert Proposal.objects.filter(memory=memory, status="stale").exists()
    # The review workflow has something to show: a thread and a proposal sent back.
    waiting = Proposal.objects.get(memory=memory, status="changes_requested")
    assert waiting.kind == "supersession"
    assert waiting.decisions.get().verdict == "request_changes"
    comments = ProposalComment.objects.filter(proposal__memory=memory).order_by("pk")
    assert [c.resolution_or_none() is not None for c in comments] == [False, True, False]
    head = memory.head
    call_command("load_demo", stdout=StringIO())
    memory.refresh_from_db()
    assert memory.head == head
    # Once a conversation is loaded there, the demo no longer calls that Memory empty.
    from memory import actions
    from memory.actors import Actor

    actions.add_entry(chat, actor=Actor.system(), body="Mel: hello", kind="fact")
    again = StringIO()
    call_command("load_demo", stdout=again)
    assert "'acme-chat' is empty" not in again.getvalue()


@pytest.mark.django_db
def test_the_demo_admin_can_read_every_model_in_the_admin(client):
    call_command("load_demo", stdout=StringIO())
    client.login(username="admin", password="steward-demo")
    html = client.get("/admin/").content.decode()
    assert "permission to view or edit anything" not in html
    for model in ("memory/entry", "memory/revision", "proposals/proposal", "auth/user"):
        assert f'href="/admin/{model}/"' in html, model
    assert client.get("/admin/memory/entry/").status_code == 200


@pytest.mark.django_db
def test_the_demo_admin_changes_nothing_in_the_admin(client):
    """Every change goes through the audited product: the admin only reads."""
    call_command("load_demo", stdout=StringIO())
    admin = User.objects.get(username="admin")
    assert admin.is_staff and not admin.is_superuser
    client.login(username="admin", password="steward-demo")
    key = ApiKey.objects.order_by("pk").first()
    assert key is not None
    page = client.get(f"/admin/memory/apikey/{key.pk}/change/")
    assert page.status_code == 200 and 'name="clearance"' not in page.content.decode()
    assert client.post(f"/admin/memory/apikey/{key.pk}/change/", {}).status_code == 403
    assert client.get("/admin/auth/user/add/").status_code == 403
    assert client.post(f"/admin/auth/user/{admin.pk}/change/", {}).status_code == 403


@pytest.mark.django_db
def test_the_printed_links_name_the_address_the_demo_serves_on():
    out = StringIO()
    call_command("load_demo", "--base-url", "http://127.0.0.1:8777/", stdout=out)
    text = out.getvalue()
    assert "Browser (http://127.0.0.1:8777/accounts/login/)" in text
    assert "http://127.0.0.1:8777/api/v1/memories/acme-platform/revisions" in text
    assert ":8000" not in text
