"""The sections of ``manage.py evaluate``: a small registry.

A section is a function ``run(bench) -> SectionResult`` registered under a name::

    from evaluation.registry import SectionResult, section

    @section("recall", title="Recall@k, MRR, nDCG per channel", order=10)
    def run(bench: Workbench) -> SectionResult:
        ...
        return SectionResult(report={"recall": {...}}, rows=[("recall@10 lexical", 0.93)])

``report`` is merged into the top-level JSON report (each section owns its top-level keys;
two sections claiming one key is an error), ``rows`` are the lines of the printed table and
``figures`` the curves ``--plot`` draws. Sections live in :mod:`evaluation.sections` (one module
each, imported there, which also lists them: ``all_sections``, ``select``) and run in ``order``,
then name. This module imports no section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .workbench import Workbench


@dataclass
class Figure:
    """One plot: a title, axis labels and named series of (x, y) points."""

    title: str
    x_label: str
    y_label: str
    series: dict[str, list[tuple[float, float]]]


@dataclass
class SectionResult:
    report: dict[str, Any]
    rows: list[tuple[str, Any]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    order: int
    run: Callable[[Workbench], SectionResult]


SECTIONS: dict[str, Section] = {}


def section(
    name: str, *, title: str, order: int = 100
) -> Callable[[Callable[[Workbench], SectionResult]], Callable[[Workbench], SectionResult]]:
    """Register ``run`` as the section ``name``."""

    def register(run: Callable[[Workbench], SectionResult]) -> Callable[[Workbench], SectionResult]:
        if name in SECTIONS and SECTIONS[name].run is not run:
            raise ValueError(f"evaluation section {name!r} is registered twice")
        SECTIONS[name] = Section(name=name, title=title, order=order, run=run)
        return run

    return register
