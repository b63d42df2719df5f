"""Version-to-version word diff: an entry's history pages and the proposal page's text changes.

Texts are cut into word tokens (runs of letters/digits/underscore, each CJK character on its own —
a Chinese or Japanese sentence has no spaces —, single punctuation marks); runs joined by ".",
":", "/", "@", "#" or "-" are one token (versions, addresses, hosts, times, paths: :data:`UNIT`).
Whitespace runs are tokens too and case counts: the result is a list of :class:`DiffSegment`
``(op, text)`` with ``op`` in ``equal``, ``delete``, ``insert``; the ``equal`` and ``delete``
segments give the old text back, ``equal`` and ``insert`` the new one. Nothing here builds HTML.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_RUN = rf"[^\W{_CJK}]+"
# Runs joined inside one token by ".", ":", "/", "@", "#", "-" or "://" — a version (2.4.1), an
# address (10.0.0.12), a host (db-main-1.helios.dev), a time (14:00), a path (/api/docs/,
# scripts/deploy.sh), a URL, an e-mail address: one unit, so "2.3.0 → 2.4.1" is one change and
# not a diff of its digits. A "." or ":" not followed by a word character (a sentence's end) is
# punctuation of its own.
UNIT = rf"(?:~?/)?{_RUN}(?:(?:://|[.:/@#-]){_RUN})+/?|~?/{_RUN}/?"
#: One word: a CJK character on its own, or a run of letters, digits and underscores.
WORD = rf"[{_CJK}]|{_RUN}"
# The version-to-version diff splits on the same units: "eu-2 → eu-3" is one value replaced.
_TOKEN_OR_SPACE = re.compile(rf"{UNIT}|{WORD}|\s+|[^\w\s]", re.UNICODE)

EQUAL = "equal"
DELETE = "delete"
INSERT = "insert"


@dataclass(frozen=True)
class DiffSegment:
    op: str
    text: str


def tokens(text: str) -> list[str]:
    """The word and whitespace tokens of ``text``; joined they give ``text`` back exactly."""
    return _TOKEN_OR_SPACE.findall(text)


def word_diff(old: str, new: str) -> list[DiffSegment]:
    """Segments turning ``old`` into ``new``, word by word (adjacent same-op runs merged)."""
    a, b = tokens(old), tokens(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    out: list[DiffSegment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _push(out, EQUAL, "".join(a[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            _push(out, DELETE, "".join(a[i1:i2]))
        if tag in ("insert", "replace"):
            _push(out, INSERT, "".join(b[j1:j2]))
    return out


def _push(out: list[DiffSegment], op: str, text: str) -> None:
    if not text:
        return
    if out and out[-1].op == op:
        out[-1] = DiffSegment(op, out[-1].text + text)
    else:
        out.append(DiffSegment(op, text))


def changed(segments: list[DiffSegment]) -> bool:
    return any(s.op != EQUAL for s in segments)
