"""The live server the API and browser tests talk to has its own database connection.

With Django's in-memory SQLite test database, the live server thread would share the test
thread's connection, and two threads on one SQLite connection can deadlock below Python: a
request's query calling a Python SQL function holds the connection's mutex and waits for the
GIL, while the test thread holds the GIL and waits for the mutex. Neither returns to Python, so
not even a test timeout stops it. The test database is therefore a file on SQLite too.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.backends.sqlite3.creation import DatabaseCreation

from memory.models import ApiKey
from tests.conftest import Api, make_key


def test_the_live_server_reads_only_what_the_test_thread_committed(api: Api, memory) -> None:
    assert not DatabaseCreation.is_in_memory_db(connection.settings_dict["NAME"])
    key = make_key("probe-key", "agent", memories=("acme",))
    with transaction.atomic():
        ApiKey.objects.filter(pk=key.key.pk).update(revoked=True)
        # The server's own connection does not see what this thread has not committed yet.
        assert api.as_(key).get("/api/v1/memories/acme").status_code == 200
    assert api.as_(key).get("/api/v1/memories/acme").status_code == 401
