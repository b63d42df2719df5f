"""Word-level comparison: the proposal page's inputs → result with lost details marked, and the
audit pages' version-to-version word diff.

Texts are cut into word tokens (runs of letters/digits/underscore, each CJK character on its own —
a Chinese or Japanese sentence has no spaces —, single punctuation marks); on the proposal page
runs joined by ".", ":", "/", "@", "#" or "-" are one token (versions, addresses, hosts, times,
paths: ``_UNIT``). The stdlib's :class:`difflib.SequenceMatcher` aligns the token lists.

For the proposal page whitespace only separates and the lists are compared case-folded. The
output is a list of :class:`Segment` — plain text with flags — which the templates render inside
``<del>``, ``<ins>`` and ``<mark>`` with Django's auto-escaping: nothing here builds HTML, so
entry text such as ``<script>`` can only ever appear as text.

- :func:`annotate_input` marks, in one input, the words the result drops (``removed``) and the
  verified lost details (``lost``: the exact spans the reviewer must acknowledge).
- :func:`annotate_result` marks the words of the result found in none of the inputs (``added``).
- :func:`inline_diff` is the classic one-text diff (``removed`` then ``added`` segments).

Concatenating the segments' text always gives the original text back.

The version-to-version word diff (:func:`word_diff`, :class:`DiffSegment`: the proposal page's
text changes and the history pages' diffs) lives in ``lib.word_diff`` with the token units both
share; it is handed on here.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lib.word_diff import DELETE as DELETE
from lib.word_diff import EQUAL as EQUAL
from lib.word_diff import INSERT as INSERT
from lib.word_diff import UNIT, WORD
from lib.word_diff import DiffSegment as DiffSegment
from lib.word_diff import changed as changed
from lib.word_diff import tokens as tokens
from lib.word_diff import word_diff as word_diff
from proposals.verify import detail_pattern

_TOKEN = re.compile(rf"{UNIT}|{WORD}|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Segment:
    text: str
    removed: bool = False
    added: bool = False
    lost: bool = False

    @property
    def tag(self) -> str:
        """The element the template wraps the text in ("" for plain text)."""
        if self.lost:
            return "mark"
        if self.removed:
            return "del"
        if self.added:
            return "ins"
        return ""


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0).casefold()) for m in _TOKEN.finditer(text)]


def _segments(text: str, flags: Sequence[tuple[bool, bool, bool]]) -> list[Segment]:
    out: list[Segment] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or flags[i] != flags[start]:
            removed, added, lost = flags[start]
            out.append(Segment(text[start:i], removed, added, lost))
            start = i
    return out


def _spread(flags: list[bool], tokens: Sequence[tuple[int, int, str]], marked: set[int]) -> None:
    """Mark the characters of the marked tokens, and the gap between two marked neighbours
    (so "<del>two words</del>" is one highlight, not two)."""
    for i, (start, end, _) in enumerate(tokens):
        if i not in marked:
            continue
        for c in range(start, end):
            flags[c] = True
        if i + 1 in marked:
            for c in range(end, tokens[i + 1][0]):
                flags[c] = True


def lost_spans(text: str, details: Iterable[str]) -> list[tuple[int, int]]:
    """Where each lost detail occurs in ``text`` as a whole token sequence, case-insensitive
    (the same rule as ``proposals.verify.detail_present``)."""
    spans: list[tuple[int, int]] = []
    normalized = unicodedata.normalize("NFC", text)
    if normalized != text:
        return spans
    for detail in details:
        if not detail:
            continue
        pattern = detail_pattern(unicodedata.normalize("NFC", detail), re.IGNORECASE)
        spans.extend(m.span() for m in pattern.finditer(text))
    return spans


def _matched(a: Sequence[object], b: Sequence[object]) -> tuple[set[int], set[int]]:
    """Indices of a and of b inside equal blocks."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    in_a: set[int] = set()
    in_b: set[int] = set()
    for block in matcher.get_matching_blocks():
        in_a.update(range(block.a, block.a + block.size))
        in_b.update(range(block.b, block.b + block.size))
    return in_a, in_b


