"""Shorthand in a query is spelled out for the embedding model (``memory.search.abbreviations``)."""

from __future__ import annotations

import pytest

from memory.search.abbreviations import ABBREVIATIONS, COUNTABLE, spelled_out


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("how big should a PR be", "how big should a PR (pull request) be"),
        ("two PRs and three repos", "two PRs (pull requests) and three repos (repositories)"),
        ("where are the creds stored?", "where are the creds (credentials) stored?"),
        ("Prod DB password", "Prod (production) DB (database) password"),
        ("is the tz UTC", "is the tz (time zone) UTC"),
        ("which env.", "which env (environment)."),
    ],
)
def test_shorthand_gets_its_long_form_after_it(query, read):
    assert spelled_out(query) == read


@pytest.mark.parametrize(
    "query",
    [
        # Names: joined by a hyphen, inside a path or a URL, a file name.
        "k8s-prod-2",
        "the pre-prod cluster",
        "https://git.acme.dev/pr/12",
        "see config.yaml",
        "docs/adr",
        # Inside a longer word, and a plural that means something else ("devs": developers).
        "approach production previews",
        "the devs",
        "what is my pet called?",
    ],
)
def test_names_longer_words_and_other_plurals_are_left_alone(query):
    assert spelled_out(query) == query


def test_every_countable_shorthand_is_on_the_list():
    assert set(COUNTABLE) <= set(ABBREVIATIONS)
