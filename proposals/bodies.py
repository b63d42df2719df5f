"""What the maintenance passes compare of two bodies: the slot/value difference, the subject,
the sentences an extractive merge keeps, and how complete a body is.

- :func:`value_differences` — for each kind of specific detail (number, time, date, version,
  identifier, name, URL, path, e-mail) that both bodies carry, the values one has and the other
  lacks.
- :func:`word_swap` — whether two bodies worded alike differ in one slot only, filled with other
  words ("prefers dark mode" / "prefers light mode") or negated ("allowed" / "not allowed",
  使う / 使わない, 사용한다 / 사용하지 않는다: :data:`CJK_NEGATION`);
  :func:`slot_differences` is that and :func:`value_differences` together: what makes two
  close bodies a contradiction rather than a restatement.
- :func:`subject_similarity` — how far two bodies are about the same thing (content words
  without their values).
- :func:`merged_body` — an extractive merge that keeps every detail and appends only sentences
  that add something (:func:`adds_to`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from memory.text import is_cjk, stemming, stop_terms, tokenize, words

from .clauses import CJK_NEGATION as CJK_NEGATION
from .clauses import cjk_negations, clause_kept, clauses
from .verify import (
    Conflict,
    Detail,
    detail_kept,
    detail_pattern,
    extract_details,
    spaced_cjk,
)

#: Detail kinds that name a slot's value (a difference there is a different value).
VALUE_KINDS = ("number", "time", "date", "version", "identifier", "name", "url", "path", "email")

#: English function words: they carry no subject, so two bodies sharing only these share
#: nothing. (A closed class; the analyzer keeps them because search needs them.)
FUNCTION_WORDS = frozenset(
    """a an the is are was were be been being am to of in on at by for from with without as
    and or but not no nor so if then than that this these those it its it's there here now
    has have had do does did will would shall should can could may might must our we you your
    their they them he she his her i me my us all any each every some more most very just also
    into onto over under about after before since until while when where which who whom whose
    what why how up down out off again moved move moves changed change changes update updated
    new old now currently today""".split()  # noqa: SIM905
)

#: Where a sentence ends. Not at ";": a clause cut there and appended to a merge read
#: "… again;. had to restart …" — a merge appends whole sentences, as written.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@lru_cache(maxsize=8192)
def _details(body: str) -> tuple[Detail, ...]:
    """``extract_details(body)``, remembered: a pass compares one body with many neighbours."""
    return tuple(extract_details(body))


def details_by_kind(body: str) -> dict[str, dict[str, str]]:
    """The value details of ``body`` by kind: ``{key: shown}``, each value by what it is
    compared by (:attr:`Detail.key`: a weekday by its day, so "Friday", "Fridays" and "金曜日"
    are one value; a count by its number, so "4" and "four" are one) and how it is shown (a
    weekday by its day, anything else as written, casefolded)."""
    out: dict[str, dict[str, str]] = {}
    for d in _details(body):
        if d.kind in VALUE_KINDS:
            shown = d.text.casefold() if d.kind == "number" else d.key
            out.setdefault(d.kind, {}).setdefault(d.key, shown)
    return out


#: Words that narrate a change of value ("moved from 9:30 to 10:00", "is now eu-3"; Japanese
#: 変更 / 変わった / 今は, Korean 바뀌었다 / 변경 / 이제, Russian "теперь", "перенесли").
CHANGE_CUE = re.compile(
    r"\b(?:moved|changed|switched|replaced|updated?|now|no longer|instead|from\b.+\bto)\b"
    r"|変更|変わっ|移動|今は|바뀌|변경|이제"
    r"|(?<!\w)(?:теперь|перенес\w*|перенёс\w*|измен\w*|вместо)(?!\w)",
    re.IGNORECASE,
)
#: The same cues as subject words (cut from a subject as the English ones of
#: :data:`FUNCTION_WORDS` are): a body narrating the change is about the same slot.
CHANGE_WORDS = "変更 変わった 移動 今は 現在 바뀌었다 변경 이제 현재 теперь сейчас"


def value_differences(a: str, b: str) -> dict[str, list[list[str]]]:
    """``{kind: [values only in a, values only in b]}`` for every detail kind both carry with a
    different value: each side has a value the other lacks ("9:30" against "10:00"), or one side
    adds a value while narrating a change ("moved from 9:30 to 10:00" against "at 9:30"). A
    detail one side merely adds ("eu-2" against "eu-2 via ArgoCD") is extra information."""
    da, db = details_by_kind(a), details_by_kind(b)
    cue_a, cue_b = bool(CHANGE_CUE.search(a)), bool(CHANGE_CUE.search(b))
    out: dict[str, list[list[str]]] = {}
    for kind in sorted(set(da) & set(db)):
        only_a = sorted(da[kind][k] for k in da[kind].keys() - db[kind].keys())
        only_b = sorted(db[kind][k] for k in db[kind].keys() - da[kind].keys())
        if (only_a and only_b) or (only_a and cue_a) or (only_b and cue_b):
            out[kind] = [only_a, only_b]
    return out


#: Words that negate a clause (the analyzer splits "don't" into "don" and "t"), and "off" (the
#: negation of "on"): a slot holding one on one side only holds another value.
NEGATIONS = frozenset(
    "not no never t cannot without none nothing nobody neither nor off".split()  # noqa: SIM905
) | {"не", "нет", "никогда", "нельзя"}  # Russian: not, no, never, must not


#: Verbs that only link a subject to its value ("the app uses / talks to the gateway at …",
#: "logs go / are sent to Loki", "уходят" / "отправляются"): one replaced by another does not
#: change the fact.
LINKING_VERBS = frozenset(
    """use uses used talk talks run runs go goes live lives sit sits point points send sends
    sent ship ships call calls connect connects reach reaches hit hits get gets
    идёт идут уходит уходят отправляется отправляются""".split()  # noqa: SIM905
)
#: At most this many content terms on each side of the one replaced slot of :func:`word_swap`:
#: more is a rewording, not one value for another.
SWAP_MAX_TERMS = 2


def word_swap(a: str, b: str) -> list[list[str]]:
    """``[words only in a, words only in b]`` when the two bodies are worded alike but for one
    slot holding other words — a different value written as words ("dark mode" / "light mode",
    "main" / "master", "the staging cluster" / "the production cluster") or a negation ("are
    allowed" / "are not allowed", "on" / "off", a Japanese or Korean negative ending:
    :data:`CJK_NEGATION`) — else ``[]`` (pure).

    Alike: their word streams differ in one place only, and what both keep carries a subject
    word (not only a value: "logs go to Datadog" / "we send prod logging to Datadog" is a
    rewording around a value). The slot: at most :data:`SWAP_MAX_TERMS` content terms each
    side, differing both ways, linking verbs aside ("uses" / "talks to"); or a negation on one
    side only. A slot only one side fills ("deploys via ArgoCD") is extra information, and a
    slot whose terms are the same ("every Friday" / "on Fridays") says the same."""
    wa, wb = _slot_words(a), _slot_words(b)
    ops = SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    changed = [op for op in ops if op[0] != "equal"]
    if len(changed) != 1:
        return []
    kept = " ".join(_joined(wa[i1:i2]) for tag, i1, i2, _, _ in ops if tag == "equal")
    values = " ".join(
        v
        for d in (details_by_kind(a), details_by_kind(b))
        for vs in d.values()
        for v in vs.values()
    )
    if not content_terms(kept) - content_terms(values):
        return []
    _, i1, i2, j1, j2 = changed[0]
    slot_a, slot_b = wa[i1:i2], wb[j1:j2]
    if bool(NEGATIONS.intersection(slot_a)) != bool(NEGATIONS.intersection(slot_b)):
        return [slot_a, slot_b]
    # A Japanese or Korean negation is an ending, read on the whole body: all but the one slot
    # is the same on both sides, so a count that differs in parity differs there.
    if cjk_negations(a) % 2 != cjk_negations(b) % 2:
        return [slot_a, slot_b]
    linking = _linking_terms() | _neutral_terms()
    ta = content_terms(_joined(slot_a)) - linking
    tb = content_terms(_joined(slot_b)) - linking
    if ta - tb and tb - ta and max(_size(ta), _size(tb)) <= SWAP_MAX_TERMS:
        return [slot_a, slot_b]
    return []


def _slot_words(body: str) -> list[str]:
    """The words of ``body`` in order, each Chinese, Japanese or Korean character one word (the
    analyzer's unigrams, without its bigrams: a bigram stream puts one changed character in
    three places, so "深色" / "浅色" were never one slot)."""
    return words(spaced_cjk(body, " \\g<0> "))


def _joined(tokens: Sequence[str]) -> str:
    """``tokens`` of :func:`_slot_words` as text again: adjacent CJK characters written
    together (so the analyzer gives their bigrams back), other words apart."""
    out: list[str] = []
    run = False  # whether out[-1] is CJK characters
    for t in tokens:
        cjk = len(t) == 1 and is_cjk(t)
        if cjk and run:
            out[-1] += t
        else:
            out.append(t)
        run = cjk
    return " ".join(out)


def _size(terms: set[str]) -> int:
    """How many words ``terms`` stand for, roughly: a CJK run by its bigrams, its single
    characters only when it has none (a set of terms no longer holds the runs' order, so ICU's
    words cannot be read back as the search floor reads them)."""
    runs = [t for t in terms if not (len(t) == 1 and is_cjk(t))]
    return len(runs) or len(terms)


@lru_cache(maxsize=2)
def _linking(stem: bool) -> frozenset[str]:
    return frozenset(tokenize(" ".join(sorted(LINKING_VERBS))))


def _linking_terms() -> frozenset[str]:
    return _linking(stemming())


def slot_differences(a: str, b: str) -> dict[str, list[list[str]]]:
    """:func:`value_differences`, and under ``"words"`` the :func:`word_swap` of two bodies
    worded alike: every way two close bodies give one slot different values. Empty: nothing
    says they disagree."""
    out = value_differences(a, b)
    swap = word_swap(a, b)
    if swap:
        out["words"] = swap
    return out


def _is_acronym(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def subject_terms(body: str) -> set[str]:
    """The content words of ``body`` without its values: what it is *about*. A person's or
    product's name is a value ("the lead is Mara Okafor"); an acronym names the subject ("the
    API rate limit")."""
    return set(_subject_terms(body))


