"""The audit trail's lookups by entry and by revision are served by indexes, so a Memory's events
are never read whole to find one entry's or one revision's (a million-event trail made each such
page read the table; bench/scale_probe.py prints the figures)."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.models import AuditEvent

pytestmark = pytest.mark.django_db


def indexes() -> dict[str, dict]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, AuditEvent._meta.db_table)
    return {name: c for name, c in found.items() if c["index"]}


def test_a_revisions_and_a_proposals_events_are_found_by_memory_and_id() -> None:
    columns = [c["columns"] for c in indexes().values()]
    assert ["memory_id", "revision_number"] in columns
    assert ["memory_id", "proposal_id"] in columns


@pytest.mark.skipif(connection.vendor != "postgresql", reason="jsonb containment is PostgreSQL's")
def test_an_entrys_events_are_found_through_a_gin_index_on_entry_ids() -> None:
    gin = [c for c in indexes().values() if c["type"] == "gin"]
    assert [c["columns"] for c in gin] == [["entry_ids"]]
