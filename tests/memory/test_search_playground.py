"""The search playground page: reviewers and auditors see hits, lifecycle and the trace."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User

from memory import actions
from tests.factories import remember

from .conftest import supersede

pytestmark = pytest.mark.django_db

URL = "/memories/acme/search/"


@pytest.fixture
def reviewer_client(client, reviewer):
    client.login(username="rita", password="pw-rita-123")
    return client


def test_login_is_required(client, memory):
    r = client.get(URL)
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_users_without_a_review_or_audit_role_are_refused(client, memory):
    User.objects.create_user("nobody", password="pw-nobody-1")
    client.login(username="nobody", password="pw-nobody-1")
    assert client.get(URL).status_code == 403


def test_unknown_memory_is_404(reviewer_client):
    assert reviewer_client.get("/memories/nope/search/").status_code == 404


def test_reviewer_sees_hits_lifecycle_and_trace(reviewer_client, memory, agent):
    me = agent.actor
    new = remember(memory, me, "Docs changes must run make docs-test").entry
    old = remember(memory, me, "Docs changes must run make test").entry
    gone = remember(memory, me, "Docs changes must run make lint").entry
    actions.forget_entry(memory, actor=me, entry_uid=gone.uid, reason="obsolete")
    supersede(memory, old=old, new=new)
    r = reviewer_client.get(URL, {"q": "docs changes make"})
    assert r.status_code == 200
    html = r.content.decode()
    assert "<!doctype html>" in html.lower()
    assert new.uid in html and "make docs-test" in html
    assert old.uid not in html.split("Ranking trace")[0]
    assert "inactive: 1 withheld" in html and "superseded: 1 withheld" in html
    assert "1 → 1" in html
    assert "Membership changed</dt><dd>no" in html
    assert (
        "quality:v4 · max shift ±2 inside relevance tiers (ratio 1.5) · freshness α 0.5, half-life 30.0 d"
        in html
    )
    hist = reviewer_client.get(URL, {"q": "docs changes make", "view": "history"}).content.decode()
    assert "superseded_by:" + new.uid in hist and "obsolete" in hist


def test_auditor_may_use_it_and_htmx_gets_only_the_results(client, auditor, memory, agent):
    remember(memory, agent.actor, "Leader election uses advisory locks")
    client.login(username="ada", password="pw-ada-123")
    r = client.get(URL, {"q": "leader election"}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    assert body.lstrip().startswith('<section id="results"')
    assert "<html" not in body and "advisory locks" in body


def test_query_count_is_fixed(reviewer_client, memory, agent, django_assert_max_num_queries):
    for i in range(25):
        remember(memory, agent.actor, f"Leader election note {i}")
    with django_assert_max_num_queries(12):
        r = reviewer_client.get(URL, {"q": "leader election", "limit": "20"})
    assert r.status_code == 200


def test_staff_group_less_users_are_allowed(client, staff, memory):
    client.login(username="root", password="pw-root-123")
    assert client.get(URL).status_code == 200
    assert Group.objects.filter(name="reviewer").count() in (0, 1)


# The trace names the view it ran in when the validity filter does not apply (it applies to
# the current view only).


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


def test_the_trace_names_the_shorthand_the_model_read_spelled_out(
    reviewer_client, memory, settings
):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    memory.policy = {"glossary": {"zephyr": "the nightly export job"}}
    memory.save(update_fields=["policy"])
    html = reviewer_client.get(URL, {"q": "did the PR touch Zephyr"}).content.decode()
    assert "PR → pull request, Zephyr → the nightly export job" in html
    # Without a model nothing is read spelled out, and the trace says nothing of it.
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    html = reviewer_client.get(URL, {"q": "did the PR touch Zephyr"}).content.decode()
    assert "Shorthand the model read" not in html
