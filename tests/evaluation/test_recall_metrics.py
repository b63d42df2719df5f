"""The retrieval and calibration metrics, against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from evaluation.metrics import ndcg_at_k, precision_recall_f1, recall_at_k, reciprocal_rank


def test_recall_at_k_counts_relevant_items_in_the_first_k():
    ranked = ["a", "x", "b", "y"]
    assert recall_at_k(ranked, {"a", "b"}, 1) == 0.5
    assert recall_at_k(ranked, {"a", "b"}, 2) == 0.5
    assert recall_at_k(ranked, {"a", "b"}, 3) == 1.0
    assert recall_at_k(ranked, {"z"}, 10) == 0.0
    assert recall_at_k(ranked, set(), 5) == 1.0


def test_reciprocal_rank_is_one_over_the_first_relevant_rank():
    assert reciprocal_rank(["x", "y", "a", "b"], {"a", "b"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], {"a"}) == 0.0


def test_ndcg_of_one_relevant_item_at_rank_two():
    # DCG = 1/log2(3); IDCG = 1/log2(2) = 1
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))


def test_ndcg_of_two_relevant_items_at_ranks_one_and_three():
    # DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
    expected = 1.5 / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(expected)
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(0.919721, abs=1e-6)


def test_ndcg_ignores_items_after_k_and_counts_a_repeat_once():
    assert ndcg_at_k(["x", "y", "a"], {"a"}, 2) == 0.0
    assert ndcg_at_k(["a", "a"], {"a", "b"}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "b"], {"a", "b"}, 10) == 1.0
    assert ndcg_at_k([], set(), 10) == 1.0


def test_precision_recall_f1_of_a_threshold():
    scores = [0.9, 0.7, 0.4, 0.2]
    positive = [True, False, True, False]
    # tau 0.5 accepts 0.9 (TP) and 0.7 (FP), misses 0.4 (FN)
    assert precision_recall_f1(scores, positive, 0.5) == pytest.approx((0.5, 0.5, 0.5))
    # tau 0 accepts everything: P = 2/4, R = 1, F1 = 2/3
    assert precision_recall_f1(scores, positive, 0.0) == pytest.approx((0.5, 1.0, 2 / 3))
    # a score equal to tau is accepted
    assert precision_recall_f1(scores, positive, 0.4) == pytest.approx((2 / 3, 1.0, 0.8))
    # accepting nothing makes no false claim, and finds nothing
    assert precision_recall_f1(scores, positive, 0.95) == (1.0, 0.0, 0.0)
