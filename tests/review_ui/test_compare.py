"""Word-level comparison for the proposal page (pure functions)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from review.compare import _tokens, annotate_input, annotate_result, inline_diff, lost_spans

PIECES = [*"ab cd,.:/<>&'\"\n部署窗口Éé", "02:00", "UTC", "deploy.sh", "  "]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def words(text: str) -> list[str]:
    return [t for *_, t in _tokens(text)]


@given(texts, texts, st.lists(texts, max_size=3))
def test_segments_always_give_the_text_back(text, result, lost):
    assert "".join(s.text for s in annotate_input(text, result, lost)) == text
    assert "".join(s.text for s in annotate_result(result, [text])) == result


@given(texts, texts)
def test_inline_diff_reads_as_the_new_text_and_keeps_every_old_word(old, new):
    segments = inline_diff(old, new)
    kept_new = "".join(s.text for s in segments if not s.removed)
    assert kept_new == (new if words(new) else "")
    # Word for word, the old text is the equal and removed segments (each read on its own).
    assert [w for s in segments if not s.added for w in words(s.text)] == words(old)
    # A removed segment never runs into its neighbours.
    for a, b in itertools.pairwise(segments):
        if a.removed != b.removed:
            assert a.text[-1:].isspace() or b.text[:1].isspace(), (a, b)


def test_dropped_words_and_lost_details_are_marked_in_the_input():
    segs = annotate_input(
        "Deploy runs at 02:00 UTC via deploy.sh", "Deploys run nightly", ["02:00", "deploy.sh"]
    )
    lost = [s.text for s in segs if s.lost]
    assert lost == ["02:00", "deploy.sh"]
    assert all(s.removed for s in segs if s.text.strip())


def test_case_only_differences_are_not_changes():
    segs = annotate_input("deploys run NIGHTLY", "Deploys run nightly")
    assert not any(s.removed for s in segs)


def test_new_words_are_marked_in_the_result_and_shared_words_are_not():
    segs = annotate_result(
        "Deploys run nightly at 02:00 UTC from main", ["Deploy at 02:00 UTC", "Deploys run nightly"]
    )
    assert [s.text for s in segs if s.added] == ["from main"]


def test_each_cjk_character_is_its_own_word():
    segs = annotate_input("部署窗口是每周二", "部署窗口是每周三")
    assert [s.text for s in segs if s.removed] == ["二"]


def test_lost_detail_spans_match_whole_tokens_case_insensitively():
    assert lost_spans("Runs at 3 and 30 and v3.11", ["3"]) == [(8, 9)]
    assert lost_spans("see DEPLOY.SH", ["deploy.sh"]) == [(4, 13)]
