"""An operation that retired or replaced a version lists the runs that were served it — in the
API, on the operation page and in a webhook POSTed to a local HTTP receiver; a run served only
the new version is not listed."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from exposure import ledger
from review import tasks
from review.models import Notification
from tests.factories import add_via_api
from tests.review.conftest import submit

S = "/api/v1/memories/acme/search"
HOOK = "https://hooks.example.com/steward"


class Receiver:
    """A local HTTP server that keeps every POST it receives."""

    def __init__(self) -> None:
        received: list[tuple[str, dict[str, str], bytes]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((self.path, dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def post_json(self, url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> int:
        """Stands in for ``lib.outbound.post_json`` at the network boundary: the same request,
        sent over real HTTP to this receiver instead of the public https host."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.server_port, timeout=timeout)
        try:
            conn.request("POST", urlsplit(url).path, body=body, headers=headers)
            return conn.getresponse().status
        finally:
            conn.close()

    def payloads(self, event: str) -> list[dict]:
        out = [json.loads(b) for _, _, b in self.received]
        return [p for p in out if p.get("event") == event]


@pytest.fixture
def receiver(monkeypatch):
    r = Receiver()
    monkeypatch.setattr(tasks, "post_json", r.post_json)
    yield r
    r.server.shutdown()


@pytest.fixture
def ag(api, agent):
    return api.as_(agent)


@pytest.fixture
def rv(api, reviewer):
    return api.as_(reviewer)


def hits(api, query, run):
    r = api.post(S, {"query": query, "run_id": run})
    assert r.status_code == 200, r.text
    return [(h["entry_id"], h["version"]) for h in r.json()["hits"]]


def supersede(ag, rv, old, new):
    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved to Dublin",
            "old": {"entry_id": old, "version": 1},
            "successor": {"entry_id": new, "version": 1},
        },
    )
    lost = rv.get(f"/api/v1/proposals/{p['id']}").json()["verification"]["lost_details"]
    r = rv.post(
        f"/api/v1/proposals/{p['id']}/approve",
        {"acknowledge_lost_details": [d["text"] for d in lost]},
    )
    assert r.status_code == 200, r.text
    return r.json()["operation"]


def test_a_supersession_lists_the_runs_served_the_old_version(ag, rv, agent, receiver):
    assert rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": HOOK}}).status_code == 200
    old = add_via_api(ag, "The deploy target is Frankfurt", current_state=True)["entry_id"]
    new = add_via_api(ag, "The deploy target is Dublin", current_state=True)["entry_id"]
    assert hits(ag, "Frankfurt", "run-old") == [(old, 1)]
    assert hits(ag, "Dublin", "run-new") == [(new, 1)]
    op = supersede(ag, rv, old, new)

    body = ag.get(f"/api/v1/operations/{op}").json()
    assert [(r["run_id"], r["key"]) for r in body["exposed_runs"]] == [("run-old", agent.actor.id)]
    assert body["exposed_runs"][0]["versions"] == [{"entry_id": old, "version": 1}]
    assert body["retired_versions"] == [
        {"entry_id": old, "old_version": 1, "new": {"entry_id": new, "version": 1}}
    ]

    # A read after the approval never joins the operation's list.
    hits(ag, "Frankfurt", "run-late")  # current view: the superseded entry is left out
    r = ag.post(S, {"query": "Frankfurt", "view": "history", "run_id": "run-late"})
    assert [h["entry_id"] for h in r.json()["hits"]] == [old]
    ledger.flush()
    again = ag.get(f"/api/v1/operations/{op}").json()["exposed_runs"]
    assert [r["run_id"] for r in again] == ["run-old"]

    (payload,) = receiver.payloads("operation.exposed")
    assert payload["operation"] == op and payload["memory"] == "acme"
    assert payload["kind"] == "supersession"
    assert payload["versions"] == [
        {"entry_id": old, "old_version": 1, "new": {"entry_id": new, "version": 1}}
    ]
    assert [r["run_id"] for r in payload["exposed_runs"]] == ["run-old"]
    path, headers, raw = next(x for x in receiver.received if b"operation.exposed" in x[2])
    assert path == "/steward" and headers["X-Steward-Signature"] == tasks.sign(raw)
    row = Notification.objects.get(event="operation.exposed")
    assert row.sent_at is not None and row.channel == "webhook"

    page = Client()
    page.force_login(User.objects.get(username="rita"))
    html = page.get(f"/operations/{op}/").content.decode()
    assert "Runs served the old text" in html
    table = html.split('aria-label="Runs served the old text"', 1)[1].split("</table>", 1)[0]
    assert "run-old" in table and "run-new" not in table and "run-late" not in table


def test_no_webhook_when_no_run_was_served_the_old_version(ag, rv, receiver):
    assert rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": HOOK}}).status_code == 200
    old = add_via_api(ag, "The deploy target is Frankfurt", current_state=True)["entry_id"]
    new = add_via_api(ag, "The deploy target is Dublin", current_state=True)["entry_id"]
    hits(ag, "Dublin", "run-new")
    op = supersede(ag, rv, old, new)
    assert ag.get(f"/api/v1/operations/{op}").json()["exposed_runs"] == []
    assert receiver.payloads("operation.exposed") == []
    assert receiver.payloads("proposal.approved")  # the ordinary decision webhook still went


