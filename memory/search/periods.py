"""The calendar periods a search names: "in January 2024", "in December", "during 2022".

An agent asks its memory about a time ("What achievement did John share with Tim in January
2024?"), and a conversation's turns carry the date they were said as ``effective_at``. The
cross-encoder reads words, not dates: a turn written in that month ("Last week was wild — I got
an endorsement!") holds neither the month nor the year. When the reranker runs, a pooled hit
effective inside a named period is preferred (``cross_encoder.PERIOD_BOOST``); nothing is
filtered, and the pool's members stay the same (DESIGN §6).

What is read: an English month name or its abbreviation followed by a four-digit year, in any
case, with a day or "of" between them ("January 15, 2024", "August of 2023", "Sept. 2022"); a
capitalised month name alone, except as the query's first word (every year's month of that name:
"may" and "march" in lower case, and "May I …" first, are verbs far more often than months); and
a four-digit year from 1900 to 2099 alone, not as an amount ("$2000") or part of a longer
number. Not read: relative times ("last week", "yesterday": relative to when the question is
asked, which the search does not know), ranges ("between January and March 2024" names January
of every year and March 2024), other languages. A person named April or June is read as the
month: a preference only, it costs such a query little. Periods are calendar months and years in
UTC, as ``effective_at`` is stored. Measured on LoCoMo (docs/recall-evaluation.md, "Periods
named in the question").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_YEAR = r"(?:19|20)\d\d"
#: A month's name, or its three-letter abbreviation ("Sept" too) with an optional dot.
_NAME = rf"(?:{'|'.join(MONTHS)}|(?:{'|'.join(m[:3] for m in MONTHS)}|sept)\.?)"
#: What may stand between a month and its year: a day ("January 15, 2024") or "of".
_BETWEEN = r"(?:\s+\d{1,2}(?:st|nd|rd|th)?,?|\s+of|,)?\s+"
_MONTH_YEAR = re.compile(rf"\b({_NAME}){_BETWEEN}({_YEAR})\b", re.IGNORECASE)
_MONTH = re.compile(rf"\b({'|'.join(m.capitalize() for m in MONTHS)})\b")
_YEAR_ALONE = re.compile(rf"(?<![$€£¥\d.,])\b({_YEAR})\b(?![.,]?\d)")


def _month(name: str) -> int:
    return [m[:3] for m in MONTHS].index(name.lower().rstrip(".")[:3]) + 1


@dataclass(frozen=True)
class Period:
    """A calendar month (``month`` set) of a year (``year`` set), or either alone."""

    month: int | None
    year: int | None

    def holds(self, moment: datetime | None) -> bool:
        if moment is None:
            return False
        return (self.month is None or moment.month == self.month) and (
            self.year is None or moment.year == self.year
        )


def named_periods(query: str) -> tuple[Period, ...]:
    """Every period ``query`` names, in the order named, each once."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    for match in _MONTH_YEAR.finditer(query):
        found.append((match.start(), Period(_month(match.group(1)), int(match.group(2)))))
        taken.append(match.span())

    def free(match: re.Match[str]) -> bool:
        return not any(start <= match.start() < end for start, end in taken)

    for match in _MONTH.finditer(query):
        # A query's first word is capitalised whatever it is: "May I …", "March on …".
        if free(match) and query[: match.start()].strip():
            found.append((match.start(), Period(_month(match.group(1)), None)))
    for match in _YEAR_ALONE.finditer(query):
        if free(match):
            found.append((match.start(), Period(None, int(match.group(1)))))
    return tuple(dict.fromkeys(period for _, period in sorted(found, key=lambda f: f[0])))


def within(moment: datetime | None, periods: tuple[Period, ...]) -> bool:
    """Whether ``moment`` falls inside any of ``periods``."""
    return any(period.holds(moment) for period in periods)
