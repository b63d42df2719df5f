"""``manage.py evaluate conversations``: LoCoMo- and LongMemEval-format files loaded a turn per
entry and asked through the agent's search, beside a plain BM25 reference (small synthetic files
in the two formats here; the real data sets are read from the paths given at the command line)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation.sections.conversations import PlainBM25, read_locomo

pytestmark = pytest.mark.django_db


def _locomo(tmp_path):
    sessions = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {
                "speaker": "Mel",
                "dia_id": "D1:1",
                "text": "How long have you and your husband been married?",
            },
            {"speaker": "Caroline", "dia_id": "D1:2", "text": "5 years already!"},
            {
                "speaker": "Mel",
                "dia_id": "D1:3",
                "text": "I painted a sunrise over the lake last week.",
            },
        ],
        "session_2_date_time": "10:00 am on 9 May, 2023",
        "session_2": [
            {
                "speaker": "Caroline",
                "dia_id": "D2:1",
                "text": "My daily commute takes 45 minutes each way.",
            },
            {
                "speaker": "Mel",
                "dia_id": "D2:2",
                "text": "Long days at work wear my leather boots out daily.",
                "blip_caption": "a pair of brown boots",
            },
        ],
    }
    data = [
        {
            "sample_id": "t0",
            "conversation": {"speaker_a": "Mel", "speaker_b": "Caroline", **sessions},
            "qa": [
                {
                    "question": "How long have Caroline and her husband been married?",
                    "evidence": ["D1:2"],
                    "category": 4,
                },
                {
                    "question": "How long is Caroline's daily commute to work?",
                    "evidence": ["D2:1"],
                    "category": 1,
                },
                {"question": "What did Mel paint?", "evidence": ["D1:3"], "category": 4},
                {"question": "What did Caroline paint?", "evidence": [], "category": 5},
            ],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    return path


def _longmemeval(tmp_path):
    folder = tmp_path / "lme"
    folder.mkdir()
    sessions = [
        {
            "id": "answer_1",
            "timestamp": "2023/05/20 (Sat) 02:21",
            "turns": [
                {
                    "id": "a1",
                    "role": "user",
                    "content": "I graduated with a degree in Business Administration.",
                    "metadata": {"has_answer": True},
                },
                {
                    "id": "a2",
                    "role": "assistant",
                    "content": "Congratulations on your graduation!",
                    "metadata": {"has_answer": False},
                },
            ],
        },
        {
            "id": "other_1",
            "timestamp": "2023/05/21 (Sun) 10:00",
            "turns": [
                {
                    "id": "o1",
                    "role": "user",
                    "content": "Recommend a recipe for pancakes.",
                    "metadata": {"has_answer": False},
                },
            ],
        },
    ]
    (folder / "sessions.jsonl").write_text("\n".join(json.dumps(s) for s in sessions))
    q = {
        "question": "What degree did I graduate with?",
        "category": "information_extraction",
        "ground_truth": {"supporting_session_ids": ["answer_1"]},
    }
    (folder / "questions.jsonl").write_text(json.dumps(q))
    return folder


def test_both_formats_are_loaded_and_every_configuration_reported(tmp_path, settings):
    settings.STEWARD_EMBEDDINGS = {**settings.STEWARD_EMBEDDINGS, "PROVIDER": None}
    out = tmp_path / "report.json"
    call_command(
        "evaluate",
        "conversations",
        "--locomo",
        str(_locomo(tmp_path)),
        "--longmemeval",
        str(_longmemeval(tmp_path)),
        "--json",
        str(out),
    )
    report = json.loads(out.read_text())["conversations"]
    locomo = report["locomo"]["configurations"]
    # Without a model: the lexical channel and the reference only.
    assert set(locomo) == {"bm25", "lexical"}
    # Categories 1–4 are scored (three questions); category 5 is reported apart, and a
    # question without evidence in the file is left out.
    assert locomo["lexical"]["questions"] == 3
    assert set(locomo["lexical"]["categories"]) == {"1", "4"}
    # The short reply is found by the question it answers (indexed with the turn before it),
    # the commute turn by its rare word; both first.
    assert locomo["lexical"]["all"]["any@5"] == 1.0
    assert locomo["lexical"]["all"]["session_any@5"] == 1.0
    lme = report["longmemeval"]["configurations"]["lexical"]["all"]
    assert lme["session_r@5"] == 1.0 and lme["turn_r@5"] == 1.0 and lme["mrr"] == 1.0
    assert report["locomo"]["import_turns_per_s"] > 0


def test_without_paths_the_section_says_what_it_needs(tmp_path, capsys):
    call_command("evaluate", "conversations")
    assert "give --locomo PATH" in capsys.readouterr().out


def test_locomo_turns_carry_their_session_date_and_photo(tmp_path):
    conv = read_locomo(_locomo(tmp_path))[0]
    turn = next(t for t in conv.turns if t.key == "D2:2")
    assert turn.session == "s2" and turn.at is not None
    assert turn.at.isoformat() == "2023-05-09T10:00:00+00:00"
    assert turn.body.endswith("[shares a photo of a pair of brown boots]")


def test_the_reference_is_plain_okapi_bm25():
    bm25 = PlainBM25({1: ["daili", "commut"], 2: ["long", "daili", "work", "boot"], 3: ["paint"]})
    assert bm25.rank("daily commute", 3) == [1, 2]
    assert bm25.rank("nothing here", 3) == []


class Refusing:
    """A reranker that fails any search it is asked to order."""

    name = "refusing"

    def rerank(self, query, hits):
        raise AssertionError("the hybrid row ran a configured reranker")


@pytest.mark.semantic
def test_the_hybrid_row_is_measured_without_a_configured_reranker(tmp_path, settings):
    """``STEWARD_RERANKER`` set in the environment must not turn the hybrid row into a
    reranked one: the reranked row is reported apart."""
    settings.STEWARD_SEARCH = {
        **settings.STEWARD_SEARCH,
        "RERANKER": "tests.evaluation.test_conversations_section.Refusing",
    }
    out = tmp_path / "report.json"
    call_command(
        "evaluate", "conversations", "--locomo", str(_locomo(tmp_path)), "--json", str(out)
    )
    locomo = json.loads(out.read_text())["conversations"]["locomo"]["configurations"]
    assert {"hybrid", "reranked"} <= set(locomo)
    assert locomo["hybrid"]["questions"] == 3