@lru_cache(maxsize=8192)
def _subject_terms(body: str) -> frozenset[str]:
    """The words of ``body`` once its values are cut out: a word is dropped where it is part
    of a value, not everywhere — "staging" stays the subject of "The staging server is
    staging-1.helios.dev" (dropping it left "server" alone, and "Staging moved to
    staging-2.helios.dev" no subject at all, so the two never compared)."""
    text = body
    for d in _details(body):
        if d.kind in VALUE_KINDS and not (d.kind == "name" and _is_acronym(d.text)):
            text = detail_pattern(d.text, re.IGNORECASE).sub(" ", text)
    stem = stemming()
    return frozenset(t for t in words(text) if not t.isdigit() and not _no_subject(t, stem))


@lru_cache(maxsize=65536)
def _no_subject(word: str, stem: bool) -> bool:
    """Whether ``word`` (one of :func:`memory.text.words`) carries no subject: one of
    :data:`FUNCTION_WORDS` or of :data:`CHANGE_WORDS`, or a stop word not written in ASCII
    (particles, endings, Russian pronouns: the English ones are the function words, whose list
    the subjects were measured with) — looked up as the analyzer indexes it (``stem``: whether
    it stems; a Russian word by its stem, a CJK bigram as itself, its last token)."""
    if word in FUNCTION_WORDS or word in _change_words():
        return True
    if word.isascii():
        return False
    analyzed = tokenize(word)
    return bool(analyzed) and analyzed[-1] in stop_terms()


