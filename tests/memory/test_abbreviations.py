"""Shorthand in a query is spelled out for the embedding model (``memory.search.abbreviations``)."""

from __future__ import annotations

import pytest

from memory.search.abbreviations import (
    ABBREVIATIONS,
    COUNTABLE,
    GLOSSARY_MAX,
    clean_glossary,
    spelled_out,
)


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


# --- A Memory's own glossary (policy.glossary) ---------------------------------------------------


def test_a_memorys_glossary_is_spelled_out_too_and_wins_over_the_list():
    glossary = {"zephyr": "the nightly export job", "pr": "press release"}
    assert spelled_out("where does ZEPHYR upload to?", glossary) == (
        "where does ZEPHYR (the nightly export job) upload to?"
    )
    assert spelled_out("the PR is out", glossary) == "the PR (press release) is out"
    # A glossary word may be a name: no plural "s" is read onto it.
    assert spelled_out("two zephyrs", glossary) == "two zephyrs"
    assert spelled_out("the db", glossary) == "the db (database)"


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ({}, {}),
        ({"Zephyr": "  the nightly\texport job "}, {"zephyr": "the nightly export job"}),
        (
            {"C++": "the native client", "v2.api": "the old API"},
            {"c++": "the native client", "v2.api": "the old API"},
        ),
    ],
)
def test_the_glossary_cleaner_keeps_one_word_and_one_line(raw, cleaned):
    assert clean_glossary(raw) == cleaned


@pytest.mark.parametrize(
    "raw",
    [
        ["zephyr"],
        {"two words": "x"},
        {"_x": "x"},
        {"z" * 33: "x"},
        {"zephyr": ""},
        {"zephyr": "x" * 101},
        {"zephyr": 3},
        {f"w{i}": "x" for i in range(GLOSSARY_MAX + 1)},
    ],
)
def test_the_glossary_cleaner_refuses_what_is_not_a_glossary(raw):
    assert clean_glossary(raw) is None


def test_a_reviewer_sets_the_glossary_over_rest_and_a_bad_one_is_a_clear_400(api, reviewer):
    r = api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"glossary": {"Zephyr": "the nightly export job"}}}
    )
    assert r.status_code == 200, r.text
    assert r.json()["policy"]["glossary"] == {"zephyr": "the nightly export job"}
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"glossary": {"a b": "x"}}})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid" and list(error["details"]) == ["policy.glossary"]
    policy = api.as_(reviewer).get("/api/v1/memories/acme").json()["policy"]
    assert policy["glossary"] == {"zephyr": "the nightly export job"}
