"""A database that cannot be reached answers 503 ``service_unavailable`` with ``Retry-After``
(API.md) — the API in the envelope, MCP as a tool error carrying the same body, the pages with
a page that says to wait — never 500. Real gunicorn processes: one pointed at a database nobody
serves, one whose PostgreSQL backend is terminated mid-request, one whose SQLite file another
process holds locked."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import requests
from django.db import connection

from memory.models import Entry
from tests.servers import free_port, gunicorn, shared_database_url

pytestmark = pytest.mark.django_db(transaction=True)

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def assert_unavailable(r: requests.Response) -> None:
    assert r.status_code == 503, (r.status_code, r.text[:500])
    assert r.headers["Retry-After"] == "5"
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json()["error"]["code"] == "service_unavailable"
    assert set(r.json()["error"]) == {"code", "message", "details"}


def assert_unavailable_page(r: requests.Response) -> None:
    assert r.status_code == 503, (r.status_code, r.text[:500])
    assert r.headers["Retry-After"] == "5"
    assert r.headers["Content-Type"].startswith("text/html")
    assert "briefly unavailable" in r.text and "Wait 5 seconds" in r.text


def unreachable_url() -> str:
    if connection.vendor == "postgresql":
        return f"postgres://postgres@127.0.0.1:{free_port()}/nobody_listens"
    return "sqlite:////nonexistent-directory/steward.sqlite3"


def test_a_database_nobody_serves_is_503_everywhere_never_500():
    with gunicorn(unreachable_url()) as base:
        key = {"Authorization": "Bearer not-checked-without-a-database"}
        assert_unavailable(requests.get(f"{base}/api/v1/memories/acme", headers=key, timeout=30))
        assert_unavailable(
            requests.post(
                f"{base}/api/v1/memories/acme/entries",
                json={"body": "Deploys run nightly", "kind": "fact"},
                headers=key,
                timeout=30,
            )
        )
        # No key at all: the client address's throttle counter is in the database too.
        assert_unavailable(requests.get(f"{base}/api/v1/proposals", timeout=30))
        mcp = requests.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**key, **MCP_HEADERS},
            timeout=30,
        )
        assert_unavailable(mcp)
        # Pages: a session cookie makes the session middleware read the database first.
        page = requests.get(f"{base}/review/", cookies={"sessionid": "x" * 32}, timeout=30)
        assert_unavailable_page(page)
        login = requests.get(f"{base}/accounts/login/", timeout=30)
        token = login.cookies.get("csrftoken") or ""
        sent = requests.post(
            f"{base}/accounts/login/",
            data={"username": "rita", "password": "pw", "csrfmiddlewaretoken": token},
            cookies={"csrftoken": token},
            headers={"Referer": f"{base}/accounts/login/"},
            timeout=30,
        )
        assert_unavailable_page(sent)
        # The process itself is alive; readiness says why it cannot serve.
        assert requests.get(f"{base}/healthz", timeout=30).status_code == 200
        assert requests.get(f"{base}/readyz", timeout=30).status_code == 503


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="terminates a PostgreSQL backend")
def test_a_postgresql_backend_terminated_mid_request_is_503_and_the_next_request_succeeds(
    memory, agent
):
    import psycopg

    url = shared_database_url()
    with gunicorn(url, env={"CONN_MAX_AGE": "60"}) as base:
        headers = {"Authorization": f"Bearer {agent.secret}"}
        entries = f"{base}/api/v1/memories/acme/entries"
        assert requests.get(f"{base}/api/v1/memories/acme", headers=headers).status_code == 200
        with psycopg.connect(url) as holder:
            # The write waits for the Memory's row lock this connection holds …
            holder.execute("SELECT id FROM memory_memory WHERE slug = 'acme' FOR UPDATE")
            answer: dict[str, Any] = {}
            writer = threading.Thread(
                target=lambda: answer.update(
                    r=requests.post(
                        entries,
                        json={"body": "Deploys run nightly at 02:00 UTC", "kind": "fact"},
                        headers=headers,
                        timeout=60,
                    )
                )
            )
            writer.start()
            waiting = _backend_waiting_for_a_lock(holder)
            # … and its backend is terminated, as an operator or a failover would.
            holder.execute("SELECT pg_terminate_backend(%s)", [waiting])
            writer.join(60)
            holder.rollback()
        assert_unavailable(answer["r"])
        assert not Entry.objects.filter(memory=memory).exists()
        # The worker drops the dead connection and the next request opens a new one.
        again = requests.post(
            entries,
            json={"body": "Deploys run nightly at 02:00 UTC", "kind": "fact"},
            headers=headers,
            timeout=60,
        )
        assert again.status_code == 201, again.text


def _backend_waiting_for_a_lock(holder: Any) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = holder.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
        ).fetchone()
        if row:
            return int(row[0])
        time.sleep(0.05)
    raise AssertionError("the write never waited for the Memory's lock")


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="terminates PostgreSQL backends")
def test_backends_terminated_under_load_answer_503_or_succeed_never_500(memory, agent, capsys):
    import psycopg

    url = shared_database_url()
    statuses: dict[int, int] = {}
    wrong: list[str] = []
    stop = threading.Event()
    with connection.cursor() as cursor:  # this test's own connection is spared
        cursor.execute("SELECT pg_backend_pid()")
        own = cursor.fetchone()[0]
    with gunicorn(url, workers=2, env={"CONN_MAX_AGE": "60"}) as base:
        headers = {"Authorization": f"Bearer {agent.secret}"}

        def client(n: int) -> None:
            for i in range(40):
                if i % 2:
                    r = requests.post(
                        f"{base}/api/v1/memories/acme/entries",
                        json={"body": f"Host {n}-{i} answers on port {8000 + i}", "kind": "fact"},
                        headers=headers,
                        timeout=60,
                    )
                else:
                    r = requests.get(f"{base}/api/v1/memories/acme/entries", headers=headers)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                if r.status_code >= 500 and not (
                    r.status_code == 503
                    and r.headers.get("Retry-After") == "5"
                    and r.json()["error"]["code"] == "service_unavailable"
                ):
                    wrong.append(f"{r.status_code} {r.text[:200]}")

        def killer() -> None:
            with psycopg.connect(url, autocommit=True) as admin:
                while not stop.wait(0.2):
                    admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                        "AND pid <> %s AND backend_type = 'client backend'",
                        [own],
                    )

        kill = threading.Thread(target=killer)
        kill.start()
        clients = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(300)
        stop.set()
        kill.join(30)
    with capsys.disabled():
        print(f"\nbackends terminated every 200 ms under 160 requests: statuses {statuses}")
    assert sum(statuses.values()) == 160
    assert wrong == []
    assert set(statuses) <= {200, 201, 503}, statuses
    assert statuses.get(503, 0) > 0  # the killer did hit requests


@pytest.mark.skipif(connection.vendor != "sqlite", reason="locks an SQLite file")
def test_an_sqlite_file_locked_by_another_process_is_503_for_writes_then_writes_resume(
    memory, agent
):
    import sqlite3

    with gunicorn(shared_database_url(), env={"SQLITE_BUSY_TIMEOUT": "1"}) as base:
        headers = {"Authorization": f"Bearer {agent.secret}"}
        entries = f"{base}/api/v1/memories/acme/entries"
        write = {"body": "Deploys run nightly at 02:00 UTC", "kind": "fact"}
        holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
            assert_unavailable(requests.post(entries, json=write, headers=headers, timeout=60))
            # A page that writes (the session at login) says the same in HTML.
            page = requests.get(f"{base}/accounts/login/", timeout=30)
            assert page.status_code == 200  # reading goes on beside the writer (WAL)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert not Entry.objects.filter(memory=memory).exists()
        again = requests.post(entries, json=write, headers=headers, timeout=60)
        assert again.status_code == 201, again.text
