"""Text normalization, the one analyzer, and the canonical content hash.

The analyzer pre-tokenizes ``searchable_text`` so SQLite FTS5 and PostgreSQL (``simple``
configuration) index exactly the same tokens, and the very same function analyzes queries:

1. **Normalize**: NFC, casefold, NFC again.
2. **Segment** (:func:`words`): ICU's word ``BreakIterator`` (PyICU) finds the word boundaries
   (UAX #29, plus ICU's dictionaries for scripts written without spaces: Thai, Lao, Khmer,
   Myanmar). A token is a run of letters, combining marks, digits and underscores inside one
   ICU word, so a vowel sign never splits a Devanagari word and punctuation is dropped
   ("3.14" gives ``3`` and ``14``, "don't" gives ``don`` and ``t``). The invisible joiners
   (ZWJ, ZWNJ, word joiner, soft hyphen) are kept inside the word by ICU and then removed, so
   a word matches whether it was typed with them or not. CJK (Han, Hiragana, Katakana, Hangul:
   ``_CJK_RANGES``) ignores ICU's dictionary words: each character of a CJK run is a unigram
   and each adjacent pair a bigram. Pure-ASCII text skips ICU: UAX #29 never breaks inside an
   ASCII run of letters, digits and underscores, so the result is the same.
3. **Stem** (:func:`tokenize`): a word written in one script's letters goes through the
   Snowball stemmer (PyStemmer) of that script's language (``STEMMERS``): Latin letters English,
   so ``deploys``, ``deployed`` and ``deploying`` are one term; Cyrillic Russian (``серверы``,
   ``серверов``: ``сервер``; Ukrainian, Bulgarian and Serbian words written in the same letters
   go through it too, alike at index and query time, so only how well their forms merge
   differs); Greek Greek; Armenian Armenian. Arabic letters (Arabic, Persian, Urdu: no one
   stemmer serves them all) and the scripts written without inflection here (CJK, Thai) are
   not stemmed. Words with digits or
   underscores (``redis_7``, ``max_connections``) are identifiers and stay verbatim.
   ``settings.STEWARD_ANALYZER["STEM"]`` (default ``True``) is read at every call; ``False``
   gives the unstemmed analyzer (changing it needs ``rebuild_projection --reindex``).

**Stop words** never leave the token stream: every word is indexed and every query term is
searched and counted for ranking. :func:`stop_terms` (the lists of the ``stopwords`` package —
Snowball's English list and the lists of the languages not written in Latin letters, see
``STOP_WORD_LANGUAGES`` — analyzed by this same analyzer) serves only the
admission floor (``memory.search.common.admission_floor``): the floor is computed from, and
compared with, a query's *content* terms, so "what is my pet called" asks for one of
{pet, call} instead of two of five words of which three carry no meaning. A CJK run is
counted toward the floor by its content words in ICU's dictionary (:func:`cjk_words`), the
one place those words are used.

:func:`words` (segmentation without stemming) serves the callers that compare wording rather
than search: "same text word for word", subject words, the hashing embedder.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from functools import cache

import icu
import Stemmer
import stopwords as stopword_lists
from django.conf import settings

_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0x20000, 0x2FA1F),  # Extensions B..
)
# Kept inside a word by ICU, removed from the token.
_JOINERS = "\u00ad\u200c\u200d\u2060"


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges)


def _mark_ranges() -> Iterator[tuple[int, int]]:
    """Code point ranges of the combining marks (Mn, Mc, Me), which ``re``'s ``\\w`` lacks.

    ICU lists them; only those Python's own Unicode database also calls marks are kept, so a
    token never holds a character that this Python considers unassigned. The kana voicing marks
    inside the CJK ranges are left out, as before: CJK runs hold word characters only.
    """
    marks = icu.UnicodeSet("[:M:]")
    for i in range(marks.getRangeCount()):
        start = None
        lo, hi = ord(marks.getRangeStart(i)), ord(marks.getRangeEnd(i))
        for cp in range(lo, hi + 2):
            mark = cp <= hi and unicodedata.category(chr(cp))[0] == "M" and not is_cjk(chr(cp))
            if mark and start is None:
                start = cp
            elif not mark and start is not None:
                yield start, cp - 1
                start = None


#: The CJK ranges as a regular expression character class body (for ``[...]``): the characters
#: the analyzer reads one by one, for the callers that must cut words where it does.
CJK_CLASS = _class(_CJK_RANGES)
_MARKS = _class(_mark_ranges())
# Within one ICU word: a CJK run, or a run of other letters, marks, digits, underscores that
# starts with a letter, digit or underscore (a mark with nothing to sit on is dropped).
_WORD_START = f"[^\\W{CJK_CLASS}]"
_PIECE = re.compile(
    rf"(?P<cjk>(?:(?=\w)[{CJK_CLASS}])+)|(?P<word>{_WORD_START}(?:{_WORD_START}|[{_MARKS}{_JOINERS}])*)"
)
_STRIP_JOINERS = str.maketrans("", "", _JOINERS)
# Latin letters (after casefold) and the combining diacritics NFC could not compose.
_LATIN_WORD = re.compile("[a-z\u00df-\u00f6\u00f8-\u024f\u1e00-\u1eff\u0300-\u036f]+")
#: Each stemmed script: the letters a word must be written in (after casefold), and the Snowball
#: language its words are stemmed with. Cyrillic is Russian's: its stemmer also folds ё into е.
STEMMERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_LATIN_WORD, "english"),
    (re.compile("[\u0430-\u045f\u0491\u0300-\u036f]+"), "russian"),
    (re.compile("[\u0390\u03ac-\u03ce\u1f00-\u1ffc\u0300-\u036f]+"), "greek"),
    (re.compile("[\u0561-\u0587]+"), "armenian"),
)

_local = threading.local()


def _breaker() -> icu.BreakIterator:
    """This thread's ICU word iterator (an iterator holds its text: not shareable)."""
    bi = getattr(_local, "breaker", None)
    if bi is None:
        bi = _local.breaker = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
    return bi


