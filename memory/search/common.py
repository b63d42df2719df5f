"""Query terms, the admission floor, channel caps and the views a channel scopes to.

Stop words (``memory.text.stop_terms``) matter only to the admission floor: a query's terms are
all searched and all count for ranking, but the floor is computed from its *content* terms (the
terms that are not stop words) and a text is admitted when it contains at least that many of
them. A query made only of stop words has all its terms as content terms. In a query holding a
content word (:func:`query_floor`), a term written only in hiragana — a Japanese particle,
ending or auxiliary, or a bigram of them such as しま — is not a content term either.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from ..text import CJK_CLASS, cjk_words, distinct_terms, stop_terms

# Longest lexeme a PostgreSQL tsvector holds; longer tokens are not indexed there, so neither
# backend searches for them.
MAX_TERM_BYTES = 2046

# A CJK character (``memory.text.is_cjk``, as a pattern: the maintenance passes take the floor of
# every entry they examine, and most entries hold no CJK term at all).
_CJK = re.compile(f"[{CJK_CLASS}]")


def setting(name: str, default: int) -> int:
    """A search constant from ``settings.STEWARD_SEARCH`` (seeds live in config/settings.py)."""
    return int(getattr(settings, "STEWARD_SEARCH", {}).get(name, default))


def query_terms(text: str) -> list[str]:
    """Distinct analyzer terms of a query, first-seen order, bounded in number and length."""
    terms = [t for t in distinct_terms(text) if len(t.encode("utf-8")) <= MAX_TERM_BYTES]
    return terms[: setting("MAX_QUERY_TERMS", 64)]


def content_terms(terms: Sequence[str]) -> list[str]:
    """The terms that count toward the admission floor, in order: the terms that are not stop
    words, less those written only in hiragana when the query holds a content word (the units
    :func:`query_floor` counts); all of the terms when every term is a stop word."""
    return content_and_floor(terms)[0]


def content_and_floor(terms: Sequence[str]) -> tuple[list[str], int]:
    """:func:`content_terms` and :func:`query_floor` of ``terms`` at once (one reading of their
    CJK runs by ICU's dictionary)."""
    if not terms:
        return [], 0
    content, units = _content_and_units(terms)
    content = content or list(terms)
    if not units:
        units = [t for t in content if not (len(t) == 1 and _CJK.match(t))] or content
    return content, admission_floor(len(units))


def _content_and_units(terms: Sequence[str]) -> tuple[list[str], list[str]]:
    """The content terms of ``terms`` (none when every term is a stop word) and the units the
    floor counts: the content terms that are not CJK, and the content words of the CJK runs
    (:func:`cjk_content_words`); no units when there is no content word."""
    stops = stop_terms()
    content = [t for t in terms if t not in stops]
    if not _CJK.search(" ".join(terms)):
        return content, content
    cjk = _CJK.match
    units = [t for t in content if not cjk(t)] + cjk_content_words(terms)
    if units:
        # The floor counts words holding a character that is neither hiragana nor a stop word;
        # a term written only in hiragana (しま of します, こに of どこに) holds none.
        content = [t for t in content if not all(map(_hiragana, t))]
    return content, units


def admission_floor(n_terms: int) -> int:
    """Distinct content terms a text must contain to be a lexical candidate, for a query with
    ``n_terms`` content terms."""
    if n_terms <= 2:
        return 1
    return max(2, math.ceil(0.25 * n_terms))


def query_floor(terms: Sequence[str]) -> int:
    """The admission floor of a query's ``terms`` (0 for none): counted on its content terms.

    A run of CJK characters is indexed as unigrams and as the bigrams joining them, one term
    per character or two whatever its words; the floor counts the run by its content words
    instead (:func:`cjk_content_words`), as it counts an English question's content words, so
    a Chinese or Japanese question is not held to a larger share: 妻の習い事は何ですか ("what is
    my wife's hobby") asks for one of {妻, 習い事}, not two of its eight content bigrams.
    With no content word at all (every word a stop word or hiragana) the content terms are
    counted, a run by its bigrams. The matches compared with the floor are the content terms
    (:func:`content_terms`): with a content word, a term written only in hiragana is none, so
    どこに転勤しますか (one content word, 転勤) does not admit a text sharing only しま."""
    return content_and_floor(terms)[1]


def cjk_runs(terms: Sequence[str]) -> list[str]:
    """The CJK runs ``terms`` were analyzed from, as far as their bigrams tell: the analyzer
    gives a run's unigrams, then its bigrams in order, so consecutive bigrams overlapping by a
    character rebuild the run (a bigram seen earlier in the query is not repeated, which may
    cut a run in two). A CJK unigram that no rebuilt run holds is a run of its own."""
    runs: list[str] = []
    chained = False  # the previous term was a bigram ending runs[-1]
    cjk = _CJK.match
    for t in terms:
        bigram = len(t) == 2 and cjk(t) is not None
        if bigram and chained and runs[-1][-1] == t[0]:
            runs[-1] += t[1]
        elif bigram:
            runs.append(t)
        chained = bigram
    held = set("".join(runs))
    return runs + [t for t in terms if len(t) == 1 and cjk(t) and t not in held]


def _hiragana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u309f"


def cjk_content_words(terms: Sequence[str]) -> list[str]:
    """The content words of the CJK runs of ``terms`` (:func:`cjk_runs`), by ICU's dictionary
    (``memory.text.cjk_words``): the words holding a character that is neither a stop word nor
    hiragana — Japanese particles, endings and auxiliaries are written in hiragana, and the stop
    lists name few of them (ない, もの, られ). A word that is a stop word does not count."""
    stops = stop_terms()
    return [
        w
        for run in cjk_runs(terms)
        for w in cjk_words(run)
        if w not in stops and any(not _hiragana(c) and c not in stops for c in w)
    ]


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
