"""``manage.py evaluate quality_guard``: quality ranking when the answer is the weaker entry."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation.sections import quality_guard
from memory.embeddings import packaged_model_path

pytestmark = pytest.mark.django_db(transaction=True)


def run_section(tmp_path) -> dict:  # type: ignore[no-untyped-def]
    out = tmp_path / "report.json"
    call_command("evaluate", "quality_guard", "--quick", "--json", str(out))
    return json.loads(out.read_text())["quality_guard"]


def test_without_the_model_the_section_says_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(quality_guard, "model_unavailable", lambda: "skipped: no model here")
    assert run_section(tmp_path) == {"skipped": "skipped: no model here"}


def test_the_weaker_answers_keep_recall_and_lose_at_most_two_ranks(tmp_path):
    if packaged_model_path() is None:
        pytest.skip("no packaged embedding model is installed")
    r = run_section(tmp_path)
    assert r["rules_version"] == "quality:v4"
    assert r["queries"] == 34  # --quick: 6 per class, 2 per multilingual language (8)
    off, on = r["quality_off"], r["quality_on"]
    # Quality only permutes the pool: the top 10 holds the same answers either way.
    assert on["recall_at_10"] == off["recall_at_10"] > 0.8
    # The distractors carry +2 votes each, so the answers do lose places — within the bound.
    assert on["mrr"] <= off["mrr"]
    assert 0 <= r["answers_unseated"] < r["answers_first_quality_off"]
    assert 0 <= r["largest_answer_drop"] <= 2