@lru_cache(maxsize=1)
def _change_words() -> frozenset[str]:
    return frozenset(words(CHANGE_WORDS))


def subject_similarity(a: str, b: str, *, strict: bool = False) -> float:
    """Overlap of the subjects of two bodies: |A ∩ B| / min(|A|, |B|) over content words (1.0
    when one subject contains the other), 0 when either has none. ``strict`` (for values of one
    slot): also 0 when *each* side has a content word the other lacks — "the anonymous rate
    limit" and "the API rate limit" are two slots, not two values of one."""
    sa, sb = _subject_terms(a), _subject_terms(b)
    if not sa or not sb or (strict and sa - sb and sb - sa):
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


def sentences(body: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(body) if s.strip()]


def content_terms(text: str) -> set[str]:
    """The analyzer's terms of ``text`` that carry content: stemmed ("formats" is "format"),
    without the stop words (:func:`memory.text.stop_terms`), the function words above ("again",
    "now") and bare numbers (a number is a detail, compared as a whole: "3" is not in "30")."""
    return {t for t in tokenize(text) if t not in _filler_terms() and not t.isdigit()}


def _filler_terms() -> frozenset[str]:
    return _filler(stemming())


@lru_cache(maxsize=2)
def _filler(stem: bool) -> frozenset[str]:
    return stop_terms() | frozenset(tokenize(" ".join(sorted(FUNCTION_WORDS))))


