"""Shorthand in a query is spelled out for the embedding model (``memory.search.abbreviations``)."""

from __future__ import annotations

import pytest

from memory.search.abbreviations import (
    ABBREVIATIONS,
    COUNTABLE,
    GLOSSARY_MAX,
    clean_glossary,
    glossary_problem,
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
        ("the PR's author", "the PR's (pull request's) author"),
        # A Chinese, Japanese or Korean letter next to it does not make a longer word.
        ("prod環境のDB", "prod (production)環境のDB (database)"),
        ("PR를 보냈다", "PR (pull request)를 보냈다"),
        # Capitalised anywhere, judged on the letters ("K8s"); plural possessive; quoted.
        ("is the K8s cluster down", "is the K8s (kubernetes) cluster down"),
        ("where is the Prod db?", "where is the Prod (production) db (database)?"),
        ("the PRs' titles", "the PRs' (pull requests') titles"),
        ("'PR' is", "'PR (pull request)' is"),
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
        # Written otherwise than shorthand is, or shorthand for something else.
        "what does Mr Tanaka do?",
        "5 lbs of coffee",
        "a 60 dB fan",
        "allergic to MSG",
        "Dev Patel joined",
        # Variables and code.
        "`pwd`",
        "ENV=prod",
        "$ENV",
        "#pr and @prod",
        # Two words joined by a slash, a possessive or not.
        "PR/issue",
        "PR's/issue's",
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
        {"approx.": "x"},
        {"x-": "x"},
        {"zephyr": "two\nlines"},
        # Two words differing only in case; a word whose lower case is another length.
        {"Zephyr": "a", "zephyr": "b"},
        {"İzmir": "x"},
        # A stop word would be read in nearly every question.
        {"IT": "the helpdesk"},
        {"the": "x"},
        {f"w{i}": "x" for i in range(GLOSSARY_MAX + 1)},
    ],
)
def test_the_glossary_cleaner_refuses_what_is_not_a_glossary(raw):
    assert clean_glossary(raw) is None
    assert glossary_problem(raw)


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
    assert error["details"]["policy.glossary"][0].startswith("'a b': one word")
    policy = api.as_(reviewer).get("/api/v1/memories/acme").json()["policy"]
    assert policy["glossary"] == {"zephyr": "the nightly export job"}


def test_a_search_reads_the_question_spelled_out_and_a_pass_reads_a_body_as_written(
    memory, agent, settings, monkeypatch
):
    # The maintenance passes look for an entry's neighbours with its body as the query: a
    # stored text is compared as written.
    from memory import vectors
    from memory.search import search, vector_channel
    from memory.search.common import ACTIVE

    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    seen: list[str] = []
    real = vectors.query_vector

    def recording(provider, text):
        seen.append(text)
        return real(provider, text)

    monkeypatch.setattr(vectors, "query_vector", recording)
    search(memory, actor=agent.actor, query="how big should a PR be")
    vector_channel(memory.pk, "The PR template lives in .github/", view=ACTIVE, limit=5)
    assert seen == ["how big should a PR (pull request) be", "The PR template lives in .github/"]


def test_the_trace_of_a_search_names_the_words_spelled_out(memory, reviewer, settings):
    from memory.search import search

    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    actor = reviewer.actor
    result = search(memory, actor=actor, query="Prod DB creds", trace=True)
    assert result.trace.as_dict()["spelled_out"] == {
        "Prod": "production",
        "DB": "database",
        "creds": "credentials",
    }
    assert (
        search(memory, actor=actor, query="what is my pet called?", trace=True).trace.spelled_out
        == {}
    )


def test_a_refused_word_is_named_and_shortened_in_the_message():
    assert glossary_problem({"İzmir": "x"}) == (
        "'İzmir': its lower case is another length; write it in lower case."
    )
    assert str(glossary_problem({"It": "the helpdesk"})).startswith("'It': a word this common")
    long = "x" * 60 + " y"
    assert str(glossary_problem({long: "z"})).startswith("'" + "x" * 38 + "…: one word")
