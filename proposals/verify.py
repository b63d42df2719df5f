"""Server-side verification of a submitted proposal (DESIGN.md §9).

What the server can check itself, it checks — it never trusts the agent's word:

- every referenced entry exists in the proposal's Memory and the given version is its head
  (the caller checks this under the Memory lock and refuses with 409 ``stale_proposal``);
- similarity of the inputs is recomputed (``memory.dedupe``: lexical by default, cosine with an
  embedding provider that reads every one of the texts, ``memory.embeddings.model_reads``);
- a consolidation or promotion body keeps every specific detail of the bodies it replaces —
  numbers, dates, times, version strings, identifiers, paths, URLs, code spans, proper names —
  and the missing ones are listed as ``lost_details`` (the reviewer must acknowledge each);
- a proposal must change something (:func:`same_text` → 422 ``noop_rewrite``).

Everything here is a pure function of texts and already-loaded rows, so it is cheap to test and
identical on both backends.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from text_to_num import text2num

from memory.dedupe import Similarity, round_score, similarity
from memory.models import Memory
from memory.text import CJK_CLASS
from memory.text import words as word_stream

from .clauses import CLAUSE_KINDS, clause_kept, clauses

#: Bump when the verification rules change in a way a reviewer should know about.
RULES_VERSION = 1
DEFAULT_PROMOTION_MIN_SESSIONS = 2


def policy_version(memory: Memory) -> str:
    """A short, stable name for the Memory's policy as it is now (rules version + digest), so
    a reviewer can tell whether a proposal was verified under the policy in force."""
    canonical = json.dumps(memory.policy or {}, sort_keys=True, separators=(",", ":"))
    return f"p{RULES_VERSION}-{hashlib.sha256(canonical.encode()).hexdigest()[:12]}"


def promotion_min_sessions(memory: Memory) -> int:
    value = (memory.policy or {}).get("promotion_min_sessions", DEFAULT_PROMOTION_MIN_SESSIONS)
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return DEFAULT_PROMOTION_MIN_SESSIONS


# --- Same text --------------------------------------------------------------------------------


def same_text(a: str, b: str) -> bool:
    """Whether two bodies say the same thing word for word: only case, punctuation or spacing
    differ (the analyzer's unstemmed word streams are equal: "deploys" is not "deployed")."""
    return word_stream(a) == word_stream(b)


# --- Details ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Detail:
    text: str
    kind: str
    #: What the detail's value is compared by, when not its casefolded text: a weekday's day
    #: ("Fridays", "пятницу" and "金曜日" are all ``friday``), a count's number, a number and
    #: its CJK counter without the space between them ("30 秒" is ``30秒``).
    value: str = ""

    @property
    def key(self) -> str:
        return self.value or self.text.casefold()


_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_COUNT_WORD = (
    r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty"
    r"|ninety|hundred|thousand|million)"
)
_URL = re.compile(r"\b(?:https?|ftp|ssh|git|s3|file)://[^\s<>\"'`]+", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/?(?:[\w.*<>@+-]+/)+[\w.*<>@+-]*")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PERCENT = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*%")
_PLAIN_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*%?(?![\w])")
# Ordered: earlier patterns claim their span first, so "02:00" is one time, not two numbers,
# and "scripts/deploy.sh" is one path, not an identifier inside a path.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("code", re.compile(r"`([^`\n]+)`")),
    ("url", _URL),
    ("email", _EMAIL),
    (
        "date",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
            r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
            rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}(?:\s+\d{{4}})?\b"
            rf"|\b{_MONTHS}\s+\d{{4}}\b"
            r"|\b\d{4}-?Q[1-4]\b|\bQ[1-4](?:\s+\d{4})?\b"
        ),
    ),
    ("path", _PATH),
    (
        "time",
        re.compile(
            r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?(?![\w:])"
            r"|\b\d{1,2}\s?(?:am|pm)\b",
            re.IGNORECASE,
        ),
    ),
    ("number", _PERCENT),
    # Words with a digit or an underscore, dotted names (deploy.sh, acme.internal), mixed case
    # (PostgreSQL, PagerDuty): specific names a summary must not drop.
    (
        "identifier",
        re.compile(
            r"\b(?=[\w.:#-]*[^\W\d_])(?=[\w.:#-]*(?:\d|_))[\w]+(?:[-.:#][\w]+)*"
            r"|\b[^\W\d_][\w-]*\.[^\W\d_][\w]{0,9}(?:\.[\w]+)*\b"
            r"|\b[^\W\d_]+[a-z][A-Z][\w]*\b"
            r"|\b[A-Z][a-z]+[A-Z][\w]*\b"
        ),
    ),
    ("version", re.compile(r"\bv?\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z.]+)?(?!\.*\w)|\bv\d+\b")),
    ("number", _PLAIN_NUMBER),
    # Counts written out ("a sprint of two weeks" / "three weeks" are two values; "three"
    # dropped by a merge is a lost detail), one run of number words each ("twenty-five"). Not
    # "one" on its own, more often a pronoun than a count.
    (
        "number",
        re.compile(rf"\b{_COUNT_WORD}(?:[\s-]+(?:and[\s-]+)?(?:{_COUNT_WORD}|one))*\b", re.I),
    ),
]
_NOT_DETAILS = {"e.g", "i.e", "etc", "vs", "a.m", "p.m"}
#: The character a pattern cannot match without: a text without it is not searched with it.
#: These patterns may start anywhere inside a run of word characters and separators and scan
#: the rest of the run each time (quadratic on a long run with no match); most texts hold none.
_NEEDS: dict[re.Pattern[str], str] = {_EMAIL: "@", _PATH: "/", _PERCENT: "%"}

