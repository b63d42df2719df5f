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
from memory.search.hits import Hit
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


def _hit(pk: int, body: str, asked: str | None = None) -> Hit:
    return Hit(
        entry_pk=pk,
        version_pk=pk,
        entry_id=f"e{pk}",
        version=1,
        body=body,
        score=0.0,
        channels={},
        validity="current",
        validity_reason="",
        successor_entry=None,
        time_known=True,
        recorded_at=None,
        effective_at=None,
        is_head=True,
        state="active",
        current_state=False,
        asked=asked,
    )


def test_an_answer_is_also_scored_after_the_question_it_answers():
    """ "Mostly sunsets." means little alone; read after "What does your daughter
    like to paint?" it answers the search, and moves above the turns that only share words."""
    query = "What does Melanie's daughter like to paint?"
    question = "Caroline: What does your daughter like to paint these days?"
    answer = "Melanie: Mostly sunsets."
    others = [
        "Melanie: My daughter loves to paint with me on weekends.",
        "Caroline: I painted my kitchen last week, it took all day.",
    ]
    alone = [_hit(1, others[0]), _hit(2, others[1]), _hit(3, answer)]
    read = [_hit(1, others[0]), _hit(2, others[1]), _hit(3, answer, asked=question)]
    reranker = CrossEncoderReranker()
    assert reranker.rerank(query, alone)[0].body != answer
    assert reranker.rerank(query, read)[0].body == answer