def adds_to(sentence: str, merged: str) -> bool:
    """Whether ``sentence`` says something ``merged`` does not: a detail it lacks (a host, a
    number, a version, a name), or a content term it lacks. A sentence that only restates —
    an inflection ("formats" next to "format"), filler ("again", "now"), a count written
    another way ("four" next to "4") — adds nothing."""
    numbers = {d.key for d in _details(merged) if d.kind == "number"}
    if any(not detail_kept(d, merged, numbers) for d in _details(sentence)):
        return True
    # The words of a count the merge holds as digits are not new content.
    written = {
        t
        for d in _details(sentence)
        if d.kind == "number" and d.key in numbers
        for t in tokenize(d.text)
    }
    return bool(content_terms(sentence) - content_terms(merged) - written)


def merged_body(bodies: Sequence[str]) -> str:
    """An extractive merge that keeps every detail: the first body (the most complete member)
    followed by each sentence of the others that carries a detail or a content term
    (:func:`adds_to`) the merge still misses. Nothing is paraphrased."""
    merged = bodies[0].strip()
    for other in bodies[1:]:
        for sentence in sentences(other):
            if adds_to(sentence, merged):
                sep = " " if merged.endswith((".", "!", "?")) else ". "
                merged = f"{merged}{sep}{sentence.strip()}"
    return merged


def completeness(body: str) -> tuple[int, int, int]:
    """How complete a body is: its details, then its content words, then its length."""
    details: list[Detail] = extract_details(body)
    return (len(details), len(subject_terms(body)), len(body))


# --- Glued contradictions ---------------------------------------------------------------------

#: The least subject overlap (strict: :func:`subject_similarity`) for two sentences giving a
#: slot different values to be about one subject.
CONFLICT_MIN_SUBJECT = 0.6
#: Auxiliaries and copulas: a prefix shared up to one of them and a content word after it holds
#: the subject and its verb ("Database migrations are applied …").
AUXILIARIES = frozenset(
    """is are was were be been being has have had will would can could must should shall may
    might do does did get gets got""".split()  # noqa: SIM905
)
#: Verbs that only say a value is in place ("is set to" / "is configured to" 30 seconds): one
#: replaced by another is no other method.
NEUTRAL_VERBS = frozenset(
    "set configured configure defined specified kept stored located placed made done".split()  # noqa: SIM905
)


