"""The clauses that limit a statement, in every language the passes read (English, Russian,
Japanese, Korean, and Japanese with English terms): negations ("not", "never", "no", 使わない,
사용하지 않는다, "не"), restrictions ("only", "except", "unless", のみ, 만, "только"), conditions
("if", "when", 場合, 경우, "если") and modality ("must", "should", "always", 必ず, 반드시,
"должен").

A clause is its marker and the words it governs (its *scope*): in English and Russian the words
after the marker up to the end of the clause ("never store sessions in it", "only for rate
limits"); in Japanese and Korean, which put the marker last, the words before it ("本番環境のみ",
"주말에만"). A text *keeps* a clause when one of its sentences holds a marker of the same kind
and at least half of the clause's scope (:func:`clause_kept`): "Direct commits to main are
forbidden" keeps "never push directly to main", "Redis caches sessions" does not keep "never
store sessions in it".

Pure functions of texts: verification (``proposals.verify``) lists a clause an input holds and
the result does not keep as a lost detail of kind ``negation``, ``restriction``, ``condition`` or
``modality``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory.text import stop_terms, tokenize

#: Japanese and Korean negation, a closed list (what is not on it is not read as one):
#:
#: - Japanese: ない / なかった / なく / なければ after a kanji, at most one kana, and then a
#:   kana of the あ, い (but い) or え rows — a verb's negative stem (使わない, 分からない,
#:   食べない, 使えない, 使用しない, 問題はない) — or after できる's stem, a て-form's いる,
#:   なる and いける (できない, 使っていない, ならない, いけない), or しない after anything but
#:   hiragana or after を, も, は, が (キャッシュしない, 何もしない); ません (使いません,
#:   しません; not すみません, "sorry"); ず (ending a word, or ずに) and ぬ after a kanji and
#:   a kana of the あ row or せ (使わずに, 確認せず, 知らぬ); ない after the verbs whose
#:   negative stem is their one kanji (見ない, 来ない, 出来ない, 寝ない, 出ない; their なく
#:   only after no other kanji, as 偏見なく "without bias" is a noun's; not を得ない, "have no
#:   choice but"), after じゃ (本番じゃない, じゃなかった, じゃなく; not だけじゃなく "not
#:   only", nor the rhetorical じゃないですか), and after an adjective's
#:   く form — a kanji and at most two kana, or よ
#:   (速くない, 少なくない "not few", 新しくない, よくない).
#:   Not read: adjectives ending in ない whose kanji stands right before it (少ない "few",
#:   危ない "dangerous") or whose kana is of the う or お rows (すくない, あぶない, せつない),
#:   もったいない and 間違いない (い), しかない ("nothing but"), はず, まず, 必ず, 相変わらず.
#: - Korean: 않 (…지 않다, 않는다, 않습니다); 안 and 못 standing as a word before another
#:   (안 쓴다, 못 쓴다; not 안에 "inside", 못을 "nail"); 못하 after 지 or as a word
#:   (사용하지 못한다); 없 as a predicate (없다, 없습니다, 없어요, 없었다, 없음; not 끊임없이
#:   "ceaselessly", nor 없애다 "remove"); 아니다 as a word (아니다, 아닙니다, 아니에요, 아니예요,
#:   아닌, 아닌데, 아닐, 아니라, 아니지만, 아니어서, 아냐; not 아니면 "or", 아니요 "no", nor
#:   뿐만 아니라 / 만 아니라 "not only"); not 밖에 없다 ("nothing but", an obligation).
#:
#: Two bodies worded alike whose counts of these differ in parity give one slot two values:
#: "使わなければならない" (must use: two) restates "使う" (none); "使ってはならない" (must not
#: use: one) negates it.
_KANA = "\u3041-\u3096"
_KANJI = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々"
_JA_NEG_STEM = "かがさざただなはばぱまやらわきぎしじちにびみりけげせぜてでねべめれえ"
_JA_NEG_ENDING = "な(?:い|かっ|く|けれ)"
#: The verbs whose negative stem is their one kanji (見ない, 来ない, 出来ない, 寝ない, 出ない).
_JA_ONE_KANJI_VERBS = "見来寝出居着似煮得経"
#: A one-kanji verb, but not 得 after を (使わざるを得ない, やむを得ない: "have no choice but").
_JA_ONE_KANJI_VERB = rf"(?!(?<=を)得)[{_JA_ONE_KANJI_VERBS}]"
CJK_NEGATION = re.compile(
    rf"[{_KANJI}][{_KANA}]?[{_JA_NEG_STEM}](?<!しか){_JA_NEG_ENDING}"
    rf"|(?:(?<![{_KANA}])|(?<=[をもはが]))し{_JA_NEG_ENDING}"
    rf"|(?:でき|[てで]い|なら|いけ|出来){_JA_NEG_ENDING}"
    rf"|(?<!だけ)じゃ(?!ないですか(?:[?？。」\s]|$)){_JA_NEG_ENDING}"
    # The one-kanji verbs; なく ("without") only after no other kanji: 偏見なく is a noun's.
    rf"|{_JA_ONE_KANJI_VERB}な(?:い|かっ|けれ)|(?<![{_KANJI}]){_JA_ONE_KANJI_VERB}なく"
    rf"|(?:[{_KANJI}][{_KANA}]{{0,2}}|(?<![{_KANA}])よ)く{_JA_NEG_ENDING}"
    r"|(?<!すみ)(?<!済み)ません"
    rf"|[{_KANJI}][あかがさざただなばぱまやらわせ](?:ず(?![{_KANA}])|ずに|ぬ)"
    r"|않"
    r"|(?<![가-힣])[안못] (?=[가-힣])|(?:(?<![가-힣])|지 ?)못(?=하|했|합|한)"
    r"|(?<!밖에 )없(?:다|습니다|었다|었습니다|어요|었어요|어|음)(?![가-힣])"
    r"|(?<![가-힣])(?<!만 )(?<!뿐 )(?<!만이 )아(?:니(?:다|라|야|에요|예요|었|어|며|고|지|기)"
    r"|닐|닙|닌(?:데)?(?![가-힣])|님|냐(?![가-힣]))"
)


def cjk_negations(body: str) -> int:
    """How many Japanese and Korean negations ``body`` holds (:data:`CJK_NEGATION`)."""
    return len(CJK_NEGATION.findall(body))


# --- Clause markers -----------------------------------------------------------------------------

NEGATION = "negation"
RESTRICTION = "restriction"
CONDITION = "condition"
MODALITY = "modality"
CLAUSE_KINDS = (NEGATION, RESTRICTION, CONDITION, MODALITY)

#: Markers of languages written with spaces (English, Russian), matched as whole words,
#: case-insensitively. "never" is a negation (a result may say "must not" for it); "forbidden"
#: and its kin negate what they govern as "never" does.
_SPACED_MARKERS = {
    NEGATION: (
        r"not|never|no|nobody|nothing|none|neither|nor|without|cannot|\w+n['’]t"
        r"|forbidden|prohibited|disallowed|disabled"
        r"|не|нет|никогда|нельзя|ни|без|запрещ\w*"
    ),
    RESTRICTION: (
        r"only|except|excluding|unless|solely|exclusively"
        r"|только|лишь|кроме|исключительно"
    ),
    CONDITION: r"if|when|whenever|provided|если|когда",
    MODALITY: (
        r"must|should|shall|always|required|mandatory|(?:need|needs|have|has|ought)(?= to\b)"
        r"|должн\w*|нужно|надо|необходимо|обязательно|всегда|следует|требуется"
    ),
}
_SPACED = re.compile(
    "|".join(
        rf"(?P<{kind}>(?<![\w'’])(?:{pattern})(?![\w'’]))"
        for kind, pattern in _SPACED_MARKERS.items()
    ),
    re.IGNORECASE,
)
#: Markers of Japanese and Korean, which end the clause they govern. Japanese and Korean
#: negation is :data:`CJK_NEGATION`.
_CJK_MARKERS = {
    NEGATION: r"禁止|決して|절대",
    RESTRICTION: (
        r"のみ|だけ|以外|限り|限定|除いて|除き|しか"
        r"|(?<!지)만(?![가-힣])|뿐|제외|외에는|오직"
    ),
    CONDITION: (
        r"場合|(?<![かでにはもが])なら(?![なずぬ])|[ただ]ら(?=[、,\s]|$)|れば|際に|際は|とき|時に|時は"
        r"|경우|만약|(?<=[가-힣])면(?![가-힣])|때(?:는|에|마다)?(?![가-힣])"
    ),
    MODALITY: (
        r"必ず|べき|なければ(?:ならない|いけない)|なくては(?:ならない|いけない)|ねばならない"
        r"|必要|常に|いつも|必須|[てで]は(?:いけない|ならない)"
        r"|반드시|해야|야 (?:한다|합니다|해요)|항상|필수|필요"
    ),
}
#: Japanese and Korean markers that open the clause they govern (adverbs): their scope is
#: what follows them.
OPENERS = frozenset("必ず 常に いつも 決して 반드시 항상 절대 오직 만약".split())  # noqa: SIM905
_CJK = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _CJK_MARKERS.items()))
#: Where a clause ends: punctuation, or a conjunction that starts the next one.
_CLAUSE_END = re.compile(
    r"[,.;:!?()\[\]、。，；：！？\n]|\s(?:and|but|or|и|но|или|а)\s", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|[。！？\n]+")
_HANGUL_RUN = re.compile(r"[가-힣]*")
_SPACED_WORD = re.compile(r"[^\W_][\w'’-]*")
#: Words of scope a clause shows and compares, at most.
SCOPE_WORDS = 5
#: Characters of a Japanese or Korean scope (before its marker), at most.
SCOPE_CHARS = 14
#: The share of a clause's scope a sentence of the result must hold to keep the clause.
KEEP_SHARE = 0.5


@dataclass(frozen=True)
class Clause:
    """One clause of a text: its ``kind``, its ``marker`` as written, what it shows (``text``:
    the marker and its scope) and the scope's content terms (``scope``)."""

    kind: str
    marker: str
    text: str
    scope: frozenset[str]


