"""The exposure ledger's tests start and end with an empty embedded buffer."""

from __future__ import annotations

import pytest

from exposure import ledger


@pytest.fixture(autouse=True)
def _empty_buffer():
    ledger.flush()
    yield
    ledger.flush()
