"""The optional cross-encoder reranker, with its real packaged model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory.search import cross_encoder, search
from memory.search.cross_encoder import CrossEncoderReranker, model_dir
from tests.factories import remember

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]

#: Turns of a chat where every one shares the question's common words; one answers it.
TURNS = [
    "Caroline: I went to the gym again today, my daily routine keeps me sane at work.",
    "Melanie: Long day at work, I walked the dog for a long time after.",
    "Caroline: My daily commute to work takes about forty minutes by train each way.",
    "Melanie: How long have you had that job? It sounds like a lot of work daily.",
    "Caroline: I bought new leather boots, they are good for long daily walks to work.",
]
QUESTION = "How long is Caroline's daily commute to work?"


def test_the_packaged_model_is_found_without_a_download():
    folder = model_dir()
    assert (folder / "model.onnx").stat().st_size > 10_000_000
    assert (folder / "tokenizer.json").is_file()


def test_the_cross_encoder_puts_the_turn_that_answers_first(memory, agent):
    for body in TURNS:
        remember(memory, agent.actor, body)
    plain = search(memory, actor=agent.actor, query=QUESTION, limit=5)
    ranked = search(
        memory, actor=agent.actor, query=QUESTION, limit=5, reranker=CrossEncoderReranker()
    )
    # The same members (the pool holds all five), the answer first.
    assert {h.entry_id for h in ranked.hits} == {h.entry_id for h in plain.hits}
    assert ranked.hits[0].body == TURNS[2]
    assert [h.rank for h in ranked.hits] == [1, 2, 3, 4, 5]


def test_the_setting_turns_it_on_for_every_search_and_the_trace_names_it(memory, agent, settings):
    for body in TURNS:
        remember(memory, agent.actor, body)
    settings.STEWARD_SEARCH = {
        **settings.STEWARD_SEARCH,
        "RERANKER": "memory.search.cross_encoder.CrossEncoderReranker",
    }
    result = search(memory, actor=agent.actor, query=QUESTION, limit=3, trace=True)
    assert result.hits[0].body == TURNS[2]
    assert result.trace.reranker == CrossEncoderReranker.name


def test_scores_do_not_depend_on_the_batch_a_pair_is_scored_in():
    model = cross_encoder._model()
    alone = [model.scores(QUESTION, [t])[0] for t in TURNS]
    together = model.scores(QUESTION, TURNS * 4)  # 20 pairs: two batches, padded
    assert together[:5] == pytest.approx(alone, abs=1e-3)
    assert together[15:20] == pytest.approx(alone, abs=1e-3)


def test_without_the_package_the_setting_is_refused_with_what_to_do(hide_package):
    hide_package(cross_encoder.PACKAGE)
    with pytest.raises(ImproperlyConfigured, match="unset STEWARD_RERANKER"):
        model_dir()


def _reranker_setting(value: str | None) -> str:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.STEWARD_SEARCH['RERANKER'])"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("STEWARD_RERANKER", None)
    if value is not None:
        env["STEWARD_RERANKER"] = value
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_the_environment_names_the_packaged_reranker_by_a_short_name_or_any_by_its_path():
    assert _reranker_setting(None) == "None"
    assert _reranker_setting("cross-encoder") == (
        "memory.search.cross_encoder.CrossEncoderReranker"
    )
    assert _reranker_setting("my.module.Reranker") == "my.module.Reranker"


def test_an_answer_holding_none_of_the_words_is_found_through_its_question(memory, agent):
    """ "Three times a week" answers the question turn before it; the search's words are all in
    the question. In a session, the pooled question brings its answer and the model reads the
    two together; written without sessions, the answer is never found."""
    turns = [
        "Caroline: I started going to the gym on weekdays, it helps me work on myself.",
        "Caroline: How often do you and your husband work out together?",
        "Melanie: Three times a week; it keeps us on track.",
        "Melanie: My husband and I went camping with the kids last summer.",
    ]
    query = "How often do Melanie and her husband work out?"
    for body in turns:
        remember(memory, agent.actor, body, session_id="s-1", dedupe=False)
    ranked = search(
        memory, actor=agent.actor, query=query, limit=3, reranker=CrossEncoderReranker()
    )
    assert turns[2] in [h.body for h in ranked.hits]


def test_without_a_session_the_answer_is_not_found(other_memory, agent):
    turns = [
        "Caroline: How often do you and your husband work out together?",
        "Melanie: Three times a week; it keeps us on track.",
    ]
    for body in turns:
        remember(other_memory, agent.actor, body, dedupe=False)
    ranked = search(
        other_memory,
        actor=agent.actor,
        query="How often do Melanie and her husband work out?",
        limit=3,
        reranker=CrossEncoderReranker(),
    )
    assert [h.body for h in ranked.hits] == [turns[0]]
