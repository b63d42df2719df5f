"""Celery tasks of the exposure ledger: thin, named, primitive arguments."""

from __future__ import annotations

from typing import Any

from celery import shared_task


@shared_task(name="exposure.write")
def write_exposures(events: list[list[Any]]) -> int:
    """Insert the exposures one recall served (queued by ``exposure.ledger.record``)."""
    from . import ledger

    return ledger.write(events)


@shared_task(name="exposure.purge")
def purge_exposures() -> int:
    """Delete exposures past each Memory's retention (beat: ``purge-exposures``, hourly).
    Idempotent; bounded batches."""
    from . import ledger

    return ledger.purge()