def rewritten_complement(a: str, b: str) -> list[list[str]]:
    """``[what a says, what b says]`` when two bodies share their subject and verb and then go
    on, each, with words the other lacks: one method, actor, place or value in place of another
    ("Database migrations are applied automatically by the deploy pipeline" / "… are applied by
    hand by the on-call engineer"), else ``[]`` (pure).

    Read on content words (function words aside): the two sequences differ in one place only,
    after at least two shared words that run through an auxiliary or copula ("are applied");
    each side's part holds a content word the other lacks, verbs that only put a value in place
    ("set" / "configured") and linking verbs aside. A part only one side has ("… and is purged
    weekly") is more information, and a different verb ("lives in" / "is purged") another
    fact."""
    wa, wb = _slot_words(a), _slot_words(b)
    ca, cb = _content_positions(wa), _content_positions(wb)
    ta, tb = [t for _, t in ca], [t for _, t in cb]
    ops = [op for op in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()]
    changed = [op for op in ops if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return []
    _, i1, i2, j1, j2 = changed[0]
    if i1 < 2 or not AUXILIARIES.intersection(wa[: ca[i1][0]]):
        return []
    neutral = _linking_terms() | _neutral_terms()
    only_a = set(ta[i1:i2]) - set(tb) - neutral
    only_b = set(tb[j1:j2]) - set(ta) - neutral
    if not only_a or not only_b:
        return []
    return [wa[ca[i1][0] : ca[i2 - 1][0] + 1], wb[cb[j1][0] : cb[j2 - 1][0] + 1]]


def _content_positions(ws: list[str]) -> list[tuple[int, str]]:
    """The content words of a word stream as ``(position, term)``: each word's analyzer term
    (stemmed), function words, stop words and lone numbers aside."""
    out = []
    filler = _filler_terms()
    for i, w in enumerate(ws):
        if w in FUNCTION_WORDS:
            continue
        terms = tokenize(w)
        term = terms[-1] if terms else ""
        if term and term not in filler:
            out.append((i, term))
    return out


@lru_cache(maxsize=2)
def _neutral(stem: bool) -> frozenset[str]:
    return frozenset(tokenize(" ".join(sorted(NEUTRAL_VERBS))))


def _neutral_terms() -> frozenset[str]:
    return _neutral(stemming())


def incompatible(a: str, b: str) -> tuple[str, list[list[str]]] | None:
    """How two sentences give one subject incompatible values, or None: worded alike but for
    one slot holding other words or a negation (:func:`word_swap`: "dark" / "light" theme,
    "allowed" / "not allowed"); a value of one kind each side lacks on one subject
    (:func:`value_differences`, the subjects — stemmed, "узла" is "узлов" — overlapping at
    least :data:`CONFLICT_MIN_SUBJECT`, strictly); or the same subject and verb going on with
    another complement (:func:`rewritten_complement`)."""
    swap = word_swap(a, b)
    if swap and _one_value_each(a, b, swap):
        return "words", swap
    sa, sb = _stemmed_subject(a), _stemmed_subject(b)
    overlap = len(sa & sb) / min(len(sa), len(sb)) if sa and sb else 0.0
    if not (sa - sb and sb - sa) and overlap >= CONFLICT_MIN_SUBJECT:
        for kind, values in value_differences(a, b).items():
            return kind, values
    rewritten = rewritten_complement(a, b)
    if rewritten:
        return "complement", rewritten
    return None


def _one_value_each(a: str, b: str, swap: list[list[str]]) -> bool:
    """Whether a :func:`word_swap` puts one value against another: a negation on one side, or
    at most one content term each side ("dark" / "light", "main" / "master"). Two terms each
    may be a clause one side adds where the other adds another ("…, owned by Mara Okafor" /
    "… and is purged weekly"): two facts, not two values."""
    slot_a, slot_b = swap
    if bool(NEGATIONS.intersection(slot_a)) != bool(NEGATIONS.intersection(slot_b)):
        return True
    if cjk_negations(a) % 2 != cjk_negations(b) % 2:
        return True
    linking = _linking_terms() | _neutral_terms()

    def words_with_content(slot: list[str]) -> int:
        # A CJK run is one word ("라이트"), as the text writes it.
        return sum(1 for w in _joined(slot).split() if content_terms(w) - linking)

    return max(words_with_content(slot_a), words_with_content(slot_b)) <= 1


@lru_cache(maxsize=8192)
def _stemmed_subject(body: str) -> frozenset[str]:
    """:func:`subject_terms` as the analyzer indexes them (stemmed, stop words aside)."""
    return frozenset(content_terms(" ".join(sorted(_subject_terms(body)))))


#: Where a sentence of a result ends, Chinese and Japanese full stops included.
_RESULT_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")


def glued_conflicts(result: str, inputs: Sequence[str] = ()) -> list[Conflict]:
    """The pairs of sentences of ``result`` that give one subject two incompatible values
    (:func:`incompatible`): two facts glued together, which a result must never state. A pair
    that already stands in one of the ``inputs`` is that input's own wording, not the change's
    doing."""
    known = {(c.first, c.second) for body in inputs for c in _conflicts(body)}
    return [c for c in _conflicts(result) if (c.first, c.second) not in known]


def _conflicts(text: str) -> list[Conflict]:
    """Each pair of sentences of ``text`` that :func:`incompatible` calls two values for one
    subject. Only pairs sharing a content term are compared (a body of 8 KiB holds a hundred
    sentences: the set intersection keeps the quadratic part cheap)."""
    parts = [p.strip() for p in _RESULT_SENTENCE.split(text) if p.strip()]
    terms = [content_terms(p) for p in parts]
    out: list[Conflict] = []
    for i, a in enumerate(parts):
        for j in range(i + 1, len(parts)):
            b = parts[j]
            if not terms[i] & terms[j]:
                continue
            found = incompatible(a, b)
            if found is None:
                continue
            how, values = found
            out.append(Conflict(a, b, how, values))
    return out


# --- Restatements -----------------------------------------------------------------------------

_CJK_LETTER = re.compile(r"[\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
#: Korean particles and endings of one syllable: grammar, not what a sentence says.
_KO_GRAMMAR = frozenset("은는이가을를에서의로와과도다한하고며면요니되돼됩됐됨어었았있습합해했함")


def restating_terms(body: str) -> frozenset[str]:
    """What :func:`differs_both_ways` compares of a body: its content terms (stemmed, stop and
    function words, bare numbers, linking verbs and verbs that only put a value in place
    aside), and for Chinese, Japanese and Korean its letters — Han, Katakana and Hangul, but
    not Hiragana or Korean particles — since a reordered sentence keeps its letters and not
    the bigrams across its particles."""
    latin = _CJK_LETTER.sub(" ", spaced_cjk(body))
    terms = (
        {t for t in content_terms(latin) if not is_cjk(t[0])} - _linking_terms() - _neutral_terms()
    )
    terms |= {c for c in _CJK_LETTER.findall(body) if c not in _KO_GRAMMAR}
    return frozenset(terms)


def differs_both_ways(a: str, b: str) -> list[list[str]]:
    """``[terms only in a, terms only in b]`` when each of two bodies says something the other
    does not (:func:`restating_terms`), else ``[]``: the second is no restatement of the first
    — or one with other words, which no check of the texts tells from another method, actor or
    place ("applied by the deploy pipeline" / "applied by hand by the on-call engineer"), so
    the near-duplicate pass never merges it. A body that only adds to the other ("… and is
    purged weekly") restates it."""
    ta, tb = restating_terms(a), restating_terms(b)
    if ta - tb and tb - ta:
        return [sorted(ta - tb), sorted(tb - ta)]
    return []


def clause_differences(a: str, b: str) -> list[str]:
    """The clauses (``proposals.clauses``: a negation, a restriction, a condition, a modality)
    that one body holds and the other does not keep: "only on weekends" / "on weekends",
    "never store sessions" / "store sessions" are two facts, whatever else they share."""
    return [c.text for c in clauses(a) if not clause_kept(c, b)] + [
        c.text for c in clauses(b) if not clause_kept(c, a)
    ]
