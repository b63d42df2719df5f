"""Throttle counters are shared by every process serving one database, with no ``CACHE_URL``
(Django's database cache): a key's limit holds across two gunicorn servers and across two
workers of one, instead of counting once per process. Real processes on the test database."""

from __future__ import annotations

import threading
from collections import Counter
from contextlib import ExitStack

import pytest
import requests
from django.db import connection

from tests.servers import gunicorn, shared_database_url

pytestmark = pytest.mark.django_db(transaction=True)

RATES = {"THROTTLE_KEY_RATE": "30/min", "THROTTLE_ANON_RATE": "10/min"}


@pytest.fixture(autouse=True)
def _empty_cache(production_cache):
    """The counters the servers share are in this database's cache table: empty it around."""


def test_the_default_cache_is_the_database():
    from django.conf import settings

    assert settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert "steward_cache" in connection.introspection.table_names()


def test_a_key_gets_its_limit_across_two_server_processes(memory, agent, capsys):
    url = shared_database_url()
    with ExitStack() as stack:
        bases = [stack.enter_context(gunicorn(url, env=RATES)) for _ in range(2)]
        headers = {"Authorization": f"Bearer {agent.secret}"}
        # Alternating: every other request is served by the other process.
        codes = [
            requests.get(f"{bases[i % 2]}/api/v1/memories/acme", headers=headers).status_code
            for i in range(60)
        ]
        assert codes[:30] == [200] * 30
        assert set(codes[30:]) == {429}
        # No key: the client address's budget is shared too.
        anonymous = [
            requests.get(f"{bases[i % 2]}/api/v1/memories/acme").status_code for i in range(20)
        ]
        assert anonymous == [401] * 10 + [429] * 10
    with capsys.disabled():
        print(
            f"\ntwo gunicorn processes, one key at 30/min, 60 alternating requests: {Counter(codes)}"
        )


def test_a_key_gets_its_limit_across_two_workers_under_concurrency(memory, agent, capsys):
    outcomes: Counter[int] = Counter()
    lock = threading.Lock()
    with gunicorn(shared_database_url(), workers=2, env=RATES) as base:
        headers = {"Authorization": f"Bearer {agent.secret}"}

        def client() -> None:
            for _ in range(15):
                code = requests.get(f"{base}/api/v1/memories/acme", headers=headers).status_code
                with lock:
                    outcomes[code] += 1

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    with capsys.disabled():
        print(f"\ntwo gunicorn workers, one key at 30/min, 4 clients × 15 at once: {outcomes}")
    assert sum(outcomes.values()) == 60 and set(outcomes) == {200, 429}
    # Each key's counter is read and written under a lock (lib.throttling): racing requests are
    # counted one after the other, so not one more gets through.
    assert outcomes[200] == 30
