"""Query terms, the admission floor, channel caps and the views a channel scopes to."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings

from ..text import distinct_terms

# Longest lexeme a PostgreSQL tsvector holds; longer tokens are not indexed there, so neither
# backend searches for them.
MAX_TERM_BYTES = 2046


def setting(name: str, default: int) -> int:
    """A search constant from ``settings.STEWARD_SEARCH`` (seeds live in config/settings.py)."""
    return int(getattr(settings, "STEWARD_SEARCH", {}).get(name, default))


def query_terms(text: str) -> list[str]:
    """Distinct analyzer terms of a query, first-seen order, bounded in number and length."""
    terms = [t for t in distinct_terms(text) if len(t.encode("utf-8")) <= MAX_TERM_BYTES]
    return terms[: setting("MAX_QUERY_TERMS", 64)]


def admission_floor(n_terms: int) -> int:
    """Distinct query terms a text must contain to be a lexical candidate."""
    if n_terms <= 2:
        return 1
    return max(2, math.ceil(0.25 * n_terms))


def channel_cap(k: int) -> int:
    """Most candidates one channel may contribute: max(4k, 32)."""
    return max(4 * k, setting("CHANNEL_MIN", 32))


@dataclass(frozen=True)
class Candidate:
    """One channel hit: an entry version at a 1-based rank within its channel."""

    entry_pk: int
    version_pk: int
    rank: int


# Views the lexical channel can scope to.
ACTIVE = "active"  # head versions of active entries (the near-duplicate check)
CURRENT = "current"  # head versions whose validity is current or unresolved_conflict
HEADS = "heads"  # every head version, whatever its state (trace counts of the validity filter)
HISTORY = "history"  # every version of every entry
