"""The recall channels, listed once: the pipeline runs them, fusion names them and the trace
counts what validity removed from them by reading :data:`CHANNELS`.

A channel turns one request's :class:`ChannelQuery` into candidates of one Memory, best first,
with the view's scope, the reader's clearance and the request's filters applied inside its own
query (before fusion: DESIGN §5, invariant 7). Adding a channel is a function
``find(memory_pk, query, scope)`` and one line in :data:`CHANNELS`; fusion and the trace
follow.

The channels run in the listed order: the lexical one first, so the query embedding started by
the pipeline (``embed_query_soon``) is computed while its database query runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .common import Candidate
from .filters import RecallFilters
from .lexical import lexical_channel
from .vector import QueryVector, vector_channel

if TYPE_CHECKING:
    from ..vectors import VectorScan


@dataclass
class ChannelQuery:
    """One request's question as the channels read it: the analyzed ``terms``, and the query
    vector (the text to embed, the embedding, or a function that waits for the embedding being
    computed meanwhile: called once, by the first channel that needs it)."""

    terms: Sequence[str]
    embedding: str | QueryVector | Callable[[], QueryVector | None] | None = None
    #: What the vector index looked at, appended by the vector channel (the trace reports it).
    scans: list[VectorScan] = field(default_factory=list)

    def vector(self) -> str | QueryVector | None:
        if callable(self.embedding):
            self.embedding = self.embedding()
        return self.embedding


@dataclass(frozen=True)
class Scope:
    """Where a channel looks: the view's scope, how many candidates at most, the reader's
    clearance and the request's filters."""

    view: str
    limit: int
    sensitivities: Sequence[str]
    filters: RecallFilters | None = None


@dataclass(frozen=True)
class Channel:
    """A recall channel: its name (in fusion and the trace) and how it finds candidates."""

    name: str
    find: Callable[[int, ChannelQuery, Scope], list[Candidate]]


def _lexical(memory_pk: int, query: ChannelQuery, scope: Scope) -> list[Candidate]:
    """Full-text matches ranked by term rarity (``memory.search.lexical``)."""
    return lexical_channel(
        memory_pk,
        query.terms,
        view=scope.view,
        limit=scope.limit,
        sensitivities=scope.sensitivities,
        filters=scope.filters,
    )


def _vector(memory_pk: int, query: ChannelQuery, scope: Scope) -> list[Candidate]:
    """Nearest versions by cosine in the vector index (``memory.search.vector``); empty without
    an embedding provider."""
    return vector_channel(
        memory_pk,
        query.vector(),
        view=scope.view,
        limit=scope.limit,
        sensitivities=scope.sensitivities,
        scans=query.scans,
        filters=scope.filters,
    )


#: Every channel, in the order they run.
CHANNELS: tuple[Channel, ...] = (Channel("lexical", _lexical), Channel("vector", _vector))
CHANNEL_NAMES: tuple[str, ...] = tuple(c.name for c in CHANNELS)


def run(
    memory_pk: int,
    query: ChannelQuery,
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str],
    filters: RecallFilters | None = None,
) -> dict[str, list[Candidate]]:
    """Each channel's candidates, by channel name, in :data:`CHANNELS`' order."""
    scope = Scope(view, limit, sensitivities, filters)
    return {c.name: c.find(memory_pk, query, scope) for c in CHANNELS}