#: A Chinese, Japanese or Korean character (the analyzer's ``memory.text.CJK_CLASS``): a word of
#: its own. ``_IN_WORD``: a character that continues a word written with spaces.
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
_IN_WORD = f"[^\\W{CJK_CLASS}]"

#: The days of the week, Monday first, as each language writes them: English names (and their
#: plurals), Japanese 月曜(日)…, Korean 월요일…, Russian names in any case form — but "среда"
#: only in the forms a weekday takes ("в среду", "по средам"), since it also means "environment".
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = re.compile(
    rf"(?P<en>(?<!{_IN_WORD})(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?!{_IN_WORD}))"
    r"|(?P<ja>[月火水木金土日]曜日?)"
    r"|(?P<ko>[월화수목금토일]요일)"
    rf"|(?P<ru>(?<!{_IN_WORD})(?:понедельник|вторник|сред(?=(?:у|ам|ах)(?!{_IN_WORD}))"
    rf"|четверг|пятниц|суббот|воскресень){_IN_WORD}*)",
    re.IGNORECASE,
)
_WEEKDAY_STEMS = {
    "en": ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun"),
    "ja": tuple("月火水木金土日"),
    "ko": tuple("월화수목금토일"),
    "ru": ("понедельник", "вторник", "сред", "четверг", "пятниц", "суббот", "воскресень"),
}
#: A unit written right after a number in Japanese or Korean ("30秒", "4つ", "2週間", "3ヶ月",
#: "9時半", "10시", "5분", "3시간"): one counter (a kanji, with 間 or 半 after it, a katakana
#: word, a Hangul syllable that is not a particle) — "3から", "3에서" are a number and a particle.
_UNIT = re.compile(
    r"[ヶケカか箇]月|つ|[ァ-ヺー]+[\u4e00-\u9fff]?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff](?:間|半)?"
    r"|(?![에은는이가을를의로으와과도만부까보처])[가-힣](?:간|월)?"
)
#: The counters a number may be written one space before ("30 秒" is "30秒"): seconds, minutes,
#: hours, days, weeks, months, years, times, items, people, machines, multiples in Japanese,
#: Chinese and Korean. A closed list, since a number and a space are as often followed by the
#: next word ("ポート 8080 使用"); a Korean counter ends its word or is followed by a particle
#: ("포트 8080 개발" holds no count).
_SPACED_UNIT = re.compile(
    r"時間|[ヶケカか箇]月|[个個]月|分[钟鐘]|小[时時]|[秒分日週周天年回個个件人次倍台つ]"
    r"|(?:시간|개월|[초분시일주달년회번개명건배])"
    r"(?![가-힣](?<![에은는이가을를의로으와과도만입간째]))"
)
#: What a URL or path holds of the CJK characters next to it (:func:`_cjk_path_end`): a run of
#: them that starts a segment, followed by "/" or by "." and an extension, or, ending a URL, the
#: run's Han, Katakana and Hangul up to the first hiragana (a Japanese particle).
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_RUN_GOES_ON = re.compile(r"/|\.[A-Za-z0-9]")
_NO_HIRAGANA = re.compile(f"(?:(?![\u3040-\u309f])[{CJK_CLASS}])+")
_GOES_ON = {"url": re.compile(r"[^\s<>\"'`]*"), "path": re.compile(r"[\w.*<>@+/-]*")}
_BARE_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?= )")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;]\s+|[。！？]\s*|\n\s*(?:[-*•]\s+)?|\(\s*|[\"“‘]\s*)$")


