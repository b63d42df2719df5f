"""Word-level comparison for the proposal page (pure functions)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from review.compare import (
    _tokens,
    annotate_input,
    annotate_result,
    inline_diff,
    lost_spans,
)
from tests.review_ui.conftest import consolidate

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


#: (input, result, the unit the result drops, the unit it adds): each changes in one place.
ONE_UNIT_CHANGES = {
    "version": (
        "The current release is version 2.3.0.",
        "The current release is version 2.4.1.",
        "2.3.0",
        "2.4.1",
    ),
    "address": (
        "The cache listens on 10.0.0.12.",
        "The cache listens on 10.0.0.14.",
        "10.0.0.12",
        "10.0.0.14",
    ),
    "host": (
        "The main database is on db-main-1.helios.dev.",
        "The main database is on db-main-2.helios.dev.",
        "db-main-1.helios.dev",
        "db-main-2.helios.dev",
    ),
    "time": (
        "Planning is on Monday at 14:00 CET.",
        "Planning is on Monday at 14:30 CET.",
        "14:00",
        "14:30",
    ),
    "path": (
        "Dashboards live in ops/grafana/.",
        "Dashboards live in ops/dashboards/.",
        "ops/grafana/",
        "ops/dashboards/",
    ),
    "url": (
        "Flags: https://flags.helios.dev/api.",
        "Flags: https://flags.helios.dev/v2.",
        "https://flags.helios.dev/api",
        "https://flags.helios.dev/v2",
    ),
}


@pytest.mark.parametrize(
    "old, new, dropped, added", ONE_UNIT_CHANGES.values(), ids=ONE_UNIT_CHANGES.keys()
)
def test_a_version_address_host_time_or_path_changes_as_one_unit(old, new, dropped, added):
    """ "2.3.0 → 2.4.1" is one value dropped and one added, not a diff of its digits ("2." kept,
    "3" dropped, "4" added …); the sentence's final "." stays a token of its own, shared."""
    assert [s.text for s in annotate_input(old, new) if s.removed] == [dropped]
    assert [s.text for s in annotate_result(new, [old]) if s.added] == [added]
    inline = inline_diff(old, new)
    assert [s.text.strip() for s in inline if s.removed] == [dropped]
    assert [s.text for s in inline if s.added] == [f" {added}"]


@pytest.mark.django_db
def test_the_proposal_page_shows_a_new_version_as_one_insertion(rita, memory, agent):
    proposal = consolidate(
        memory,
        agent.actor,
        a="The current release is version 2.3.0",
        b="The current release is version 2.3.0 on PyPI",
        body="The current release is version 2.4.1 on PyPI",
        rationale="Release bumped",
    )
    html = rita.get(f"/review/proposals/{proposal.pk}/").content.decode()
    result = html.split('<article class="pane pane-result"')[1].split("</article>")[0]
    assert '<ins title="New in the result">2.4.1</ins>' in result
    inputs = html.split('<div class="pane-inputs">')[1].split('<div class="flow-arrow"')[0]
    assert ">2.3.0</mark>" in inputs