def _is_cjk_text(text: str) -> bool:
    return bool(re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", text))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


@lru_cache(maxsize=4096)
def scope_terms(text: str) -> frozenset[str]:
    """The content terms of ``text`` as the analyzer reads them, without stop words, bare
    numbers and clause markers: for Chinese, Japanese and Korean its bigrams only (a single
    character says little)."""
    stops = stop_terms()
    out = set()
    for t in tokenize(text):
        if t in stops or t.isdigit() or _SPACED.fullmatch(t):
            continue
        if _is_cjk_text(t) and len(t) < 2:
            continue
        out.add(t)
    return frozenset(out)


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text`` in order, without repeats (by kind and shown text)."""
    out: dict[tuple[str, str], Clause] = {}
    for sentence in sentences(text):
        for c in _spaced_clauses(sentence) + _cjk_clauses(sentence):
            out.setdefault((c.kind, c.text.casefold()), c)
    return list(out.values())


def _spaced_clauses(sentence: str) -> list[Clause]:
    found = []
    for m in _SPACED.finditer(sentence):
        kind = m.lastgroup or NEGATION
        end = _CLAUSE_END.search(sentence, m.end())
        after = sentence[m.end() : end.start() if end else len(sentence)]
        words = _SPACED_WORD.findall(after)[:SCOPE_WORDS]
        scope_text = " ".join(words)
        if not scope_terms(scope_text):
            # A marker ending its clause ("… is not", "… only"): its scope is before it.
            start = max((e.end() for e in _CLAUSE_END.finditer(sentence, 0, m.start())), default=0)
            words = _SPACED_WORD.findall(sentence[start : m.start()])[-SCOPE_WORDS:]
            text = " ".join([*words, m.group()])
            scope_text = " ".join(words)
        else:
            text = " ".join([m.group(), scope_text])
        found.append(Clause(kind, m.group(), text, scope_terms(scope_text)))
    return found


def _cjk_clauses(sentence: str) -> list[Clause]:
    """Japanese and Korean clauses: the scope is what stands before the marker in its clause
    (at most :data:`SCOPE_CHARS` characters, not starting inside a word written with spaces),
    or, for a marker that opens its clause (必ず, 반드시, 만약), what follows it. A marker
    running on into its word (않 of 않는다) is shown with the word."""
    if not _is_cjk_text(sentence):
        return []
    found = []
    matches = [(m, m.lastgroup or NEGATION) for m in _CJK.finditer(sentence)]
    matches += [(m, NEGATION) for m in CJK_NEGATION.finditer(sentence)]
    covered: list[tuple[int, int, str]] = []
    for m, kind in sorted(matches, key=lambda x: x[0].start()):
        if any(a <= m.start() < b and k == kind for a, b, k in covered):
            continue
        start = max((e.end() for e in _CLAUSE_END.finditer(sentence, 0, m.start())), default=0)
        cut = max(start, m.start() - SCOPE_CHARS)
        if cut > start and not sentence[cut - 1].isspace():
            space = sentence.find(" ", cut, m.start())
            cut = space + 1 if space >= 0 else cut
        before = sentence[cut : m.start()].strip()
        marker_end = m.end() + len(_HANGUL_RUN.match(sentence, m.end()).group())  # type: ignore[union-attr]
        if scope_terms(before) and m.group() not in OPENERS:
            text, scope, span = sentence[cut:marker_end].strip(), before, (cut, marker_end)
        else:
            end = _CLAUSE_END.search(sentence, m.end())
            stop = min(end.start() if end else len(sentence), m.end() + SCOPE_CHARS)
            after = sentence[m.end() : stop].strip()
            text, scope, span = sentence[m.start() : stop].strip(), after, (m.start(), stop)
        covered.append((*span, kind))
        found.append(Clause(kind, m.group(), text, scope_terms(scope)))
    return found


@lru_cache(maxsize=4096)
def _sentence_clauses(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """For each sentence of ``text``: the kinds of its markers, and its content terms."""
    out = []
    for sentence in sentences(text):
        kinds = {m.lastgroup for m in _SPACED.finditer(sentence)}
        if _is_cjk_text(sentence):
            kinds |= {m.lastgroup for m in _CJK.finditer(sentence)}
            if CJK_NEGATION.search(sentence):
                kinds.add(NEGATION)
        out.append((frozenset(k for k in kinds if k), scope_terms(sentence)))
    return tuple(out)


def clause_kept(clause: Clause, text: str) -> bool:
    """Whether ``text`` keeps ``clause``: one of its sentences holds a marker of the clause's
    kind and at least :data:`KEEP_SHARE` of its scope."""
    for kinds, terms in _sentence_clauses(text):
        if clause.kind not in kinds:
            continue
        if not clause.scope or len(clause.scope & terms) >= KEEP_SHARE * len(clause.scope):
            return True
    return False
