"""``/healthz`` (the process answers) and ``/readyz`` (the database answers and the embedding
model is loaded) for load balancers: no login, JSON, 503 until ready."""

from __future__ import annotations

import pytest
from django.test import Client

from memory import embeddings

pytestmark = pytest.mark.django_db


def test_healthz_answers_without_a_login():
    r = Client().get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    assert "no-cache" in r["Cache-Control"]


def test_readyz_is_ready_with_the_database_and_no_model_to_load(settings):
    settings.STEWARD_EMBEDDINGS = {}
    r = Client().get("/readyz")
    assert r.status_code == 200, r.content
    assert r.json() == {"status": "ready", "checks": {"database": "ok", "model": "loaded"}}


def test_readyz_is_503_until_the_model_is_loaded(settings, monkeypatch):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    embeddings._provider.cache_clear()
    monkeypatch.setattr(embeddings, "_warmed", embeddings.threading.Event())
    r = Client().get("/readyz")
    assert r.status_code == 503
    assert r.json() == {"status": "not_ready", "checks": {"database": "ok", "model": "loading"}}
    embeddings.warm_up()
    r = Client().get("/readyz")
    assert r.status_code == 200 and r.json()["checks"]["model"] == "loaded"


def test_readyz_is_503_when_the_database_does_not_answer(settings, monkeypatch):
    settings.STEWARD_EMBEDDINGS = {}
    from django.db import DatabaseError

    from lib import health

    def broken():
        raise DatabaseError("connection refused")

    monkeypatch.setattr(health.connection, "cursor", broken)
    r = Client().get("/readyz")
    assert r.status_code == 503
    assert r.json()["checks"]["database"] == "unreachable"
