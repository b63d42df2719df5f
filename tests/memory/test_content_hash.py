"""The canonical content hash and the analyzer (property-based)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from memory.text import content_hash, normalize_body, tokenize

bodies = st.text(min_size=1, max_size=200)
refs = st.lists(st.text(min_size=1, max_size=30), max_size=6)


@given(bodies, refs)
def test_hash_ignores_normalization_form_trailing_space_and_evidence_order(body, evidence):
    base = content_hash("fact", body, evidence)
    assert content_hash("fact", unicodedata.normalize("NFD", body), evidence) == base
    assert content_hash("fact", body + "  \n", evidence) == base
    assert content_hash("fact", "\t" + body, list(reversed(evidence))) == base
    assert content_hash("fact", body, evidence + evidence) == base


@given(bodies, refs)
def test_hash_depends_on_kind_and_evidence(body, evidence):
    base = content_hash("fact", body, evidence)
    assert content_hash("decision", body, evidence) != base
    assert content_hash("fact", body, [*evidence, "\x00new-ref"]) != base


def test_hash_differs_for_different_bodies():
    assert content_hash("fact", "eu-2", []) != content_hash("fact", "eu-3", [])


@given(st.text(max_size=200))
def test_analyzer_is_idempotent_under_nfc(text):
    assert tokenize(unicodedata.normalize("NFC", text)) == tokenize(text)
    assert tokenize(unicodedata.normalize("NFD", text)) == tokenize(text)


def test_analyzer_makes_cjk_unigrams_and_bigrams():
    assert tokenize("部署目标") == ["部", "署", "目", "标", "部署", "署目", "目标"]
    assert tokenize("Use Redis_7 NOW") == ["use", "redis_7", "now"]


def test_normalize_body_is_nfc_and_trimmed():
    assert normalize_body("  Cafe\u0301 \n") == "Café"
