"""``manage.py evaluate dedupe``: the near-duplicate threshold sweep over labelled pairs, with
the admission check's own similarity (lexical; cosine with the real MiniLM model when its
package is installed)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation.sections import dedupe
from memory.dedupe import DEFAULT_TAU_SAME, DEFAULT_TAU_SIMILAR, lexical_similarity
from memory.embeddings import packaged_model_path, provider_calibration, provider_key

pytestmark = pytest.mark.django_db


def run_dedupe(tmp_path) -> dict:
    out = tmp_path / "report.json"
    call_command("evaluate", "dedupe", "--quick", "--json", str(out))
    return json.loads(out.read_text())["dedupe"]


def test_lexical_sweep_reports_defaults_best_f1_and_a_precise_threshold(tmp_path, monkeypatch):
    monkeypatch.setattr(dedupe, "model_unavailable", lambda: "skipped: no model here")
    d = run_dedupe(tmp_path)
    assert d["configured_method"] == "lexical"
    assert d["methods"]["cosine"] == {"skipped": "skipped: no model here"}
    lexical = d["methods"]["lexical"]
    pairs = dedupe.selected_pairs(dedupe.load_pairs()["pairs"], quick=True)
    assert d["pairs"] == len(pairs) == len(lexical["scores"])
    # the scores are the admission check's Jaccard
    assert lexical["scores"][0] == round(lexical_similarity(pairs[0]["a"], pairs[0]["b"]), 4)
    assert lexical["tau_same"]["default"]["tau"] == DEFAULT_TAU_SAME
    assert lexical["tau_similar"]["default"]["tau"] == DEFAULT_TAU_SIMILAR
    for decision in ("tau_same", "tau_similar"):
        result = lexical[decision]
        assert len(result["curve"]) == 101
        best = result["best_f1"]
        assert best["f1"] == max(c["f1"] for c in result["curve"])
        precise = result["precision_at_least_0.9"]
        assert precise is None or precise["precision"] >= 0.9
        # recall never rises with the threshold
        recalls = [c["recall"] for c in result["curve"]]
        assert recalls == sorted(recalls, reverse=True)
    means = lexical["score_by_label"]
    assert means["same"]["mean"] > means["similar"]["mean"] > means["different"]["mean"]


def test_cosine_sweep_with_the_packaged_model(tmp_path):
    path = packaged_model_path()
    if path is None:
        pytest.skip("no packaged embedding model is installed")
    d = run_dedupe(tmp_path)
    cosine = d["methods"]["cosine"]
    assert cosine["model"] == provider_key(path)
    # The "at default" point is the measured model's own threshold, not another model's.
    own = provider_calibration(path)
    assert d["defaults"]["cosine"] == {"tau_same": own.tau_same, "tau_similar": own.tau_similar}
    assert cosine["tau_similar"]["default"]["tau"] == own.tau_similar
    assert all(0.0 <= s <= 1.0 for s in cosine["scores"])
    means = cosine["score_by_label"]
    assert means["same"]["mean"] > means["similar"]["mean"] > means["different"]["mean"]
    # restatements score higher with meaning than with shared words
    assert means["same"]["mean"] > d["methods"]["lexical"]["score_by_label"]["same"]["mean"]
