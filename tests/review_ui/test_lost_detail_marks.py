"""A lost detail is highlighted as one contiguous mark in the input it comes from, dropped from
end to end, even where one of its punctuation marks also occurs in the result."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from review.compare import annotate_input
from tests.review_ui.conftest import consolidate
from tests.review_ui.test_compare import texts

SOURCE = "Production deploys run at 02:00 UTC via scripts/deploy.sh."
RESULT = "Deploys run nightly."
LOST = ["02:00", "UTC", "scripts/deploy.sh"]


def test_each_lost_detail_is_one_mark_dropped_from_end_to_end():
    segs = annotate_input(SOURCE, RESULT, LOST)
    marks = [s for s in segs if s.lost]
    assert [s.text for s in marks] == LOST
    assert all(s.removed for s in marks)


def test_the_sentence_end_is_aligned_with_the_result_rather_than_a_lost_detail_s_dot():
    segs = annotate_input(SOURCE, RESULT, LOST)
    assert segs[-1].text == "." and not segs[-1].removed and not segs[-1].lost
    assert "".join(s.text for s in segs) == SOURCE


@pytest.mark.django_db
def test_the_proposal_page_marks_a_lost_path_as_one_gone_mark(rita, memory, agent):
    lossy = consolidate(
        memory,
        agent.actor,
        a="Deploys run nightly",
        b=SOURCE,
        body=RESULT,
        evidence_a=[{"source": "repo", "ref": "scripts/deploy.sh"}],
        rationale="Shorter",
    )
    html = rita.get(f"/review/proposals/{lossy.pk}/").content.decode()
    source = html.split('<div class="pane-inputs">')[1].split('<div class="flow-arrow"')[0]
    for detail in LOST:
        assert (
            f'<mark class="lost gone" title="Lost detail: not in the result">{detail}</mark>'
            in source
        )
    assert '<mark class="lost" ' not in source


@given(texts, texts, st.lists(texts, max_size=3))
def test_every_lost_mark_is_dropped_whole(text, result, lost):
    assert all(s.removed for s in annotate_input(text, result, lost) if s.lost)