def _is_capitalized(word: str) -> bool:
    return word[0].isupper()


def _is_acronym(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def extract_details(text: str) -> list[Detail]:
    """The specific details of ``text`` in order of appearance, without repeats.

    Proper names are capitalized words that do not start a sentence, acronyms (UTC, CET), and
    runs of two or more capitalized words (a sentence-initial "Mara Okafor …" counts). A lone
    capitalized word at the start of a sentence is not taken for a name.

    Words end where the analyzer's do (``memory.text.words``): a Chinese, Japanese or Korean
    character is a word of its own, so "APIのタイムアウトは30秒" holds the name "API" and the
    number "30秒" rather than one identifier spanning the sentence. A number followed by a
    counter is one value with its unit ("30秒", "4つ", "10시", "5분": ``_UNIT``), also one space
    before a counter of a closed list ("30 秒" is valued "30秒": ``_SPACED_UNIT``), and a weekday
    is a date whatever its language (``_WEEKDAY``; compared by the day). A URL or path keeps the
    CJK characters that belong to it (:func:`_cjk_path_end`): a run starting a segment when "/"
    or "." and an extension follows it ("/srv/データ/設定.yaml"), and the Han, Katakana and
    Hangul of a URL's last one, up to the first hiragana ("…/wiki/東京を参照" ends at "東京").
    A weekday inside a URL or a path is part of it, not a date ("…/wiki/金曜日" is one URL,
    "/srv/friday/backup.tar" one path).
    """
    text = unicodedata.normalize("NFC", text)
    spaced = spaced_cjk(text)
    taken = [False] * len(text)
    found = _weekday_details(text, taken, _url_and_path_spans(text, spaced))
    found += _pattern_details(text, spaced, taken)
    found += _name_details(spaced, taken)
    found.sort(key=lambda x: x[0])
    out: list[Detail] = []
    seen: set[str] = set()
    for _, d in found:
        key = d.text.casefold()
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def spaced_cjk(text: str, repl: str = " ") -> str:
    """``text`` with each Chinese, Japanese or Korean character (``memory.text.CJK_CLASS``) replaced
    by ``repl`` (an ``re.sub`` replacement). With a space, the default, the text keeps its
    length, so a match in it is a span of ``text``, and no pattern's word runs across such a
    character, as no analyzer word does."""
    if text.isascii():
        return text
    return _CJK_CHAR.sub(repl, text)


def _weekday_details(
    text: str, taken: list[bool], urls: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, Detail]]:
    """The weekdays of ``text`` (``_WEEKDAY``) as dates valued by the day, claiming their
    characters in ``taken`` — but none inside one of the ``urls`` (spans of ``text``, URLs and
    paths): the day a URL or path names ("…/wiki/金曜日", "/srv/friday/") is part of it, which
    stays one value."""
    found: list[tuple[int, Detail]] = []
    for m in _WEEKDAY.finditer(text):
        if any(start < m.end() and m.start() < end for start, end in urls):
            continue
        lang = m.lastgroup or "en"
        stems = _WEEKDAY_STEMS[lang]
        # Matched as the pattern matched (case-insensitively: "FRıDAY" is Friday).
        day = next(i for i, stem in enumerate(stems) if re.match(stem, m.group(), re.IGNORECASE))
        if _claim(taken, *m.span()):
            found.append((m.start(), Detail(m.group(), "date", _WEEKDAYS[day])))
    return found


