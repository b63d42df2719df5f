"""The vector channel: cosine over stored embeddings, bounded scan."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db.models import F, OuterRef, Subquery

from ..models import (
    EntryVersion,
    HeadState,
    Validity,
)
from .common import ACTIVE, CURRENT, HEADS, Candidate, setting

# --- Vector channel -------------------------------------------------------------------------


def vector_channel(
    memory_pk: int,
    query: str,
    *,
    view: str,
    limit: int,
    sensitivities: Sequence[str] | None = None,
) -> list[Candidate]:
    """Candidates by cosine similarity to ``query`` (≥ the admission threshold), best first.

    Empty when no provider is configured. Scans the Memory's vectors in bounded batches, at most
    ``VECTOR_MAX_SCAN`` rows (newest versions first), so a request never loads a whole Memory.
    """
    from ..embeddings import EntryEmbedding, get_provider, unpack

    provider = get_provider()
    if provider is None or limit <= 0 or not query.strip():
        return []
    qvec = provider.embed([query])[0]
    threshold = float(getattr(settings, "STEWARD_SEARCH", {}).get("VECTOR_MIN_COSINE", 0.3))
    qs = EntryVersion.objects.filter(memory_id=memory_pk)
    if view in (ACTIVE, CURRENT, HEADS):
        qs = qs.filter(entry__head__version_id=F("pk"))
    if view in (ACTIVE, CURRENT):
        qs = qs.filter(entry__head__state=HeadState.ACTIVE)
    if view == CURRENT:
        qs = qs.filter(
            entry__projection__validity__in=[Validity.CURRENT, Validity.UNRESOLVED_CONFLICT]
        )
    if sensitivities is not None:
        qs = qs.filter(entry__sensitivity__in=list(sensitivities))
    vectors = EntryEmbedding.objects.filter(
        provider=provider.key, content_hash=OuterRef("content_hash")
    ).values("vector")[:1]
    rows = (
        qs.annotate(vec=Subquery(vectors))
        .filter(vec__isnull=False)
        .order_by("-pk")
        .values_list("entry_id", "pk", "vec")
    )
    scan = setting("VECTOR_MAX_SCAN", 50_000)
    scored: list[tuple[float, int, int]] = []
    for entry_pk, version_pk, data in rows[:scan].iterator(chunk_size=2000):
        vec = unpack(data)
        cos = sum(a * b for a, b in zip(qvec, vec, strict=False))
        # Rounded so both backends (and every platform) order equal cosines the same way.
        cos = round(cos, 6)
        if cos >= threshold:
            scored.append((-cos, entry_pk, version_pk))
    scored.sort()
    return [Candidate(e, v, i) for i, (_, e, v) in enumerate(scored[:limit], start=1)]