def _outside(
    tokens: Sequence[tuple[int, int, str]], spans: Sequence[tuple[int, int]]
) -> list[object]:
    """The tokens' words for alignment, each token inside a span replaced by a placeholder that
    equals nothing: a lost detail is by definition not in the result, so none of its pieces (the
    "." of "deploy.sh") may be aligned with a word of the result."""
    return [
        (i,) if any(start < s_end and s_start < end for s_start, s_end in spans) else word
        for i, (start, end, word) in enumerate(tokens)
    ]


def annotate_input(text: str, result: str, lost: Iterable[str] = ()) -> list[Segment]:
    """``text`` (one input) with the words the result drops and the lost details marked.

    A lost detail is dropped as a whole, so it is one contiguous mark, removed from end to end
    ("scripts/deploy.sh", "02:00"), never split where one of its punctuation marks happens to
    occur in the result."""
    if not text:
        return []
    tokens = _tokens(text)
    spans = lost_spans(text, lost)
    kept, _ = _matched(_outside(tokens, spans), [t for *_, t in _tokens(result)])
    removed = [False] * len(text)
    _spread(removed, tokens, set(range(len(tokens))) - kept)
    lost_flags = [False] * len(text)
    for start, end in spans:
        for c in range(start, end):
            lost_flags[c] = removed[c] = True
    return _segments(text, [(removed[i], False, lost_flags[i]) for i in range(len(text))])


def annotate_result(result: str, inputs: Sequence[str]) -> list[Segment]:
    """``result`` with the words that come from none of the inputs marked as added."""
    if not result:
        return []
    tokens = _tokens(result)
    words = [t for *_, t in tokens]
    covered: set[int] = set()
    for text in inputs:
        _, in_result = _matched([t for *_, t in _tokens(text)], words)
        covered |= in_result
    added = [False] * len(result)
    _spread(added, tokens, set(range(len(tokens))) - covered)
    return _segments(result, [(False, added[i], False) for i in range(len(result))])


def _slice(tokens: Sequence[tuple[int, int, str]], text: str, i: int, j: int) -> str:
    """Tokens i..j-1 with the whitespace before them (the last slice also keeps what trails the
    text), so consecutive slices of one text concatenate back to it."""
    if i >= len(tokens) or i >= j:
        return ""
    start = 0 if i == 0 else tokens[i - 1][1]
    stop = len(text) if j >= len(tokens) else tokens[j - 1][1]
    return text[start:stop]


def inline_diff(old: str, new: str) -> list[Segment]:
    """``old`` → ``new`` as one text: removed words then added words at each change."""
    a_tokens, b_tokens = _tokens(old), _tokens(new)
    matcher = difflib.SequenceMatcher(
        a=[t for *_, t in a_tokens], b=[t for *_, t in b_tokens], autojunk=False
    )
    out: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(Segment(_slice(b_tokens, new, j1, j2)))
            continue
        if tag in ("delete", "replace"):
            out.append(Segment(_slice(a_tokens, old, i1, i2), removed=True))
        if tag in ("insert", "replace"):
            out.append(Segment(_slice(b_tokens, new, j1, j2), added=True))
    out = [s for s in out if s.text]
    # Removed words sit between pieces of the new text: keep a space on each side of them, so
    # "<del>Deploy</del>at" never reads as one word. (The new text itself is kept exactly.)
    for i, seg in enumerate(out):
        if not seg.removed:
            continue
        text = seg.text
        if i > 0 and not out[i - 1].text[-1:].isspace() and not text[:1].isspace():
            text = " " + text
        if i + 1 < len(out) and not out[i + 1].text[:1].isspace() and not text[-1:].isspace():
            text = text + " "
        out[i] = Segment(text, removed=True)
    return out
