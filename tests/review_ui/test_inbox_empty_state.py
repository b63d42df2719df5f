"""What the inbox says when its page is empty: "the queue is clear" only when no filter narrows
it; with filters, that nothing matches them, with a link that clears them (keeping the order)."""

from __future__ import annotations

import re

import pytest

from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db

CLEAR = re.compile(r'<a href="([^"]*)" data-clear-filters>Clear the filters</a>')


def clear_link(text: str) -> str:
    found = CLEAR.search(text)
    assert found, "no link that clears the filters"
    return found.group(1)


def empty_state(html: str) -> str:
    found = re.search(r'<li class="empty">(.*?)</li>', html, re.S)
    assert found, "no empty-state row"
    return found.group(1)


def test_an_empty_queue_without_filters_is_clear(rita, memory):
    text = empty_state(rita.get("/review/").content.decode())
    assert "The queue is clear." in text
    assert "No proposal matches" not in text and "data-clear-filters" not in text


def test_a_search_that_matches_nothing_says_so_and_offers_to_clear_the_filters(rita, memory, agent):
    consolidate(memory, agent.actor)
    html = rita.get("/review/?q=zzzznotthere&sort=newest").content.decode()
    text = empty_state(html)
    assert "The queue is clear" not in text
    assert "No proposal matches these filters." in text
    assert clear_link(text) == "/review/?sort=newest"


@pytest.mark.parametrize(
    "query",
    ["kind=cleanup", "memory=acme&lost=yes", "status=approved", "claimed=me&assigned=me"],
)
def test_any_narrowing_filter_replaces_the_clear_queue_message(rita, memory, agent, query):
    consolidate(memory, agent.actor)
    text = empty_state(rita.get(f"/review/?{query}").content.decode())
    assert "The queue is clear" not in text
    assert clear_link(text) == "/review/"


def test_order_alone_is_no_filter(rita, memory):
    html = rita.get("/review/?sort=newest&limit=5").content.decode()
    assert "The queue is clear." in empty_state(html)
