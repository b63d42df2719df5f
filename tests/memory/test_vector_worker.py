"""With a broker, a real Celery worker makes the vectors of a write within seconds (PostgreSQL:
the worker is another process and must see the same committed database)."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from memory import vectors
from memory.embeddings import require_provider
from memory.search import search
from tests.celery_worker import running_worker
from tests.factories import remember

pytestmark = [
    pytest.mark.celery,
    pytest.mark.semantic,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the worker needs a shared DB"),
    pytest.mark.django_db(transaction=True),
]


def test_a_worker_indexes_a_write_within_seconds(memory, agent, settings):
    with running_worker(STEWARD_EMBEDDINGS_PROVIDER="memory.embeddings.BgeSmallProvider"):
        # dedupe=False: the admission check does not embed it here, so only the worker can.
        version = remember(memory, agent.actor, "I adopted a cat named Miso.", dedupe=False).version
        missing = vectors.missing_versions(require_provider()).filter(pk=version.pk)
        deadline = time.monotonic() + 90  # the worker loads the model on its first task
        while missing.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not missing.exists(), "the worker did not make the vector"
    hits = search(memory, actor=agent.actor, query="what is my pet called?").hits
    assert [h.entry_id for h in hits][:1] == [version.entry.uid]