def _claim(taken: list[bool], start: int, end: int) -> bool:
    """Marks the characters ``start:end`` as taken, unless one of them already is (then
    False)."""
    if any(taken[start:end]):
        return False
    for i in range(start, end):
        taken[i] = True
    return True


def _url_and_path_spans(text: str, spaced: str) -> list[tuple[int, int]]:
    """Where the URLs and paths of ``text`` stand, as :func:`_pattern_details` takes them
    (their CJK characters included, trailing punctuation not): the weekdays are read before the
    patterns, and a weekday inside a URL or a path is not one. Slashes after a weekday that join
    only words or hours are no path but a weekday and what follows it (:func:`_weekday_phrase`);
    two plain words around one slash are prose (:func:`_prose_slash`)."""
    if "/" not in text:
        return []
    spans = []
    for kind, pattern in (("url", _URL), ("path", _PATH)):
        for m in pattern.finditer(spaced):
            start, end, value = _matched(text, spaced, kind, m)
            if kind == "path" and (_prose_slash(value) or _weekday_phrase(value)):
                continue
            spans.append((start, end))
    return spans


#: What may follow a weekday and a slash in a phrase: a word ("Saturday", "after-hours") or
#: an hour ("17" of "17:00", "5pm").
_PHRASE_PART = re.compile(r"[^\W\d_][^\W\d]*(?:-[^\W\d_]+)*|\d{1,2}(?:[ap]m)?", re.IGNORECASE)


def _weekday_phrase(path: str) -> bool:
    """Whether a path match is a weekday and what follows it: a relative path whose first part
    is a weekday and whose other parts are words or hours ("Friday/17:00", "Friday/5pm",
    "Monday/Thursday/Friday", "Friday/after-hours"). A path that starts with "/", "~" or ".",
    another word, or holds a file name, a year or a version is a path ("/srv/friday/",
    "docs/sunday-runbook.md", "friday/db.sql", "fridays/2024/q1.csv", "Friday/v2/api")."""
    first, *rest = path.split("/")
    return (
        path[0] not in "/~."
        and _WEEKDAY.fullmatch(first) is not None
        and all(_PHRASE_PART.fullmatch(part) for part in rest if part)
    )


def _prose_slash(path: str) -> bool:
    """Whether a path match is prose: a single slash between two plain words ("and/or",
    "TCP/IP")."""
    if path.count("/") != 1 or path.endswith("/"):
        return False
    left, _, right = path.partition("/")
    return left.isalpha() and right.isalpha()


def _matched(text: str, spaced: str, kind: str, m: re.Match[str]) -> tuple[int, int, str]:
    """``(start, end, value)`` of the detail of ``kind`` that ``m`` (a match in ``spaced``)
    stands for in ``text``: a code span's value without its backquotes, a URL or path with the
    CJK characters that belong to it (:func:`_cjk_path_end`) and without trailing
    punctuation."""
    start, end = m.span()
    if kind == "code":
        return start, end, text[m.start(1) : m.end(1)]
    if kind in ("url", "path") and spaced is not text:
        end = _cjk_path_end(text, spaced, kind, end)
    value = text[start:end]
    if kind in ("url", "path"):
        value = value.rstrip(".,;:!?)]}'\"")
    return start, start + len(value), value


