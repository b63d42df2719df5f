"""The sections of ``manage.py evaluate``, one module each; importing registers them
(``evaluation.registry``), and the lists of them in run order."""

from ..registry import SECTIONS, Section
from . import (  # noqa: F401
    conflicts,
    conversations,
    dedupe,
    density,
    freshness,
    injection,
    ledger,
    near_duplicates,
    no_regression,
    passes,
    quality_guard,
    recall,
    secrets,
)

# The lifecycle sections: deterministic for a seed, identical on every backend (a test holds
# them to a stored expectation on SQLite and PostgreSQL).
LIFECYCLE = ("no_regression", "freshness", "density", "context_pack", "ledger", "conflicts")


def all_sections() -> list[Section]:
    """Every registered section, in run order."""
    return sorted(SECTIONS.values(), key=lambda s: (s.order, s.name))


def select(names: list[str] | None) -> list[Section]:
    """The sections named (all when ``names`` is empty); unknown names raise ``KeyError``."""
    known = all_sections()
    if not names:
        return known
    by_name = {s.name: s for s in known}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KeyError(", ".join(unknown))
    wanted = set(names)
    return [s for s in known if s.name in wanted]
