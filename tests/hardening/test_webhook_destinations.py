"""``policy.webhook_url``: https to public addresses only, checked when saved and again when a
notification is sent (DNS can change in between); the send connects to the address it checked.
The resolver and the socket are the network boundary, so they are the only things replaced."""

from __future__ import annotations

import socket

import pytest

from lib import outbound
from lib.outbound import UnsafeDestination, post_json, url_problem
from memory.models import Memory


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "ftp://hooks.example.com/x",
        "https:///x",
        "https://169.254.169.254/latest/meta-data/",
        "https://127.0.0.1:8080/",
        "https://[::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://10.1.2.3/",
        "https://192.168.0.10/",
        "https://172.16.5.4/",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://224.0.0.1/",
        "https://localhost/",
        "https://metadata.google.internal/",
        "https://printer.local/",
        "https://intranet/",
    ],
)
def test_non_public_or_plain_http_urls_are_refused_when_saved(api, reviewer, url):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"webhook_url": url}})
    assert r.status_code == 400, r.text
    assert "policy.webhook_url" in r.json()["error"]["details"]
    assert "webhook_url" not in Memory.objects.get(slug="acme").policy


def fake_dns(monkeypatch, answers: dict[str, list[str]]) -> None:
    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            raise socket.gaierror("no such host")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]

    monkeypatch.setattr(outbound, "getaddrinfo", getaddrinfo)


def test_a_name_resolving_to_an_internal_address_is_refused_when_saved(monkeypatch):
    fake_dns(monkeypatch, {"hooks.example.com": ["203.0.113.9", "169.254.169.254"]})
    assert "non-public" in (url_problem("https://hooks.example.com/x") or "")
    fake_dns(monkeypatch, {"hooks.example.com": ["93.184.216.34"]})
    assert url_problem("https://hooks.example.com/x") is None


def test_the_send_refuses_a_name_that_now_resolves_inside(monkeypatch):
    fake_dns(monkeypatch, {"hooks.example.com": ["169.254.169.254"]})
    connects = []
    monkeypatch.setattr(outbound, "create_connection", lambda *a, **k: connects.append(a))
    with pytest.raises(UnsafeDestination):
        post_json("https://hooks.example.com/x", b"{}", {})
    fake_dns(monkeypatch, {})
    with pytest.raises(UnsafeDestination, match="does not resolve"):
        post_json("https://hooks.example.com/x", b"{}", {})
    assert connects == []


def test_the_send_connects_to_the_checked_address(monkeypatch):
    fake_dns(monkeypatch, {"hooks.example.com": ["93.184.216.34"]})

    class Stop(Exception):
        pass

    seen = []

    def create_connection(address, timeout=None, *args):
        seen.append(address)
        raise Stop

    monkeypatch.setattr(outbound, "create_connection", create_connection)
    with pytest.raises(Stop):
        post_json("https://hooks.example.com:8443/x?a=1", b"{}", {})
    assert seen == [("93.184.216.34", 8443)]


def test_a_queued_webhook_is_checked_again_when_sent(
    api, reviewer, monkeypatch, consolidation_pending
):
    from review.models import Notification

    fake_dns(monkeypatch, {"hooks.example.com": ["93.184.216.34"]})
    r = api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"webhook_url": "https://hooks.example.com/x"}}
    )
    assert r.status_code == 200, r.text
    fake_dns(monkeypatch, {"hooks.example.com": ["10.0.0.7"]})  # DNS changed after the check
    monkeypatch.setattr(outbound, "create_connection", lambda *a, **k: pytest.fail("connected"))
    pid = consolidation_pending
    assert api.as_(reviewer).post(f"/api/v1/proposals/{pid}/approve", {}).status_code == 200
    hook = Notification.objects.get(proposal_id=pid, channel="webhook")
    assert hook.sent_at is None and "non-public" in hook.last_error


@pytest.fixture
def consolidation_pending(api, agent):
    from tests.factories import add_via_api

    a = api.as_(agent)
    x = add_via_api(a, "Deploy runs at 02:00 UTC via deploy.sh", dedupe=False)
    y = add_via_api(a, "Deploys run nightly at 02:00 UTC", dedupe=False)
    r = a.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "Same schedule twice",
            "target": {"entry_id": x["entry_id"], "version": 1},
            "redundant": [{"entry_id": y["entry_id"], "version": 1}],
            "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
        },
    )
    assert r.status_code == 201, r.text
    return r.json()["id"]
