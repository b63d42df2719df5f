"""Every surface, walked with a low-clearance key: no hidden entry id or body appears anywhere.

The walk is generated from the URL conf: every ``/api/v1/…`` route is requested (GET, plus the
POST reads — search and the Context Pack) with its parameters filled from a scene in which a
restricted entry conflicts with an internal one, resembles it, and went through a proposal, an
approval and an operation. A new route is walked without touching this file; a route whose
parameters the scene cannot fill fails the test until it is taught here.
"""

from __future__ import annotations

import json
import re

from django.contrib.auth.models import User
from django.urls import URLPattern, URLResolver, get_resolver

from memory import actions
from memory.actors import Actor
from proposals.requests import submit_request
from review import actions as review
from tests.conftest import make_key

SECRET = "Payroll export runs from host pr-7 with the zebra credentials"
#: Routes that take no part in reading memory objects (docs, write-only actions).
READS_BY_POST = {"memory-search", "memory-context-pack"}
SKIP = {"schema", "api-docs", None}


def _routes(patterns, prefix: str = ""):  # type: ignore[no-untyped-def]
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p.name, p.callback


def _allows(callback, method: str) -> bool:  # type: ignore[no-untyped-def]
    cls = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if cls is None:
        return method == "get"
    return hasattr(cls, method)


def _without_redacted_event_ids(text: str) -> str:
    """Audit events about hidden entries are listed *redacted* (no label, no payload) and keep
    their ``entry_ids`` (the audit app's current contract); everything else must not name them."""

    def strip(item: dict) -> dict:  # type: ignore[type-arg]
        return item | {"entry_ids": []} if item.get("redacted") is True else item

    try:
        data = json.loads(text)
    except ValueError:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        return "\n".join(json.dumps(strip(x)) for x in lines)
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data["items"] = [strip(i) for i in data["items"]]
    return json.dumps(data)


def _scene(memory, agent):  # type: ignore[no-untyped-def]
    high = make_key("high", "agent", clearance="restricted")
    hidden = actions.add_entry(
        memory, actor=high.actor, body=SECRET, kind="fact", sensitivity="restricted"
    )
    retired = actions.add_entry(
        memory,
        actor=high.actor,
        body="The payroll host pr-7 keeps its zebra credentials in a vault",
        kind="fact",
        sensitivity="restricted",
        dedupe=False,
    )
    visible = actions.add_entry(
        memory, actor=agent.actor, body="Payroll export runs from host pr-7", kind="fact"
    )
    # The visible entry's lifecycle now names the hidden one (unresolved conflict).
    actions.record_conflict(
        memory, actor=high.actor, from_entry=visible.entry.uid, to_entry=hidden.entry.uid
    )
    proposal = submit_request(
        actor=high.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "low value",
            "entries": [{"entry_id": retired.entry.uid, "version": 1}],
        },
    ).proposal
    boss = Actor.for_user(User.objects.get(username="ravi"))
    operation = review.approve_proposal(proposal.pk, actor=boss).operation
    assert operation is not None
    return (
        (hidden.entry.uid, retired.entry.uid),
        visible.entry.uid,
        proposal.pk,
        operation.pk,
    )