def test_a_consolidation_and_its_compensation_list_their_runs(ag, rv, receiver):
    assert rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": HOOK}}).status_code == 200
    a = add_via_api(ag, "Deploys run at 02:00 UTC via deploy.sh", dedupe=False)["entry_id"]
    b = add_via_api(ag, "Deploys run nightly at 02:00 UTC", dedupe=False)["entry_id"]
    assert set(hits(ag, "deploys", "run-both")) == {(a, 1), (b, 1)}
    p = submit(
        ag,
        {
            "kind": "consolidation",
            "rationale": "Same schedule twice",
            "target": {"entry_id": a, "version": 1},
            "redundant": [{"entry_id": b, "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    r = rv.post(f"/api/v1/proposals/{p['id']}/approve", {})
    assert r.status_code == 200, r.text
    op = r.json()["operation"]
    body = ag.get(f"/api/v1/operations/{op}").json()
    assert {(v["entry_id"], v["old_version"]) for v in body["retired_versions"]} == {(a, 1), (b, 1)}
    (run,) = body["exposed_runs"]
    assert run["run_id"] == "run-both" and len(run["versions"]) == 2

    assert hits(ag, "deploys", "run-merged") == [(a, 2)]
    c = rv.post(f"/api/v1/operations/{op}/compensate", {"comment": "merged too eagerly"})
    assert c.status_code == 200, c.text
    undone = ag.get(f"/api/v1/operations/{op}").json()["compensation"]
    assert undone["retired_versions"] == [
        {"entry_id": a, "old_version": 2, "new": {"entry_id": a, "version": 1}}
    ]
    assert [r["run_id"] for r in undone["exposed_runs"]] == ["run-merged"]
    kinds = [p["kind"] for p in receiver.payloads("operation.exposed")]
    assert kinds == ["consolidation", "compensation"]


def test_a_direct_forget_and_quarantine_send_their_runs(ag, rv, agent, receiver):
    assert rv.patch("/api/v1/memories/acme", {"policy": {"webhook_url": HOOK}}).status_code == 200
    gone = add_via_api(ag, "The deploy target is Frankfurt")["entry_id"]
    held = add_via_api(ag, "The cache is Redis 7")["entry_id"]
    assert hits(ag, "Frankfurt", "run-f") == [(gone, 1)]
    assert hits(ag, "Redis", "run-q") == [(held, 1)]
    r = ag.post(f"/api/v1/memories/acme/entries/{gone}/forget", {"reason": "wrong city"})
    assert r.status_code == 200, r.text
    r = rv.post(f"/api/v1/memories/acme/entries/{held}/quarantine", {"reason": "poisoned"})
    assert r.status_code == 200, r.text
    sent = receiver.payloads("operation.exposed")
    assert [(p["kind"], p["operation"]) for p in sent] == [("forget", None), ("quarantine", None)]
    assert sent[0]["versions"] == [{"entry_id": gone, "old_version": 1, "new": None}]
    assert [r["run_id"] for r in sent[0]["exposed_runs"]] == ["run-f"]
    assert [r["run_id"] for r in sent[1]["exposed_runs"]] == ["run-q"]
    assert all(isinstance(p["revision"], int) for p in sent)


def test_compensating_a_supersession_lists_the_runs_served_the_created_successor(ag, rv):
    old = add_via_api(ag, "The deploy target is Frankfurt", current_state=True)["entry_id"]
    p = submit(
        ag,
        {
            "kind": "supersession",
            "rationale": "Moved to Dublin",
            "old": {"entry_id": old, "version": 1},
            "successor": {
                "body": "The deploy target is Dublin",
                "kind": "fact",
                "evidence": [{"source": "repo", "ref": "deploy/prod.yaml"}],
            },
        },
    )
    lost = rv.get(f"/api/v1/proposals/{p['id']}").json()["verification"]["lost_details"]
    r = rv.post(
        f"/api/v1/proposals/{p['id']}/approve",
        {"acknowledge_lost_details": [d["text"] for d in lost]},
    )
    assert r.status_code == 200, r.text
    op = r.json()["operation"]
    (new,) = ag.get(f"/api/v1/operations/{op}").json()["produced"]["created_entries"]
    assert hits(ag, "Dublin", "run-new") == [(new, 1)]
    c = rv.post(f"/api/v1/operations/{op}/compensate", {"comment": "the move was cancelled"})
    assert c.status_code == 200, c.text
    ledger.flush()  # what the embedded writer does 2 s after the read
    undone = ag.get(f"/api/v1/operations/{op}").json()["compensation"]
    assert undone["retired_versions"] == [{"entry_id": new, "old_version": 1, "new": None}]
    assert [r["run_id"] for r in undone["exposed_runs"]] == ["run-new"]
