"""Audit rows cannot be rewritten or removed, not even with raw SQL: PostgreSQL refuses UPDATE
and DELETE (trigger), SQLite refuses UPDATE; Python refuses both on every backend."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memory.models import AppendOnlyError, AuditEvent

pytestmark = pytest.mark.django_db

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the DELETE trigger is PostgreSQL's"
)


@pytest.fixture
def event(history) -> AuditEvent:
    return AuditEvent.objects.get(action="entry.forgotten")


def _raw(sql: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(sql, params)


def test_raw_update_of_an_audit_row_is_refused(event):
    with pytest.raises(DatabaseError, match="append-only"):
        _raw("UPDATE memory_auditevent SET label = %s WHERE id = %s", ["tampered", event.pk])
    with pytest.raises(DatabaseError, match="append-only"):
        _raw(
            "UPDATE memory_auditevent SET actor_id = %s, correlation_id = %s WHERE id = %s",
            ["user:1", "forged", event.pk],
        )
    event.refresh_from_db()
    assert event.label == "The deploy target is the eu-3 cluster"
    assert event.actor_id.startswith("key:")


def test_queryset_update_is_refused_by_the_database(event):
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(label="tampered")
    assert not AuditEvent.objects.filter(label="tampered").exists()


@postgres_only
def test_raw_delete_of_an_audit_row_is_refused_on_postgresql(event):
    count = AuditEvent.objects.count()
    with pytest.raises(DatabaseError, match="append-only"):
        _raw("DELETE FROM memory_auditevent WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError, match="append-only"):
        _raw("DELETE FROM memory_auditevent", [])
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    assert AuditEvent.objects.count() == count


def test_python_refuses_to_save_or_delete_an_existing_event(event):
    event.label = "tampered"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