def _stemmers() -> list[tuple[re.Pattern[str], Stemmer.Stemmer]]:
    """This thread's Snowball stemmers, one per script of ``STEMMERS`` (a stemmer must not be
    used concurrently)."""
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = [
            (letters, Stemmer.Stemmer(language)) for letters, language in STEMMERS
        ]
    return stemmers


def _stem(token: str, stemmers: list[tuple[re.Pattern[str], Stemmer.Stemmer]]) -> str:
    for letters, stemmer in stemmers:
        if letters.fullmatch(token):
            return str(stemmer.stemWord(token))
    return token


def normalize_body(body: str) -> str:
    """NFC-normalized and trimmed: the form that is stored, measured and hashed."""
    return unicodedata.normalize("NFC", body).strip()


def _icu_words(text: str) -> Iterator[str]:
    """The spans between ICU word boundaries, in order, covering ``text``."""
    if text.isascii():
        yield text
        return
    us = icu.UnicodeString(text)  # boundaries are UTF-16 offsets
    bi = _breaker()
    bi.setText(us)
    start = 0
    for end in bi:
        yield str(us[start:end])
        start = end


def words(text: str) -> list[str]:
    """Casefolded words of ``text`` in order, unstemmed (duplicates kept)."""
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    tokens: list[str] = []
    run: list[str] = []  # the CJK run so far: it may span ICU words

    def flush() -> None:
        tokens.extend(run)
        tokens.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
        run.clear()

    for span in _icu_words(text):
        pos = 0
        for m in _PIECE.finditer(span):
            if m.start() != pos or m.lastgroup == "word":
                flush()
            if m.lastgroup == "cjk":
                run.extend(m.group())
            else:
                word = m.group().translate(_STRIP_JOINERS)
                if word:
                    tokens.append(word)
            pos = m.end()
        if pos != len(span):
            flush()
    flush()
    return tokens


def cjk_words(run: str) -> list[str]:
    """ICU's dictionary words of ``run``, a run of CJK characters as the analyzer cut it
    (casefolded, NFC), in order: ``妻の習い事は何ですか`` gives ``妻 の 習い事 は 何 です か``.
    The index never holds them; the admission floor counts a query's CJK content by them."""
    return [w for w in _icu_words(run) if w]


def stemming() -> bool:
    """Whether the analyzer stems (``settings.STEWARD_ANALYZER["STEM"]``, default True)."""
    return bool(getattr(settings, "STEWARD_ANALYZER", {}).get("STEM", True))


def _analyze(text: str, stem: bool) -> list[str]:
    tokens = words(text)
    if not stem:
        return tokens
    stemmers = _stemmers()
    return [_stem(t, stemmers) for t in tokens]


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order (duplicates kept): the index's and the queries' analyzer."""
    return _analyze(text, stemming())


def distinct_terms(text: str) -> list[str]:
    """Distinct tokens in first-seen order."""
    return list(dict.fromkeys(tokenize(text)))


def searchable_text(body: str) -> str:
    """The space-joined token stream both full-text backends index."""
    return " ".join(tokenize(body))


def indexed_text(body: str) -> tuple[str, int]:
    """``(searchable_text, term_count)`` of a version's body: what the writer stores."""
    tokens = tokenize(body)
    return " ".join(tokens), len(tokens)


# English, and the languages of the ``stopwords`` package not written in Latin letters. The other
# Latin-script lists are left out: without knowing a text's language their words collide with
# English content words (Slovenian "pet", German "will", Italian "come").
STOP_WORD_LANGUAGES = (
    "english",
    "arabic",
    "armenian",
    "bulgarian",
    "chinese",
    "greek",
    "hindi",
    "japanese",
    "korean",
    "marathi",
    "persian",
    "russian",
    "thai",
    "ukranian",  # sic: the package's name for Ukrainian
    "urdu",
)


def stop_terms() -> frozenset[str]:
    """Analyzer terms of the stop words of ``STOP_WORD_LANGUAGES`` (the ``stopwords`` package)."""
    return _stop_terms(stemming())


@cache
def _stop_terms(stem: bool) -> frozenset[str]:
    terms: set[str] = set()
    for language in STOP_WORD_LANGUAGES:
        for word in stopword_lists.get_stopwords(language):
            terms.update(_analyze(word, stem))
    return frozenset(terms)


def content_hash(kind: str, body: str, evidence_refs: Iterable[str]) -> str:
    """SHA-256 over {kind, NFC-normalized trimmed body, sorted de-duplicated evidence refs}.

    Ids and version numbers are deliberately not part of it.
    """
    refs = sorted({unicodedata.normalize("NFC", r).strip() for r in evidence_refs})
    canonical = json.dumps(
        {"kind": kind, "body": normalize_body(body), "evidence": refs},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
