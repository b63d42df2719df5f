"""The audit event stream's scope and redaction: where every read of it starts.

Every read starts from the actor. Scope rules:

- reviewers, auditors and staff may read the audit trail (:func:`may_read_audit`); agents may not;
- a key limited to Memories sees only those Memories' events (events without a Memory — keys
  issued, sources registered — only for unscoped readers);
- a key below ``restricted`` clearance sees events about entries above its clearance with the
  label, the payload *and those entries' ids* withheld (:func:`redact`), and an id of such an
  entry answers as an id that does not exist (:func:`is_hidden_entry`).

The audit log, its API and export (``audit``) add their filters on top; an entry's and a
revision's history pages (``review``) read the events touching their record. Events are written
by :mod:`memory.audit`; nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, models
from django.db.models import BooleanField, Exists, OuterRef
from django.db.models.expressions import RawSQL

from lib.identity import STAFF, Actor, ApiRole, Sensitivity, sensitivities_up_to

from .models import AuditEvent, Entry, RevisionChange

#: Roles that may read the audit trail. Auditors read everything in scope and change nothing.
AUDIT_READERS = frozenset({ApiRole.REVIEWER, ApiRole.AUDITOR, STAFF})


#: What anyone else is told (403) on a page of the audit trail.
READERS_ONLY = "Only reviewers, auditors and staff may read the audit trail."


def may_read_audit(actor: Actor) -> bool:
    return actor.role in AUDIT_READERS


def sees_everything(actor: Actor) -> bool:
    """A ``restricted`` clearance: nothing is withheld from this actor."""
    return actor.clearance == Sensitivity.RESTRICTED


class AuditEventQuerySet(models.QuerySet[AuditEvent]):
    """Chainable reads over :class:`memory.models.AuditEvent` (which has a plain manager)."""

    def visible_to(self, actor: Actor) -> AuditEventQuerySet:
        if actor.memory_ids is None:
            return self
        return self.filter(memory_id__in=sorted(actor.memory_ids))

    def touching_entry(self, uid: str) -> AuditEventQuerySet:
        """Events whose ``entry_ids`` list contains ``uid``."""
        if connection.features.supports_json_field_contains:
            return self.filter(entry_ids__contains=[uid])
        # SQLite stores the list as JSON text: match the quoted id.
        return self.filter(entry_ids__icontains=f'"{uid}"')

    def without_hidden_entries(self, actor: Actor) -> AuditEventQuerySet:
        """Drop events whose ``entry_ids`` name an entry above the actor's clearance."""
        hidden = _hidden_sensitivities(actor)
        if not hidden:
            return self
        elements = (
            "jsonb_array_elements_text(memory_auditevent.entry_ids) AS ids(uid)"
            if connection.vendor == "postgresql"
            else "json_each(memory_auditevent.entry_ids) AS ids"
        )
        value = "ids.uid" if connection.vendor == "postgresql" else "ids.value"
        marks = ", ".join(["%s"] * len(hidden))
        sql = (
            f"EXISTS (SELECT 1 FROM {elements} JOIN memory_entry e ON e.uid = {value} "
            f"AND e.memory_id = memory_auditevent.memory_id WHERE e.sensitivity IN ({marks}))"
        )
        return self.alias(_mentions_hidden=RawSQL(sql, hidden, output_field=BooleanField())).filter(
            _mentions_hidden=False
        )

    def without_hidden_revisions(self, actor: Actor) -> AuditEventQuerySet:
        """Drop events of revisions that touched an entry above the actor's clearance."""
        hidden = Sensitivity.values[len(sensitivities_up_to(actor.clearance)) :]
        touched = RevisionChange.objects.filter(
            revision__memory_id=OuterRef("memory_id"),
            revision__number=OuterRef("revision_number"),
            entry__sensitivity__in=hidden,
        )
        return self.exclude(Exists(touched))


def audit_events() -> AuditEventQuerySet:
    return AuditEventQuerySet(model=AuditEvent)


def _hidden_sensitivities(actor: Actor) -> list[str]:
    return list(Sensitivity.values[len(sensitivities_up_to(actor.clearance)) :])


def is_hidden_entry(actor: Actor, uid: str) -> bool:
    """Whether ``uid`` names an entry, in a Memory the actor reads, above its clearance."""
    if sees_everything(actor) or not uid:
        return False
    qs = Entry.objects.filter(uid=uid, sensitivity__in=_hidden_sensitivities(actor))
    if actor.memory_ids is not None:
        qs = qs.filter(memory_id__in=sorted(actor.memory_ids))
    return qs.exists()


def hidden_entry_uids(actor: Actor, rows: Sequence[Any]) -> set[tuple[int, str]]:
    """``(memory_id, uid)`` of the entries mentioned by ``rows`` that are above the actor's
    clearance. Rows are events or ``.values()`` dicts. One query per 500 ids; none when the actor
    sees everything."""
    if sees_everything(actor):
        return set()
    pairs = {(_get(r, "memory_id"), uid) for r in rows for uid in _get(r, "entry_ids") or ()}
    pairs = {(m, u) for m, u in pairs if m is not None}
    if not pairs:
        return set()
    visible = sensitivities_up_to(actor.clearance)
    uids = sorted({u for _, u in pairs})
    memory_ids = sorted({m for m, _ in pairs})
    found: set[tuple[int, str]] = set()
    for i in range(0, len(uids), 500):
        found.update(
            Entry.objects.filter(memory_id__in=memory_ids, uid__in=uids[i : i + 500])
            .exclude(sensitivity__in=visible)
            .values_list("memory_id", "uid")
        )
    return found & pairs


def is_hidden(row: Any, hidden: set[tuple[int, str]]) -> bool:
    memory_id = _get(row, "memory_id")
    return any((memory_id, uid) in hidden for uid in _get(row, "entry_ids") or ())


def visible_entry_ids(row: Any, hidden: set[tuple[int, str]]) -> list[str]:
    """The row's ``entry_ids`` without those above the actor's clearance."""
    memory_id = _get(row, "memory_id")
    return [uid for uid in _get(row, "entry_ids") or () if (memory_id, uid) not in hidden]


def redact(events: Sequence[AuditEvent], actor: Actor) -> list[AuditEvent]:
    """Withhold label, payload and hidden entry ids of events about entries above the actor's
    clearance (on the in-memory instances only; audit rows are never written)."""
    hidden = hidden_entry_uids(actor, events)
    for event in events:
        event.redacted = is_hidden(event, hidden)  # type: ignore[attr-defined]
        if event.redacted:  # type: ignore[attr-defined]
            event.label = ""
            event.payload = {}
            event.entry_ids = visible_entry_ids(event, hidden)
    return list(events)


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, dict) else getattr(row, name)