def _pattern_details(text: str, spaced: str, taken: list[bool]) -> list[tuple[int, Detail]]:
    """The details ``_PATTERNS`` match in ``spaced`` (``text`` as :func:`spaced_cjk` made it),
    each with where it starts and its text from ``text``, taken in the patterns' order: a match
    claims its characters in ``taken``, and one overlapping a match taken before it is dropped.
    Numbers with a unit are taken after versions and before bare numbers."""
    found: list[tuple[int, Detail]] = []
    for kind, pattern in _PATTERNS:
        if pattern is _PLAIN_NUMBER and spaced is not text:
            found += _unit_details(text, spaced, taken)
        if _NEEDS.get(pattern, "") not in spaced:
            continue
        for m in pattern.finditer(spaced):
            start, end, value = _matched(text, spaced, kind, m)
            if not value or value.casefold() in _NOT_DETAILS:
                continue
            if kind == "path" and _prose_slash(value):
                continue
            if _claim(taken, start, end):
                found.append(
                    (start, Detail(value, kind, _number_value(value) if kind == "number" else ""))
                )
    return found


def _cjk_path_end(text: str, spaced: str, kind: str, end: int) -> int:
    """Where the URL or path (``kind``) that ``_PATTERNS`` matched up to ``end`` of ``spaced``
    ends in ``text``: a run of CJK characters that starts one of its segments (right after "/",
    "=" or "#") belongs to it when "/" or "." and an extension follows the run
    ("/srv/データ/設定.yaml"), and a URL's last such run keeps its Han, Katakana and Hangul up
    to the first hiragana, as Japanese particles are hiragana ("…/wiki/東京を参照" ends at
    "東京"; "…/docsを参照" at "docs")."""
    while text[end - 1] in "/=#" and (run := _CJK_RUN.match(text, end)):
        if not _RUN_GOES_ON.match(text, run.end()):
            last = _NO_HIRAGANA.match(text, end) if kind == "url" else None
            return last.end() if last else end
        goes_on = _GOES_ON[kind].match(spaced, run.end())
        end = goes_on.end() if goes_on else run.end()
    return end


def _number_value(text: str) -> str:
    """What a count is compared by: its integer ("4", "04" and "four" are ``4``; "twenty-five"
    is ``25``, read by ``text2num``), else its text (a decimal, a percentage, digits too many
    for an integer)."""
    try:
        if text.isdigit():
            return str(int(text))
        return str(text2num(" ".join(re.split(r"[\s-]+", text.casefold())), "en"))
    except ValueError:
        return ""


def _unit_details(text: str, spaced: str, taken: list[bool]) -> list[tuple[int, Detail]]:
    """Numbers written right before a Chinese, Japanese or Korean counter (``_UNIT``) as one
    number value ("30秒", "10시"), claiming their characters in ``taken``. A number one space
    before a counter of ``_SPACED_UNIT`` is the same value: "30 秒" is valued "30秒"."""
    found: list[tuple[int, Detail]] = []
    for m in _BARE_NUMBER.finditer(spaced):
        at = m.end()
        if text[at] == " " and _SPACED_UNIT.match(text, at + 1):
            at += 1
        unit = _UNIT.match(text, at)
        if unit is None:
            continue
        start, end = m.start(), unit.end()
        value = m.group() + unit.group() if at > m.end() else ""
        if _claim(taken, start, end):
            found.append((start, Detail(text[start:end], "number", value)))
    return found


def _name_details(text: str, taken: list[bool]) -> list[tuple[int, Detail]]:
    """The proper names among the capitalized words no pattern took, each with where it
    starts, claiming their characters in ``taken``: acronyms, words that do not start a
    sentence, and words in a run of capitalized ones (without a trailing "'s")."""
    found: list[tuple[int, Detail]] = []
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    for i, (start, end, word) in enumerate(words):
        if any(taken[start:end]) or not _is_capitalized(word):
            continue
        initial = bool(_SENTENCE_END.search(text[:start]))
        in_run = _in_name_run(text, words, i, taken)
        if _is_acronym(word) or not initial or in_run:
            word = word.rstrip("'’-")
            if word.endswith(("'s", "’s")):
                word = word[:-2]
            if _claim(taken, start, end):
                found.append((start, Detail(word, "name")))
    return found


