"""The sections of ``manage.py evaluate``, one module each; importing registers them."""

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
