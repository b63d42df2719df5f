"""Engineering shorthand spelled out for the embedding model.

An agent asks in its own words, and those words are often shorthand: "how big should a PR be",
"where are the creds stored". The packaged model (all-MiniLM-L6-v2) reads most of it ("db",
"k8s", "env" land near their long forms) but not all: "how big should a PR be" scores 0.12
against "Reviewers prefer pull requests under 400 changed lines", below the vector channel's
``VECTOR_MIN_COSINE``, so neither channel found the answer. :func:`spelled_out` writes the long
form after each such word ("a PR (pull request)"): 0.53.

A closed list (:data:`ABBREVIATIONS`), whole words only, written as shorthand is (all lower or
all upper case, or capitalised at the start: not "dB"), with a plural "s" where one makes sense
(:data:`COUNTABLE`); no shorthand with a second common meaning for a team or for the person it
works for ("FF" is a feature flag or a fast-forward, "ts" a timestamp or TypeScript, "min"
minutes or minimum, "Mr" an honorific, "lbs" pounds, "MSG" a food additive, "Dev" a name). The
commonest, "PR", stays: a personal record in the gym is rarer in a team's memory than a pull
request. A Memory adds its own words in ``policy.glossary`` (:func:`clean_glossary`): a team's
names and jargon ("Hermes" → "the billing service"). Only the query's embedding reads them: the
lexical channel matches the words as written, and stored texts are embedded as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from ..text import CJK_CLASS, stop_terms, tokenize

#: Shorthand → its long form (singular; a plural shorthand gets the plural "s").
ABBREVIATIONS: dict[str, str] = {
    "auth": "authentication",
    "cfg": "configuration",
    "config": "configuration",
    "creds": "credentials",
    "db": "database",
    "deps": "dependencies",
    "docs": "documentation",
    "e2e": "end-to-end",
    "env": "environment",
    "infra": "infrastructure",
    "k8s": "kubernetes",
    "mgmt": "management",
    "perf": "performance",
    "pkg": "package",
    "pr": "pull request",
    "prod": "production",
    "repo": "repository",
    "sso": "single sign-on",
    "stg": "staging",
    "svc": "service",
    "tz": "time zone",
    "vm": "virtual machine",
}

#: The shorthand that takes a plural "s" ("PRs", "repos", "envs"); other shorthand with an "s"
#: ("devs": developers) is left alone.
COUNTABLE = frozenset("cfg config db env pkg pr repo svc tz vm".split())  # noqa: SIM905

#: Most words a Memory's own glossary (``policy.glossary``) may spell out.
GLOSSARY_MAX = 200
#: A glossary word: one word as typed, at most 32 characters: a letter or digit first, then
#: letters, digits and ``_ . + # -``, not ending in ``. -`` ("C++", "C#", "v2.api", "x_y").
_TERM = re.compile(r"[^\W_](?:[\w.+#-]{0,30}[\w+#])?")
#: Longest long form a glossary word may have.
LONG_FORM_MAX = 100


@lru_cache(maxsize=64)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """The words as whole words: not inside a longer word (a Chinese, Japanese or Korean letter
    next to one does not make it longer: "prod環境"), a path, a URL, a file name, a hyphenated
    name, a variable (``$ENV``, ``ENV=prod``) or a code span; with a plural "s" and a
    possessive."""
    return re.compile(
        rf"(?<![^\W{CJK_CLASS}])(?<![/.\-$#@=`])("
        + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
        + rf")(s?)((?:['\u2019]s|(?<=s)['\u2019]))?(?![^\W{CJK_CLASS}]|[/=`-])(?![.'\u2019]\w)",
        re.IGNORECASE,
    )


def spelled_out(query: str, glossary: Mapping[str, str] | None = None) -> str:
    """``query`` with the long form written after each shorthand word of :data:`ABBREVIATIONS`
    and of the Memory's ``glossary`` (:func:`clean_glossary`; its words win) — "how big should
    a PR be" → "how big should a PR (pull request) be", "two PRs" → "two PRs (pull requests)";
    unchanged when it holds none. A word joined by a hyphen ("k8s-prod-2", "pre-prod"), a path
    or a URL's ("…/pr/12", "config.yaml") is a name, left alone. A glossary word takes no
    plural "s" (it may be a name: "Hermes")."""
    spelled = _spellings(query, glossary)
    if not spelled:
        return query
    out, at = [], 0
    for m, long in spelled:
        out += [query[at : m.end()], f" ({long})"]
        at = m.end()
    return "".join([*out, query[at:]])


def spelled_words(query: str, glossary: Mapping[str, str] | None = None) -> dict[str, str]:
    """The shorthand :func:`spelled_out` reads in ``query``: ``{word as written: long form}``
    (the ranking trace shows it)."""
    return {m.group(0): long for m, long in _spellings(query, glossary)}


def _spellings(query: str, glossary: Mapping[str, str] | None) -> list[tuple[re.Match[str], str]]:
    """Each shorthand word of ``query`` with the long form it is read as."""
    own = frozenset(glossary or ())
    table = {**ABBREVIATIONS, **glossary} if glossary else ABBREVIATIONS
    countable = COUNTABLE - own
    found = []
    for m in _pattern(tuple(sorted(table))).finditer(query):
        word, plural, possessive = m.group(1), bool(m.group(2)), m.group(3) or ""
        short = word.lower()
        if plural and short not in countable:
            continue
        if short not in own and not _as_shorthand(word):
            continue
        long = table[short]
        if plural:
            long = long[:-1] + "ies" if long.endswith("y") else long + "s"
        found.append((m, long + possessive))
    return found


def _as_shorthand(word: str) -> bool:
    """Whether a word of the list is written as shorthand is, judged on its letters: all lower
    or all upper case ("db", "DB"), or capitalised ("Prod", "K8s"); not "dB" (decibels)."""
    letters = "".join(c for c in word if c.isalpha())
    return (
        letters.islower() or letters.isupper() or (letters[:1].isupper() and letters[1:].islower())
    )


def clean_glossary(raw: object) -> dict[str, str] | None:
    """A Memory's glossary (``policy.glossary``) as stored — ``{word: long form}``, each word
    lower-cased (it is matched in either case) and each long form on one line of single
    spaces — or None when :func:`glossary_problem` finds one."""
    if glossary_problem(raw) is not None:
        return None
    assert isinstance(raw, dict)
    return {word.lower(): " ".join(long.split()) for word, long in raw.items()}


def glossary_problem(raw: object) -> str | None:
    """What is wrong with a glossary, naming the word at fault, or None: it is an object of at
    most :data:`GLOSSARY_MAX` words, each one word as typed (:data:`_TERM`), none differing
    from another only in case nor changing length in lower case ("İzmir"), none a stop word
    ("it", "the": read in nearly every question), each with a long form of 1 to
    :data:`LONG_FORM_MAX` characters on one line."""
    if not isinstance(raw, dict):
        return "An object {word: long form}."
    if len(raw) > GLOSSARY_MAX:
        return f"At most {GLOSSARY_MAX} words."
    seen: set[str] = set()
    stops = stop_terms()
    for word, long in raw.items():
        if not isinstance(word, str) or not _TERM.fullmatch(word):
            return (
                f"{_shown(word)}: one word of at most 32 characters — a letter or digit first,"
                " then letters, digits and _ . + # -, not ending in . or -."
            )
        if len(word.lower()) != len(word):
            return f"{_shown(word)}: its lower case is another length; write it in lower case."
        if word.lower() in seen:
            return f"{_shown(word)}: another word differs from it only in case."
        if set(tokenize(word)) <= stops:
            return f"{_shown(word)}: a word this common would be read in nearly every question."
        seen.add(word.lower())
        if not isinstance(long, str) or "\n" in long or "\r" in long:
            return f"{_shown(word)}: its long form must be text on one line."
        if not 1 <= len(" ".join(long.split())) <= LONG_FORM_MAX:
            return f"{_shown(word)}: its long form must be 1 to {LONG_FORM_MAX} characters."
    return None


def _shown(word: object) -> str:
    """A refused word as an error message quotes it: at most 40 characters of it."""
    text = repr(word)
    return text if len(text) <= 40 else text[:39] + "…"
