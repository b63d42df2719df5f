"""The search playground's ranking trace names the view it ran in when the validity filter does
not apply (it applies to the current view only)."""

from __future__ import annotations

import re

import pytest

from tests.factories import remember

pytestmark = pytest.mark.django_db

URL = "/memories/acme/search/"


@pytest.fixture
def reviewer_client(client, reviewer):
    client.login(username="rita", password="pw-rita-123")
    return client


def validity_filter_line(html: str) -> str:
    found = re.search(r"<dt>Validity filter \(before fusion\)</dt><dd>(.*?)</dd>", html, re.S)
    assert found, "the trace has no validity filter line"
    return found.group(1)


@pytest.mark.parametrize("view", ["candidates", "history"])
def test_the_trace_names_the_view_that_skips_the_validity_filter(
    reviewer_client, memory, agent, view
):
    remember(memory, agent.actor, "Docs changes must run make docs-test")
    r = reviewer_client.get(URL, {"q": "docs changes make", "view": view})
    assert r.status_code == 200
    assert validity_filter_line(r.content.decode()) == f"not applied ({view} view)"


def test_the_current_view_counts_what_the_validity_filter_withheld(reviewer_client, memory, agent):
    remember(memory, agent.actor, "Docs changes must run make docs-test")
    html = reviewer_client.get(URL, {"q": "docs changes make"}).content.decode()
    assert validity_filter_line(html) == "inactive: 0 withheld, superseded: 0 withheld"