def test_no_surface_names_a_hidden_entry_to_a_low_clearance_key(
    api, memory, agent, auditor, other_reviewer
):
    hidden_uids, visible_uid, proposal_pk, operation_pk = _scene(memory, agent)
    values = {
        "slug": "acme",
        "entry_id": visible_uid,
        "number": "1",
        "proposal_id": str(proposal_pk),
        "operation_id": str(operation_pk),
        "comment_id": "1",  # a POST-only route (resolve): not requested here
        "name": "repo",
        "pk": "1",
        "job": "decay_scan",
        "session_id": "s1",
    }
    walked: list[str] = []
    for key in (agent, auditor, make_key("low-reviewer", "reviewer", owner="ravi")):
        client = api.as_(key)
        for route, name, callback in _routes(get_resolver().url_patterns):
            if not route.startswith("api/v1/") or name in SKIP:
                continue
            route = str(route)
            params = re.findall(r"<(?:\w+:)?(\w+)>", route)
            missing = [p for p in params if p not in values]
            assert not missing, f"teach the walk the parameter(s) {missing} of {route}"
            path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[str(m.group(1))], route)
            if name in READS_BY_POST:
                body = {"query": "payroll export host"}
                responses = [client.post(path, body), client.post(path, body | {"view": "history"})]
            elif _allows(callback, "get"):
                responses = [client.get(path)]
                if name == "revision-list":
                    responses.append(client.get(path + "?since_revision=0"))
            else:
                continue
            for r in responses:
                assert r.status_code < 500, (path, r.status_code, r.text[:300])
                text = _without_redacted_event_ids(r.text) if name.startswith("audit") else r.text
                for uid in hidden_uids:
                    assert uid not in text, (key.key.name, path, text[:500])
                assert "zebra credentials" not in r.text, (key.key.name, path)
                walked.append(f"{key.key.name} {path} {r.status_code}")
    touched = {w.split()[1] for w in walked}
    for must in (
        "/api/v1/memories/acme/entries",
        f"/api/v1/memories/acme/entries/{visible_uid}",
        f"/api/v1/memories/acme/entries/{visible_uid}/versions",
        "/api/v1/memories/acme/revisions",
        "/api/v1/memories/acme/search",
        "/api/v1/memories/acme/context-pack",
        "/api/v1/proposals",
        f"/api/v1/operations/{operation_pk}",
        "/api/v1/audit/events",
        "/api/v1/audit/export",
    ):
        assert must in touched, must


def test_the_context_pack_never_names_a_hidden_entry_in_a_conflict_reason(
    api, memory, agent, other_reviewer
):
    (hidden_uid, _), visible_uid, _, _ = _scene(memory, agent)
    r = api.as_(agent).post("/api/v1/memories/acme/context-pack", {"query": "payroll export host"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert visible_uid in r.text and hidden_uid not in r.text
    assert "conflicts_with:(hidden)" in data["text"]
    assert data["bytes"] == len(data["text"].encode("utf-8"))


def test_the_inventory_counts_only_what_the_key_may_see(api, memory, agent, other_reviewer):
    (hidden_uid, _), _, _, _ = _scene(memory, agent)
    high = make_key("high-reader", "agent", clearance="restricted")
    # A pending proposal that touches only the hidden entry: it does not exist for the agent.
    submit_request(
        actor=high.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "stale",
            "entries": [{"entry_id": hidden_uid, "version": 1}],
        },
    )

    low = api.as_(agent).get("/api/v1/memories/acme/inventory")
    top = api.as_(high).get("/api/v1/memories/acme/inventory")
    assert low.status_code == top.status_code == 200, (low.text, top.text)
    low_figures, top_figures = low.json(), top.json()

    # The top-clearance key sees the Memory whole: two restricted entries (one retired by the
    # approved cleanup), the conflict between the visible and the hidden entry, the proposal.
    assert (top_figures["entries"], top_figures["active"], top_figures["inactive"]) == (3, 2, 1)
    assert top_figures["conflicts"] == 1
    assert top_figures["pending_proposals"] == {"cleanup": 1}
    # The internal key sees only its own entry: no hidden entry, conflict or proposal is counted.
    assert (low_figures["entries"], low_figures["active"], low_figures["inactive"]) == (1, 1, 0)
    assert sum(low_figures["importance"].values()) == 1
    assert low_figures["conflicts"] == 0
    assert low_figures["pending_proposals"] == {}
    assert low_figures["auto_deactivations"] == {}
    visible_bytes = len(b"Payroll export runs from host pr-7")
    assert low_figures["manifest_bytes"] == visible_bytes
    assert top_figures["manifest_bytes"] == visible_bytes + len(SECRET.encode())
