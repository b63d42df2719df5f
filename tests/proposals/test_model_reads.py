"""The embedding model's cosine is used only for texts the model reads.

all-MiniLM-L6-v2 was trained on English: two unrelated sentences in Thai, Korean or Hindi score
0.8-1.0, Chinese ones about 0.6 (docs/maintenance.md, "Texts the model cannot read"). A pair
with a text in such a script is scored by words and judged by the lexical thresholds, at add
time, in the near-duplicate and promotion passes and in a proposal's verification; text in
Latin letters is scored by the model as before.

Runs on both backends (the suite runs on SQLite and on PostgreSQL).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from memory import actions, maintenance, vectors
from memory.actors import Actor
from memory.embeddings import HashingProvider, MiniLMProvider, model_reads
from memory.models import Entry, Memory, Relation
from proposals.models import Proposal
from proposals.verify import Report, score_pairs
from tests.factories import remember

#: Five unrelated facts per language (the team meets on Mondays; the server runs Linux; spaces
#: over tabs; releases on Tuesdays; who owns payments).
UNRELATED = {
    "th": [
        "ทีมประชุมทุกเช้าวันจันทร์",
        "เซิร์ฟเวอร์โปรดักชันทำงานบนลินุกซ์",
        "ฉันชอบเว้นวรรคมากกว่าแท็บ",
        "ออกรุ่นใหม่ทุกวันอังคาร",
        "สมชายรับผิดชอบเรื่องการชำระเงิน",
    ],
    "ko": [
        "팀은 매주 월요일 아침에 모입니다.",
        "프로덕션 서버는 리눅스에서 실행됩니다.",
        "탭보다 공백을 선호합니다.",
        "릴리스는 매주 화요일에 나갑니다.",
        "민수가 결제를 담당합니다.",
    ],
    "hi": [
        "टीम हर सोमवार सुबह मिलती है।",
        "प्रोडक्शन सर्वर लिनक्स पर चलता है।",
        "मुझे टैब की जगह स्पेस पसंद हैं।",
        "रिलीज़ हर मंगलवार होती है।",
        "राहुल भुगतान के लिए ज़िम्मेदार है।",
    ],
    "zh": [
        "团队每周一早上开会。",
        "生产服务器运行在Linux上。",
        "我更喜欢空格而不是制表符。",
        "每周二发布新版本。",
        "王伟负责支付。",
    ],
}


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


def enable(memory: Memory, job: str) -> None:
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(memory, actor=founder, policy={"jobs": {job: {"enabled": True}}})


def clusters(run, reason: str) -> list[set[str]]:
    return [set(i["entries"]) for i in run.items if i["reason"] == reason]


# --- Which texts the model reads ----------------------------------------------------------------


def test_the_minilm_model_reads_text_in_latin_letters_only():
    latin = MiniLMProvider.scripts
    assert latin == frozenset({"LATIN"})
    # A stand-in with the model's declaration (the model itself is not loaded for this).
    reader = type("Reader", (), {"scripts": latin})()
    for text in ["The team meets every Monday morning.", "Jonas ist für Zahlungen zuständig."]:
        assert model_reads(text, reader)
    assert model_reads("Søren prefers dark mode in Zürich.", reader)
    assert model_reads("42 — 9:30 / 10:00", reader)  # no letters: nothing to misread
    for texts in UNRELATED.values():
        assert not any(model_reads(t, reader) for t in texts)
    # Mixed text: at least half of its letters Latin.
    assert model_reads("Postgres database backup runs nightly，周末除外。", reader)
    assert not model_reads("本番サーバーはLinuxで動いている。", reader)
    # A provider declaring no scripts reads everything; no provider reads nothing.
    assert all(model_reads(t, HashingProvider()) for t in UNRELATED["th"])
    assert not model_reads("The team meets every Monday morning.", None)


# --- Add time -----------------------------------------------------------------------------------


@pytest.mark.semantic
@pytest.mark.parametrize("lang", ["ko", "th", "zh", "hi"])
def test_with_the_model_unrelated_entries_in_another_script_are_no_near_duplicates(
    memory, agent, lang
):
    a = agent.actor
    results = []
    for body in UNRELATED[lang]:
        results.append(remember(memory, a, body))
        vectors.backfill()  # what the indexing after each write does: the vector candidates
    assert [r.near_duplicates for r in results] == [[]] * len(results)
    assert not Relation.objects.filter(memory=memory).exists()
    assert not Proposal.objects.filter(memory=memory, kind="consolidation").exists()


@pytest.mark.semantic
def test_with_the_model_a_restatement_in_another_script_is_still_found_by_its_words(memory, agent):
    a = agent.actor
    first = remember(memory, a, "ทีมประชุมทุกเช้าวันจันทร์").entry
    vectors.backfill()
    again = remember(memory, a, "ทีมประชุมกันทุกเช้าวันจันทร์")
    ((found,),) = [again.near_duplicates]
    assert found["entry_id"] == first.uid and found["relation"] == "near_duplicate_of"
    assert found["method"] == "lexical"  # the writer is told what scored the pair
    relation = Relation.objects.get(memory=memory, from_entry=again.entry)
    assert relation.evidence == [{"method": "lexical", "claimed": False}]


@pytest.mark.semantic
def test_with_the_model_english_is_still_scored_by_the_model(memory, agent):
    a = agent.actor
    first = remember(memory, a, "Mara Okafor owns the payments service").entry
    again = remember(memory, a, "The payments service is owned by Mara Okafor")
    assert [(d["entry_id"], d["method"]) for d in again.near_duplicates] == [(first.uid, "cosine")]
    relation = Relation.objects.get(memory=memory, from_entry=again.entry)
    assert relation.evidence == [{"method": "cosine", "claimed": False}]


# --- The passes ---------------------------------------------------------------------------------


@pytest.mark.semantic
def test_with_the_model_the_near_duplicate_pass_pairs_no_unrelated_entries(memory, agent, system):
    a = agent.actor
    for lang in ("th", "hi", "ko"):
        for body in UNRELATED[lang]:
            remember(memory, a, body, dedupe=False)
    english = [
        remember(memory, a, "Mara Okafor owns the payments service", dedupe=False).entry,
        remember(memory, a, "The payments service is owned by Mara Okafor", dedupe=False).entry,
    ]
    vectors.backfill()  # what the indexing after each write does: the vector neighbours
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert clusters(r, "near_duplicate_cluster") == [{e.uid for e in english}]
    (item,) = r.items
    assert r.parameters["method"] == item["inputs"]["method"] == "cosine"
    assert r.parameters["unread_pairs"]["method"] == "lexical"


@pytest.mark.semantic
def test_with_the_model_promotion_groups_no_unrelated_notes(memory, agent, system):
    a = agent.actor
    for lang in ("th", "hi", "ko"):
        for i, body in enumerate(UNRELATED[lang]):
            remember(
                memory,
                a,
                body,
                kind="working_note",
                tier="session",
                session_id=f"{lang}-{i}",
                dedupe=False,
            )
    vectors.backfill()
    enable(memory, "promotion")
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert r.parameters["method"] == "cosine"
    assert clusters(r, "recurring_theme") == []


@pytest.mark.semantic
def test_with_the_model_a_recurring_note_in_another_script_is_promoted_by_its_words(
    memory, agent, system
):
    a = agent.actor
    notes: list[Entry] = [
        remember(
            memory, a, body, kind="working_note", tier="session", session_id=s, dedupe=False
        ).entry
        for s, body in [("s-1", "ทีมประชุมทุกเช้าวันจันทร์"), ("s-2", "ทีมประชุมกันทุกเช้าวันจันทร์")]
    ]
    vectors.backfill()
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert clusters(r, "recurring_theme") == [{n.uid for n in notes}]


# --- Verification -------------------------------------------------------------------------------


@pytest.mark.semantic
def test_with_the_model_verification_scores_unread_texts_by_words():
    report = Report()
    score_pairs(report, ("target", UNRELATED["ko"][0]), [("a", UNRELATED["ko"][1])])
    assert report.similarity_method == "lexical" and (report.similarity or 0) < 0.2
    # One text the model cannot read: every pair of the proposal is scored by words.
    report = Report()
    score_pairs(
        report,
        ("target", "Mara Okafor owns the payments service"),
        [("a", "The payments service is owned by Mara Okafor"), ("b", UNRELATED["th"][4])],
    )
    assert report.similarity_method == "lexical"
    report = Report()
    score_pairs(
        report,
        ("target", "Mara Okafor owns the payments service"),
        [("a", "The payments service is owned by Mara Okafor")],
    )
    assert report.similarity_method == "cosine" and (report.similarity or 0) > 0.8
