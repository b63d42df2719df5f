"""Engineering shorthand spelled out for the embedding model.

An agent asks in its own words, and those words are often shorthand: "how big should a PR be",
"where are the creds stored". The packaged model (all-MiniLM-L6-v2) reads most of it ("db",
"k8s", "env" land near their long forms) but not all: "how big should a PR be" scores 0.12
against "Reviewers prefer pull requests under 400 changed lines", below the vector channel's
``VECTOR_MIN_COSINE``, so neither channel found the answer. :func:`spelled_out` writes the long
form after each such word ("a PR (pull request)"): 0.53.

A closed list (:data:`ABBREVIATIONS`): whole words only, either case, with a plural "s" where one
makes sense (:data:`COUNTABLE`); no
shorthand with a second common meaning in a software team ("FF" is a feature flag or a
fast-forward, "ts" a timestamp or TypeScript, "min" minutes or minimum). Only the query's
embedding reads it: the lexical channel matches the words as written, and stored texts are
embedded as written.
"""

from __future__ import annotations

import re

#: Shorthand → its long form (singular; a plural shorthand gets the plural "s").
ABBREVIATIONS: dict[str, str] = {
    "auth": "authentication",
    "cfg": "configuration",
    "config": "configuration",
    "creds": "credentials",
    "db": "database",
    "deps": "dependencies",
    "dev": "development",
    "docs": "documentation",
    "e2e": "end-to-end",
    "env": "environment",
    "infra": "infrastructure",
    "k8s": "kubernetes",
    "lb": "load balancer",
    "mgmt": "management",
    "mr": "merge request",
    "msg": "message",
    "perf": "performance",
    "pkg": "package",
    "pr": "pull request",
    "prod": "production",
    "pwd": "password",
    "repo": "repository",
    "sso": "single sign-on",
    "stg": "staging",
    "svc": "service",
    "tz": "time zone",
    "vm": "virtual machine",
}

#: The shorthand that takes a plural "s" ("PRs", "repos", "envs"); other shorthand with an "s"
#: ("devs": developers) is left alone.
COUNTABLE = frozenset(
    "cfg config db env lb mr msg pkg pr pwd repo svc tz vm".split()  # noqa: SIM905
)

_WORD = re.compile(
    r"(?<![\w/.-])("
    + "|".join(sorted(map(re.escape, ABBREVIATIONS), key=len, reverse=True))
    + r")(s?)(?![\w/-])(?!\.\w)",
    re.IGNORECASE,
)


def spelled_out(query: str) -> str:
    """``query`` with the long form written after each shorthand word of :data:`ABBREVIATIONS`
    ("how big should a PR be" → "how big should a PR (pull request) be", "two PRs" → "two PRs
    (pull requests)"); unchanged when it holds none. A word joined by a hyphen ("k8s-prod-2",
    "pre-prod"), a path or a URL's ("…/pr/12", "config.yaml") is a name, left alone."""

    def spell(m: re.Match[str]) -> str:
        short, plural = m.group(1).lower(), bool(m.group(2))
        if plural and short not in COUNTABLE:
            return m.group(0)
        long = ABBREVIATIONS[short]
        if plural:
            long = long[:-1] + "ies" if long.endswith("y") else long + "s"
        return f"{m.group(0)} ({long})"

    return _WORD.sub(spell, query)