def _in_name_run(text: str, words: list[tuple[int, int, str]], i: int, taken: list[bool]) -> bool:
    """Whether word ``i`` of ``words`` stands next to another capitalized word that is not an
    acronym, with only spaces between them: the next one, when no pattern took it, or the
    previous one, when that one does not start a sentence."""
    start, end, _ = words[i]
    nxt = words[i + 1] if i + 1 < len(words) else None
    prev = words[i - 1] if i > 0 else None
    return (
        nxt is not None
        and _is_capitalized(nxt[2])
        and not _is_acronym(nxt[2])
        and text[end : nxt[0]].strip() == ""
        and not any(taken[nxt[0] : nxt[1]])
    ) or (
        prev is not None
        and _is_capitalized(prev[2])
        and not _is_acronym(prev[2])
        and text[prev[1] : start].strip() == ""
        and not _SENTENCE_END.search(text[: prev[0]])
    )


def detail_present(detail: str, text: str) -> bool:
    """Whether ``detail`` occurs in ``text`` as a whole token sequence (case-insensitive): "3"
    is not present in "30" nor in "3.11", "deploy.sh" is present in "scripts/deploy.sh"."""
    pattern = detail_pattern(detail.casefold())
    return bool(pattern.search(unicodedata.normalize("NFC", text).casefold()))


def detail_pattern(detail: str, flags: int = 0) -> re.Pattern[str]:
    """``detail`` as a whole token sequence: not inside a longer word, number or version (a
    Chinese, Japanese or Korean character is a word of its own: "30秒" is in "30秒です")."""
    return re.compile(
        f"(?<!{_IN_WORD})" + re.escape(detail) + rf"(?!{_IN_WORD}|[.,]\d)", re.UNICODE | flags
    )


@dataclass
class LostDetail:
    text: str
    kind: str
    entries: list[str] = field(default_factory=list)


def number_keys(text: str) -> set[str]:
    """The values of the counts ``text`` holds (:attr:`Detail.key`: "4" and "four" are one)."""
    return {d.key for d in extract_details(text) if d.kind == "number"}


def detail_kept(detail: Detail, text: str, numbers: set[str]) -> bool:
    """Whether ``text`` keeps ``detail``: it holds its words, or, for a count, the same number
    written otherwise (``numbers``: :func:`number_keys` of ``text``)."""
    return detail_present(detail.text, text) or (detail.kind == "number" and detail.key in numbers)


def lost_details(replaced: Sequence[tuple[str, str]], proposed: str) -> list[LostDetail]:
    """Details and clauses of the replaced bodies (``(entry_id, body)`` pairs) missing from
    ``proposed``, in order of first appearance (details of each body before its clauses), each
    with the entries it came from. A count written another way ("four" for "4") is not lost;
    a clause (a negation, a restriction, a condition, a modality: ``proposals.clauses``) is
    kept when a sentence of ``proposed`` holds a marker of its kind and most of its scope."""
    lost: dict[tuple[str, str], LostDetail] = {}
    numbers = number_keys(proposed)

    def add(text: str, kind: str, entry_id: str) -> None:
        group = "clause" if kind in CLAUSE_KINDS else "detail"
        item = lost.setdefault((group, text.casefold()), LostDetail(text, kind))
        if entry_id not in item.entries:
            item.entries.append(entry_id)

    for entry_id, body in replaced:
        for d in extract_details(body):
            if not detail_kept(d, proposed, numbers):
                add(d.text, d.kind, entry_id)
        for c in clauses(body):
            if not clause_kept(c, proposed):
                add(c.text, c.kind, entry_id)
    return list(lost.values())


# --- The report -------------------------------------------------------------------------------


