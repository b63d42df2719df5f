"""Word-level differences between two texts, for the audit timeline and revision pages.

Text is cut into tokens — runs of letters/digits/underscore, single CJK characters (a Chinese or
Japanese sentence has no spaces, so each character is a word), single punctuation marks and runs
of whitespace — and the stdlib's :class:`difflib.SequenceMatcher` aligns the token lists. The
result is a list of ``(op, text)`` segments with ``op`` in ``equal``, ``delete``, ``insert``:
concatenating the ``equal`` and ``delete`` segments gives the old text back, ``equal`` and
``insert`` the new one.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|\s+|[^\w\s]", re.UNICODE)

EQUAL = "equal"
DELETE = "delete"
INSERT = "insert"


@dataclass(frozen=True)
class Segment:
    op: str
    text: str


def tokens(text: str) -> list[str]:
    """The word tokens of ``text``; joined they give ``text`` back exactly."""
    return _TOKEN.findall(text)


def word_diff(old: str, new: str) -> list[Segment]:
    """Segments turning ``old`` into ``new``, word by word (adjacent same-op runs merged)."""
    a, b = tokens(old), tokens(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    out: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _push(out, EQUAL, "".join(a[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            _push(out, DELETE, "".join(a[i1:i2]))
        if tag in ("insert", "replace"):
            _push(out, INSERT, "".join(b[j1:j2]))
    return out


def _push(out: list[Segment], op: str, text: str) -> None:
    if not text:
        return
    if out and out[-1].op == op:
        out[-1] = Segment(op, out[-1].text + text)
    else:
        out.append(Segment(op, text))


def changed(segments: list[Segment]) -> bool:
    return any(s.op != EQUAL for s in segments)
