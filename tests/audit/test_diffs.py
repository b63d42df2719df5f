"""Word diffs: they reproduce both texts exactly, mark only what changed, and treat each
CJK character as a word."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from lib.word_diff import DELETE, EQUAL, INSERT, changed, tokens, word_diff
from lib.word_diff import DiffSegment as Segment

texts = st.text(alphabet=st.sampled_from(list("ab c,.\n-_1部署目标éß\u0301\u3000")), max_size=60)


@given(texts)
def test_tokens_join_back_to_the_text(text):
    assert "".join(tokens(text)) == text


@given(texts, texts)
def test_segments_rebuild_both_texts(old, new):
    segments = word_diff(old, new)
    assert "".join(s.text for s in segments if s.op in (EQUAL, DELETE)) == old
    assert "".join(s.text for s in segments if s.op in (EQUAL, INSERT)) == new
    assert all(s.text for s in segments)
    assert all(a.op != b.op for a, b in itertools.pairwise(segments))
    assert changed(segments) == (old != new)


def test_a_changed_word_is_one_delete_and_one_insert():
    assert word_diff("The deploy target is eu-2", "The deploy target is eu-3") == [
        Segment(EQUAL, "The deploy target is "),
        Segment(DELETE, "eu-2"),
        Segment(INSERT, "eu-3"),
    ]


def test_a_value_is_one_unit_as_on_the_proposal_page():
    """A version, host, time or path is replaced whole, never diffed digit by digit."""
    for old, new in (
        ("Release 2.3.0 ships", "Release 2.4.1 ships"),
        ("Primary is db-main-1.helios.dev now", "Primary is db-main-2.helios.dev now"),
        ("Deploys at 14:00 UTC", "Deploys at 15:30 UTC"),
        ("Run scripts/deploy.sh first", "Run scripts/release.sh first"),
    ):
        removed = [s.text for s in word_diff(old, new) if s.op == DELETE]
        added = [s.text for s in word_diff(old, new) if s.op == INSERT]
        assert len(removed) == len(added) == 1 and " " not in removed[0] + added[0], (old, new)


def test_whole_words_not_letters_are_compared():
    segments = word_diff("cats sleep", "cars sleep")
    assert Segment(DELETE, "cats") in segments and Segment(INSERT, "cars") in segments


def test_cjk_characters_are_words():
    assert tokens("部署目标是eu") == ["部", "署", "目", "标", "是", "eu"]
    segments = word_diff("部署目标是东京", "部署目标是大阪")
    assert segments[0] == Segment(EQUAL, "部署目标是")
    assert Segment(DELETE, "东京") in segments and Segment(INSERT, "大阪") in segments
