"""Query terms, the admission floor, channel caps and the views a channel scopes to.

Stop words (``memory.text.stop_terms``) matter only to the admission floor: a query's terms are
all searched and all count for ranking, but the floor is computed from its *content* terms (the
terms that are not stop words) and a text is admitted when it contains at least that many of
them. A query made only of stop words has all its terms as content terms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from ..text import distinct_terms, is_cjk, stop_terms

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


def content_terms(terms: Sequence[str]) -> list[str]:
    """The terms that are not stop words, in order; all of them when every term is one."""
    stops = stop_terms()
    content = [t for t in terms if t not in stops]
    return content or list(terms)


def admission_floor(n_terms: int) -> int:
    """Distinct content terms a text must contain to be a lexical candidate, for a query with
    ``n_terms`` content terms."""
    if n_terms <= 2:
        return 1
    return max(2, math.ceil(0.25 * n_terms))


def query_floor(terms: Sequence[str]) -> int:
    """The admission floor of a query's ``terms`` (0 for none): counted on its content terms.

    A run of CJK characters is indexed twice over, as unigrams and as the bigrams joining them;
    the floor counts the run once (its bigrams), so a Chinese or Japanese question is not held
    to twice the share of an English one. Every content term still counts as a match."""
    if not terms:
        return 0
    content = content_terms(terms)
    runs = [t for t in content if not (len(t) == 1 and is_cjk(t))] or content
    return admission_floor(len(runs))


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
HISTORY = "history"  # every version of every entry not withheld (candidate, quarantined)
CANDIDATES = "candidates"  # head versions of candidates (reviewers' and auditors' view)
