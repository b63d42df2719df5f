"""Fixtures for the reviewer inbox pages: logged-in browser clients per role, proposals built
through the real actions, and the shared headless Chromium fixtures of tests/browser."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memory import actions as memory_actions
from memory.models import Memory
from proposals.models import Proposal
from proposals.requests import submit_request

# The shared Playwright fixtures of tests/browser: ``browser`` (Debian's Chromium, one per module),
# ``page`` (a fresh context at 1280 px, ``base_url`` = the live server) and ``login``.
from tests.browser.conftest import browser, login, page  # noqa: F401

_bodies = itertools.count(1)


def browser_client(username: str, **kw: Any) -> Client:
    client = Client(**kw)
    client.force_login(User.objects.get(username=username))
    return client


@pytest.fixture
def rita(reviewer) -> Client:
    return browser_client("rita")


@pytest.fixture
def ravi(other_reviewer) -> Client:
    return browser_client("ravi")


@pytest.fixture
def ada(auditor) -> Client:
    return browser_client("ada")


@pytest.fixture
def nobody(memory) -> Client:
    User.objects.create_user("nobody", password="pw-nobody-123")
    return browser_client("nobody")


def add(memory: Memory, actor: Any, body: str, **kw: Any) -> str:
    kw.setdefault("kind", "fact")
    result = memory_actions.add_entry(memory, actor=actor, body=body, dedupe=False, **kw)
    return str(result.entry.uid)


def consolidate(
    memory: Memory,
    actor: Any,
    *,
    a: str | None = None,
    b: str | None = None,
    body: str | None = None,
    rationale: str = "Same deploy schedule stated twice",
    evidence_a: list[dict[str, Any]] | None = None,
    evidence_b: list[dict[str, Any]] | None = None,
) -> Proposal:
    """Two entries and a consolidation of them, through the real actions."""
    n = next(_bodies)
    first = add(
        memory,
        actor,
        a or f"Deploy {n} runs at 02:00 UTC via deploy.sh",
        evidence=evidence_a if evidence_a is not None else [{"source": "repo", "ref": "deploy.sh"}],
    )
    second = add(
        memory,
        actor,
        b or f"Deploys {n} run nightly at 02:00 UTC",
        evidence=evidence_b if evidence_b is not None else [{"source": "chat", "ref": f"msg-{n}"}],
    )
    result = submit_request(
        actor=actor,
        data={
            "memory": memory.slug,
            "kind": "consolidation",
            "rationale": rationale,
            "target": {"entry_id": first, "version": 1},
            "redundant": [{"entry_id": second, "version": 1}],
            "body": body or f"Deploys {n} run nightly at 02:00 UTC via deploy.sh",
        },
    )
    return result.proposal


@pytest.fixture
def proposal(memory, agent) -> Proposal:
    """A consolidation that keeps every detail (no acknowledgement needed)."""
    return consolidate(memory, agent.actor)


@pytest.fixture
def lossy(memory, agent) -> Proposal:
    """A consolidation whose merged body drops 02:00, UTC and deploy.sh."""
    return consolidate(
        memory,
        agent.actor,
        a="Deploy runs at 02:00 UTC via deploy.sh",
        b="Deploys run nightly",
        body="Deploys run nightly",
        rationale="Shorter",
    )
