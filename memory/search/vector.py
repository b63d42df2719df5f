"""The vector channel: nearest versions by cosine from the vector index (``memory.vectors``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from .. import vectors
from ..embeddings import EmbeddingProvider, get_provider
from .common import Candidate


@dataclass(frozen=True)
class QueryVector:
    """A query embedded once per request, with the provider that embedded it."""

    provider: EmbeddingProvider
    vector: list[float]


def embed_query(query: str) -> QueryVector | None:
    """The query's embedding, or None without a provider (or with nothing to embed)."""
    provider = get_provider()
    if provider is None or not query.strip():
        return None
    return QueryVector(provider, vectors.query_vector(provider, query))


def min_cosine() -> float:
    return float(getattr(settings, "STEWARD_SEARCH", {}).get("VECTOR_MIN_COSINE", 0.3))


def vector_channel(
    memory_pk: int,
    query: str | QueryVector | None,
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    scans: list[vectors.VectorScan] | None = None,
) -> list[Candidate]:
    """Candidates by cosine similarity to the query (≥ ``VECTOR_MIN_COSINE``), best first.

    Empty without a provider. ``query`` is the text or, better, its :func:`embed_query` (the
    pipeline embeds once per request). Scope, clearance and validity are applied to what the
    index returns, before fusion, exactly as in the lexical channel; what the index looked at is
    appended to ``scans`` (the ranking trace reports it).
    """
    qv = embed_query(query) if isinstance(query, str) else query
    if qv is None or limit <= 0:
        return []
    found, scan = vectors.nearest(
        memory_pk,
        qv.vector,
        provider=qv.provider,
        view=view,
        limit=limit,
        sensitivities=sensitivities,
        min_cosine=min_cosine(),
    )
    if scans is not None:
        scans.append(scan)
    return vectors.as_candidates(found)
