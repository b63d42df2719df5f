"""The vector channel: nearest versions by cosine from the vector index (``memory.vectors``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings

from .. import vectors
from ..embeddings import EmbeddingProvider, calibration, get_provider, provider_for
from .abbreviations import spelled_out
from .common import Candidate
from .filters import RecallFilters


@dataclass(frozen=True)
class QueryVector:
    """A query embedded once per request, with the provider that embedded it."""

    provider: EmbeddingProvider
    vector: list[float]


def embed_query(query: str, asked: str | None = None) -> QueryVector | None:
    """The query's embedding, or None without a provider (or with nothing to embed). The model
    is the one that reads the query (``memory.embeddings.provider_for``): a question in a
    script the main model does not read is embedded by the other scripts' model, and its
    vector is compared with the vectors that model made (``memory.vectors.nearest``). The model
    is chosen by ``asked`` when given — the question as asked, before its shorthand was spelled
    out in English."""
    provider = provider_for(asked if asked is not None else query)
    if provider is None or not query.strip():
        return None
    return QueryVector(provider, vectors.query_vector(provider, query))


_pool: dict[str, object] = {"pid": None, "executor": None}
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """This process's embedding threads (made on first use, again after a fork)."""
    with _pool_lock:
        if _pool["pid"] != os.getpid() or _pool["executor"] is None:
            _pool["executor"] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-query")
            _pool["pid"] = os.getpid()
        executor = _pool["executor"]
    assert isinstance(executor, ThreadPoolExecutor)
    return executor


def embed_query_soon(
    query: str, glossary: Mapping[str, str] | None = None
) -> Callable[[], QueryVector | None]:
    """Start embedding ``query`` on another thread and return a function that waits for it.
    The model reads an agent's question with its shorthand spelled out
    (:func:`.abbreviations.spelled_out`: "a PR" as "a PR (pull request)"; ``glossary``: the
    Memory's own words).

    The search embeds its query while the lexical channel's query runs: inference is CPU work
    outside the interpreter lock and the full-text query waits on the database, so the two
    overlap instead of adding up. The embedding thread never touches the database. Without a
    provider (or with nothing to embed) nothing starts and the function returns None.
    """
    if get_provider() is None or not query.strip():
        return lambda: None
    future = _executor().submit(embed_query, spelled_out(query, glossary), query)
    return future.result


def min_cosine(provider: EmbeddingProvider | None = None) -> float:
    """The vector channel's admission floor: the floor of the model whose vectors are compared
    (default: the configured one; ``memory.embeddings.Calibration.min_cosine``: 0.3 with
    all-MiniLM-L6-v2, 0.5 with bge-small-en-v1.5, which scores an unrelated fact 0.3–0.45
    against a question; 0.8 with multilingual-e5-small). ``STEWARD_SEARCH["VECTOR_MIN_COSINE"]``
    overrides the configured model's floor only: the other scripts' model's cosines sit on
    another scale."""
    configured = getattr(settings, "STEWARD_SEARCH", {}).get("VECTOR_MIN_COSINE")
    main = get_provider()
    if configured is not None and (provider is None or main is None or provider.key == main.key):
        return float(configured)
    return calibration(provider).min_cosine


def vector_channel(
    memory_pk: int,
    query: str | QueryVector | None,
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
    scans: list[vectors.VectorScan] | None = None,
    filters: RecallFilters | None = None,
) -> list[Candidate]:
    """Candidates by cosine similarity to the query (≥ ``VECTOR_MIN_COSINE``), best first.

    Empty without a provider. ``query`` is the text or, better, its :func:`embed_query` (the
    pipeline embeds once per request). Scope, clearance, validity and the request's ``filters``
    are applied to what the index returns, before fusion, exactly as in the lexical channel;
    what the index looked at is appended to ``scans`` (the ranking trace reports it).
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
        min_cosine=min_cosine(qv.provider),
        filters=filters,
    )
    if scans is not None:
        scans.append(scan)
    return vectors.as_candidates(found)