@dataclass
class Conflict:
    """Two sentences of a result that give one subject two incompatible values (a glued
    contradiction): what each says of the slot (``values``) and how they differ (``how``)."""

    first: str
    second: str
    how: str
    values: list[list[str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """How a reviewer sees it among the lost details (and acknowledges it)."""
        return f"{self.first} ≠ {self.second}"


@dataclass
class Report:
    """The verification stored with a proposal and shown in its representation."""

    similarity: float | None = None
    similarity_method: str | None = None
    pairs: list[dict[str, Any]] = field(default_factory=list)
    lost: list[LostDetail] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)

    def check(self, code: str, status: str, message: str, **extra: Any) -> None:
        self.checks.append({"code": code, "status": status, "message": message, **extra})

    def flagged(self) -> bool:
        """Whether verification names something the change loses or contradicts."""
        return bool(self.lost or self.conflicts)

    def as_json(self) -> dict[str, Any]:
        """``lost_details``: ``[{text, kind, from_entry}]`` (API.md), the glued conflicts among
        them (kind ``conflict``, from no entry) — a reviewer acknowledges each before
        approving; ``lost_detail_info`` is the same with every entry a detail came from."""
        lost = [*self.lost, *(LostDetail(c.text, "conflict") for c in self.conflicts)]
        return {
            "similarity": self.similarity,
            "similarity_method": self.similarity_method,
            "pairs": self.pairs,
            "lost_details": [
                {"text": d.text, "kind": d.kind, "from_entry": d.entries[0] if d.entries else None}
                for d in lost
            ],
            "lost_detail_info": [
                {"detail": d.text, "kind": d.kind, "entries": d.entries} for d in lost
            ],
            "conflicts": [
                {"first": c.first, "second": c.second, "how": c.how, "values": c.values}
                for c in self.conflicts
            ],
            "checks": self.checks,
        }


def score_pairs(report: Report, anchor: tuple[str, str], others: Iterable[tuple[str, str]]) -> None:
    """Recompute the similarity of ``anchor`` (label, text) to each other (entry_id, text);
    ``report.similarity`` is the weakest pair (the claim a reviewer must believe). One method
    for every pair, so they compare: the cosine when the model reads every text, else lexical."""
    items = list(others)
    if not items:
        return
    sim = similarity()
    texts = [text for _, text in items]
    if not all(sim.reads(text) for text in [anchor[1], *texts]):
        sim = Similarity(None)
    scores = [s.value for s in sim.scores(anchor[1], texts)]
    report.similarity_method = sim.method
    report.pairs = [
        {"a": anchor[0], "b": entry_id, "score": round_score(score)}
        for (entry_id, _), score in zip(items, scores, strict=True)
    ]
    report.similarity = round_score(min(scores))


def check_details(
    report: Report,
    replaced: Sequence[tuple[str, str]],
    proposed: str,
    conflicts: Sequence[Conflict] = (),
) -> list[LostDetail]:
    """Records on ``report`` what ``proposed`` loses of the ``replaced`` bodies (a warning:
    the reviewer acknowledges each) and the ``conflicts`` it states (``bodies.
    glued_conflicts``: a failed check — two incompatible values for one subject)."""
    lost = lost_details(replaced, proposed)
    report.lost = lost
    if lost:
        report.check(
            "details_preserved",
            "warn",
            f"{len(lost)} detail(s) of the replaced bodies are missing from the proposed body; "
            "approval requires acknowledging each.",
            lost=[d.text for d in lost],
        )
    else:
        report.check("details_preserved", "pass", "Every detail of the replaced bodies is kept.")
    report.conflicts = list(conflicts)
    if conflicts:
        report.check(
            "no_conflicting_values",
            "fail",
            f"The proposed text states {len(conflicts)} pair(s) of incompatible values for one "
            "subject (two facts glued together); it settles nothing. Reject it, or amend the "
            "text to state one value; approval requires acknowledging each.",
            conflicts=[c.text for c in conflicts],
        )
    else:
        report.check(
            "no_conflicting_values", "pass", "The proposed text gives each subject one value."
        )
    return lost
