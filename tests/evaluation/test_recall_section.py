"""``manage.py evaluate recall``: the corpus written through ``add_entry``, every query run under
the four configurations; vector and hybrid with the real local MiniLM model (skipped without
its package), and reported as skipped — not crashing — when the model is unavailable."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import connection

from evaluation.sections import recall
from evaluation.sections.recall import CLASSES, CONFIGURATIONS, LANGUAGES
from memory.embeddings import packaged_model_path, provider_key
from memory.models import Entry, Memory

pytestmark = pytest.mark.django_db

METRICS = {"queries", "recall_at_5", "recall_at_10", "mrr", "ndcg_at_10"}


def run_recall(tmp_path, *args: str) -> dict:
    out = tmp_path / "report.json"
    call_command("evaluate", "recall", "--quick", "--json", str(out), *args)
    return json.loads(out.read_text())


def test_without_the_model_lexical_recall_is_measured_and_vector_is_skipped(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(recall, "model_unavailable", lambda: "skipped: no model here")
    report = run_recall(tmp_path)
    r = report["recall"]
    assert r["backend"] == connection.vendor
    assert r["model"] is None
    assert r["configurations"]["vector"] == {"skipped": "skipped: no model here"}
    assert r["configurations"]["hybrid"] == {"skipped": "skipped: no model here"}
    for name in ("lexical", "lexical+stemming"):
        result = r["configurations"][name]
        assert set(result["by_class"]) == set(CLASSES)
        assert set(result["by_language"]) == set(LANGUAGES)
        assert all(set(s) == METRICS for s in result["by_class"].values())
        # exact terms are found; paraphrases sharing no words are not: the figures measure
        assert result["by_class"]["keyword"]["recall_at_10"] == 1.0
        assert result["by_class"]["paraphrase"]["recall_at_10"] < 0.5
    assert (
        r["corpus"]["queries"]
        == len(r["ranks"])
        == sum(s["queries"] for s in r["configurations"]["lexical"]["by_class"].values())
    )
    printed = capsys.readouterr().out
    assert "lexical+stemming keyword" in printed
    assert "skipped: no model here" in printed
    # the corpus went into two marked throwaway Memories through add_entry
    slugs = report["meta"]["memories"]
    assert len(slugs) == 2 and all(s.startswith("eval-") for s in slugs)
    for memory in Memory.objects.filter(slug__in=slugs):
        assert memory.name.startswith("[evaluation]")
        assert Entry.objects.filter(memory=memory).count() == r["corpus"]["memories"]


def test_vector_and_hybrid_run_with_the_packaged_model(tmp_path):
    path = packaged_model_path()
    if path is None:
        pytest.skip("no packaged embedding model is installed")
    r = run_recall(tmp_path)["recall"]
    assert r["model"] == provider_key(path)
    assert r["heads_with_vectors"] == r["corpus"]["memories"]
    configs = r["configurations"]
    assert set(configs) == set(CONFIGURATIONS)
    assert all("skipped" not in configs[name] for name in CONFIGURATIONS)
    # meaning, not words: the model finds paraphrases the lexical channel cannot
    para = {name: configs[name]["by_class"]["paraphrase"]["recall_at_10"] for name in configs}
    assert para["vector"] > para["lexical"]
    assert para["hybrid"] > para["lexical+stemming"]
    assert (
        configs["hybrid"]["all"]["recall_at_10"]
        >= configs["lexical+stemming"]["all"]["recall_at_10"]
    )
    for row in r["ranks"]:
        assert set(CONFIGURATIONS) <= set(row)
