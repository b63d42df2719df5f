"""Fixtures for the audit trail: browser clients per role, Bearer headers for Django's test client,
and a small history written through the real actions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from lib.correlation import correlation_scope
from memory import actions
from memory.models import Memory
from tests.conftest import Key


def bearer(key: Key) -> dict[str, str]:
    """Headers for Django's test client acting with an API key."""
    return {"Authorization": f"Bearer {key.secret}"}


def logged_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.fixture
def auditor_browser(auditor) -> Client:
    return logged_in("ada")


@pytest.fixture
def reviewer_browser(reviewer) -> Client:
    return logged_in("rita")


@pytest.fixture
def staff_browser(staff) -> Client:
    return logged_in("root")


@pytest.fixture
def nobody_browser(memory) -> Client:
    """A logged-in user with no role (no group, not staff)."""
    User.objects.create_user("nobody", password="pw-nobody-123")
    return logged_in("nobody")


@pytest.fixture
def restricted_auditor(memory):
    """An auditor key that may see restricted entries (auditor keys default to internal)."""
    from tests.conftest import make_key

    return make_key("ada-restricted", "auditor", clearance="restricted")


@dataclass
class History:
    """One entry with three versions, retired and reactivated, plus a second entry."""

    memory: Memory
    entry_id: str
    other_id: str


def in_request(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call an action in its own correlation scope, as one HTTP request would."""
    with correlation_scope():
        return fn(*args, **kwargs)


@pytest.fixture
def history(memory, agent) -> History:
    a = agent.actor
    first = in_request(
        actions.add_entry,
        memory,
        actor=a,
        body="The deploy target is the eu-2 cluster",
        kind="fact",
        current_state=True,
        evidence=[{"source": "repo", "ref": "deploy/prod.yaml"}],
    )
    uid = first.entry.uid
    in_request(
        actions.revise_entry,
        memory,
        actor=a,
        entry_uid=uid,
        body="The deploy target is the eu-3 cluster",
        evidence=[{"source": "chat", "ref": "msg-42"}],
    )
    in_request(
        actions.forget_entry, memory, actor=a, entry_uid=uid, reason="cluster decommissioned"
    )
    in_request(actions.reactivate_entry, memory, actor=a, entry_uid=uid, reason="cluster is back")
    in_request(
        actions.revise_entry,
        memory,
        actor=a,
        entry_uid=uid,
        body="The deploy target is the eu-3 cluster (k8s-prod-3)",
    )
    other = in_request(
        actions.add_entry, memory, actor=a, body="Releases are cut on Tuesdays", kind="fact"
    )
    in_request(actions.record_conflict, memory, actor=a, from_entry=uid, to_entry=other.entry.uid)
    return History(memory=memory, entry_id=uid, other_id=other.entry.uid)


def role_group(name: str) -> Any:
    return Group.objects.get_or_create(name=name)[0]
