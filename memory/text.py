"""Text normalization, the one analyzer, and the canonical content hash.

The analyzer pre-tokenizes ``searchable_text`` so SQLite FTS5 and PostgreSQL (``simple``
configuration) index exactly the same tokens: NFC, casefold, words of letters/digits/underscore;
each CJK character is a unigram and each adjacent CJK pair a bigram.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable

_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0x20000, 0x2FA1F),  # Extensions B..
)
_WORD = re.compile(r"\w+", re.UNICODE)


def normalize_body(body: str) -> str:
    """NFC-normalized and trimmed: the form that is stored, measured and hashed."""
    return unicodedata.normalize("NFC", body).strip()


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order (duplicates kept)."""
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    tokens: list[str] = []
    for word in _WORD.findall(text):
        plain: list[str] = []
        run: list[str] = []
        for ch in [*word, ""]:
            cjk = bool(ch) and is_cjk(ch)
            if (cjk or not ch) and plain:
                tokens.append("".join(plain))
                plain = []
            if (not cjk or not ch) and run:
                tokens.extend(run)
                tokens.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
                run = []
            if cjk:
                run.append(ch)
            elif ch:
                plain.append(ch)
    return tokens


def distinct_terms(text: str) -> list[str]:
    """Distinct tokens in first-seen order."""
    return list(dict.fromkeys(tokenize(text)))


def searchable_text(body: str) -> str:
    """The space-joined token stream both full-text backends index."""
    return " ".join(tokenize(body))


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
