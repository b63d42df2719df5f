"""The labelled corpora are consistent: ids resolve, classes and languages are large enough,
multilingual queries ask about memories in their own language, pair labels are known."""

from __future__ import annotations

from collections import Counter

from evaluation.sections.dedupe import LABELS, load_pairs
from evaluation.sections.recall import CLASSES, LANGUAGES, load_corpus

CORPUS = load_corpus()
MEMORIES = {m["id"]: m for m in CORPUS["memories"]}


def test_memory_ids_and_bodies_are_unique():
    assert len(MEMORIES) == len(CORPUS["memories"])
    assert len({m["body"] for m in CORPUS["memories"]}) == len(CORPUS["memories"])
    assert 80 <= len(MEMORIES) <= 140


def test_every_language_has_at_least_six_memories():
    langs = Counter(m["lang"] for m in CORPUS["memories"])
    assert set(langs) == {"en", *LANGUAGES}
    assert all(langs[lang] >= 6 for lang in LANGUAGES), langs


def test_every_relevant_id_and_every_distractor_target_exists():
    for q in CORPUS["queries"]:
        assert q["relevant"], q
        assert all(r in MEMORIES for r in q["relevant"]), q
    for m in CORPUS["memories"]:
        if "distractor_of" in m:
            assert m["distractor_of"] in MEMORIES, m
            assert m["distractor_of"] != m["id"]


def test_query_classes_are_large_enough():
    queries = CORPUS["queries"]
    assert len(queries) >= 150
    assert len({q["id"] for q in queries}) == len(queries)
    assert len({(q["class"], q["text"]) for q in queries}) == len(queries)
    classes = Counter(q["class"] for q in queries)
    assert set(classes) == set(CLASSES)
    assert all(classes[c] >= 25 for c in CLASSES), classes


def test_multilingual_queries_ask_about_memories_in_their_language():
    multilingual = [q for q in CORPUS["queries"] if q["class"] == "multilingual"]
    per_lang = Counter(q["lang"] for q in multilingual)
    assert all(per_lang[lang] >= 5 for lang in LANGUAGES), per_lang
    for q in multilingual:
        assert {MEMORIES[r]["lang"] for r in q["relevant"]} == {q["lang"]}, q
    others = [q for q in CORPUS["queries"] if q["class"] != "multilingual"]
    assert all(q["lang"] == "en" for q in others)


def test_no_query_counts_a_distractor_and_its_target_as_relevant():
    distractors = [m for m in CORPUS["memories"] if "distractor_of" in m]
    assert len(distractors) >= 20
    for q in CORPUS["queries"]:
        targets = {MEMORIES[r].get("distractor_of") for r in q["relevant"]}
        assert not targets & set(q["relevant"]), q


def test_near_duplicate_pairs_are_labelled_and_distinct():
    pairs = load_pairs()["pairs"]
    assert len(pairs) >= 80
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert len({(p["a"], p["b"]) for p in pairs}) == len(pairs)
    labels = Counter(p["label"] for p in pairs)
    assert set(labels) == set(LABELS)
    assert all(labels[label] >= 25 for label in LABELS), labels
    assert all(p["a"] != p["b"] for p in pairs)
