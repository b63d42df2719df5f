"""``manage.py evaluate near_duplicates``: the near-duplicate pass's own pair rule on labelled
pairs of agent memories (restatements against same-subject pairs), lexically and with the real
MiniLM model when its package is installed."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation import restatement_corpus as corpus
from evaluation.sections import dedupe
from evaluation.sections import near_duplicates as section
from memory.dedupe import lexical_similarity
from memory.embeddings import packaged_model_path, provider_key
from memory.models import Memory
from proposals.passes.near_duplicates import default_parameters, pair_edge

pytestmark = pytest.mark.django_db


def run_section(tmp_path) -> dict:
    out = tmp_path / "report.json"
    call_command("evaluate", "near_duplicates", "--quick", "--json", str(out))
    return json.loads(out.read_text())["near_duplicates"]


def test_the_corpus_is_labelled_split_and_multilingual():
    ids = [p.id for p in corpus.PAIRS]
    assert len(ids) == len(set(ids)) >= 150
    assert {p.label for p in corpus.PAIRS} == set(corpus.LABELS)
    assert {p.lang for p in corpus.PAIRS} >= {"en", "zh", "ja", "ar", "hi", "th"}
    halves = [corpus.split(p) for p in corpus.PAIRS]
    assert 0.25 < halves.count("held_out") / len(halves) < 0.4
    for label in corpus.LABELS:  # both halves hold every label
        assert {corpus.split(p) for p in corpus.PAIRS if p.label == label} == set(corpus.SPLITS)


def test_lexical_figures_are_the_pass_rule_on_the_jaccard(tmp_path, monkeypatch):
    monkeypatch.setattr(dedupe, "model_unavailable", lambda: "skipped: no model here")
    d = run_section(tmp_path)
    assert d["methods"]["cosine"] == {"skipped": "skipped: no model here"}
    lexical = d["methods"]["lexical"]
    pairs = section.selected_pairs(quick=True)
    assert d["ids"] == [p.id for p in pairs] and d["pairs"] == len(pairs)
    threshold, min_subject = default_parameters(Memory(policy={}), "lexical")
    assert (lexical["threshold"], lexical["min_subject"]) == (threshold, min_subject)
    for p, score, paired in zip(pairs, lexical["scores"], lexical["paired"], strict=True):
        assert score == round(lexical_similarity(p.a, p.b), 4)
        verdict, _ = pair_edge(p.a, p.b, score, threshold=threshold, min_subject=min_subject)
        assert paired == (verdict is None)
    assert set(lexical["by_language"]) == {p.lang for p in pairs}
    assert set(lexical["by_label"]) == set(corpus.LABELS)
    assert [s["threshold"] for s in lexical["sweep"]] == section.SWEEP
    # recall never rises with the threshold
    recalls = [s["all"]["recall"] for s in lexical["sweep"]]
    assert recalls == sorted(recalls, reverse=True)


def test_with_the_real_model_restatements_pair_and_other_values_do_not(tmp_path):
    path = packaged_model_path()
    if path is None:
        pytest.skip("no packaged embedding model is installed")
    report = run_section(tmp_path)
    cosine = report["methods"]["cosine"]
    assert cosine["model"] == provider_key(path)
    labels = cosine["by_label"]
    # Restatements in other words ("runs on GitHub Actions" / "ship through GitHub Actions
    # workflows") each say something the other does not, as another method or actor would: the
    # pass no longer merges them. The same sentence with another value is never paired.
    paired = dict(zip(report["ids"], cosine["paired"], strict=True))
    english = [x for pair_id, x in paired.items() if pair_id.startswith("en-restatement-")]
    assert english and not any(english)
    assert labels["different_value"]["paired"] == 0
    assert labels["different_fact"]["paired"] == 0
    # Pairs in scripts the model cannot read (Thai, Korean, Hindi…) are judged by their words:
    # the unrelated ones, which the model scores as restatements, are never paired.
    assert cosine["unread_pairs"] > 0
    assert labels["unrelated"]["paired"] == 0
    assert cosine["all"]["precision"] == 1.0
