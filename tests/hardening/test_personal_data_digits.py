"""The personal-data finders skip a text with too few digits to hold a card or a national id
(``memory.personal_data.MIN_CARD_DIGITS`` / ``MIN_ID_DIGITS``): every shape they look for is
held to those minimums here, so a new shape with fewer digits fails this test, not silently."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.personal_data import (
    _CARD,
    _IDS,
    MIN_CARD_DIGITS,
    MIN_ID_DIGITS,
    find_personal_data,
)

LOOKAROUND = re.compile(r"\(\?<?[!=](?:[^()]|\([^()]*\))*\)")


def bare(pattern: re.Pattern[str]) -> str:
    """The pattern without its lookarounds: what a match itself is made of."""
    return LOOKAROUND.sub("", pattern.pattern)


@pytest.mark.parametrize(
    "pattern, least",
    [(p, MIN_ID_DIGITS) for p, _ in _IDS] + [(_CARD, MIN_CARD_DIGITS)],
    ids=lambda v: v.pattern[:30] if isinstance(v, re.Pattern) else str(v),
)
def test_every_shape_holds_at_least_the_digits_the_finder_asks_for(pattern, least):
    @settings(max_examples=60, deadline=None)
    @given(st.from_regex(bare(pattern), fullmatch=True))
    def check(text: str) -> None:
        assert sum(ch.isdigit() for ch in text) >= least, text

    check()


def test_the_shortest_labelled_id_and_card_are_still_found():
    assert find_personal_data("NINO AB 12 34 56 C") == ["government_id"]
    assert find_personal_data("her SSN: 123456") == ["government_id"]  # six digits, labelled
    assert find_personal_data("SSN: 12345") == []
    assert find_personal_data("Maestro 5000 0000 0000 5") == ["card"]  # thirteen digits
