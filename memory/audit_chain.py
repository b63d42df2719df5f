"""The audit hash chain: every audit event is *sealed* — one append-only ``AuditSeal`` row with
a sequence number, the SHA-256 digest of the event's stored columns and a chain hash over the
seal before it — so ``manage.py verify_integrity`` finds an event rewritten in place (its digest
no longer matches), deleted (its seal names a missing event) or whose seal was deleted (a gap in
the sequence, and the next chain hash no longer follows), even when the append-only triggers were
bypassed.

``chain = sha256(previous chain + ":" + digest)``; the first seal follows 64 zeros. The digest is
computed in Python from the event row as stored (read back), when the event is written. The
*chain* runs in the order events commit:

- on SQLite, inside the event's own transaction, right after its INSERT: transactions begin
  IMMEDIATE, so the writer holds SQLite's one write lock and no other seal can come between
  reading the last seal and writing the next;
- on PostgreSQL, by a deferred constraint trigger (``memory_auditseal_chain``, migration 0024)
  at COMMIT: it takes one advisory lock, reads the last chained seal and sets ``seq`` and
  ``chain`` on the new one. Chaining at commit holds the global lock only for the commit's last
  step, after every row lock the transaction needed: chaining at INSERT would hold it while the
  transaction still waits for row locks, a deadlock with writers holding those rows.

Events written around the application (no seal) are listed by ``verify_integrity``
(``audit_unsealed``); ``verify_integrity --seal`` seals them (:func:`seal_pending`).

What the chain cannot show: the *newest* events deleted together with their seals (nothing after
them to disagree). ``verify_integrity`` prints the chain head (sequence and hash); an operator
who keeps it elsewhere can compare (docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Q

GENESIS = "0" * 64
#: The advisory lock key PostgreSQL chains under ("AUDITSEA" in ASCII).
ADVISORY_KEY = 0x4155444954534541
CHAIN_TRIGGER = "memory_auditseal_chain"

#: PostgreSQL: the seal table's guards and the chaining trigger (migration 0024). A seal may be
#: updated once, by the chaining trigger: ``seq`` and ``chain`` from NULL to their values.
PG_SQL = f"""
CREATE OR REPLACE FUNCTION steward_seal_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
       AND NEW.id = OLD.id AND NEW.event_id = OLD.event_id AND NEW.digest = OLD.digest THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION steward_seal_chain() RETURNS trigger AS $$
DECLARE
    last_seq bigint;
    last_chain text;
BEGIN
    PERFORM pg_advisory_xact_lock({ADVISORY_KEY});
    SELECT seq, chain INTO last_seq, last_chain FROM memory_auditseal
        WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1;
    IF last_seq IS NULL THEN
        last_seq := 0;
        last_chain := repeat('0', 64);
    END IF;
    UPDATE memory_auditseal
        SET seq = last_seq + 1,
            chain = encode(sha256(convert_to(last_chain || ':' || NEW.digest, 'UTF8')), 'hex')
        WHERE id = NEW.id AND seq IS NULL;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE TRIGGER memory_auditseal_append_only BEFORE UPDATE OR DELETE
    ON memory_auditseal FOR EACH ROW EXECUTE FUNCTION steward_seal_append_only();
CREATE OR REPLACE TRIGGER memory_auditseal_no_erase BEFORE TRUNCATE
    ON memory_auditseal FOR EACH STATEMENT EXECUTE FUNCTION steward_append_only();
DROP TRIGGER IF EXISTS {CHAIN_TRIGGER} ON memory_auditseal;
CREATE CONSTRAINT TRIGGER {CHAIN_TRIGGER} AFTER INSERT ON memory_auditseal
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION steward_seal_chain();
"""


def install_guards(apps: Any, schema_editor: Any) -> None:
    """Migration step: the seal table's triggers (PostgreSQL: above; SQLite: the usual two)."""
    from lib.append_only import install_sql

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PG_SQL, params=None)
    else:
        for sql in install_sql("memory_auditseal", schema_editor.connection.vendor):
            schema_editor.execute(sql)


def remove_guards(apps: Any, schema_editor: Any) -> None:
    from lib.append_only import drop_sql

    vendor = schema_editor.connection.vendor
    for sql in drop_sql("memory_auditseal", vendor, ["_append_only", "_no_erase", "_chain"]):
        schema_editor.execute(sql)


#: The event columns the digest covers (every stored column).
COLUMNS = (
    "id",
    "action",
    "recorded_at",
    "actor_type",
    "actor_id",
    "actor_label",
    "on_behalf_of",
    "correlation_id",
    "memory_id",
    "memory_label",
    "label",
    "revision_number",
    "proposal_id",
    "operation_id",
    "run_id",
    "entry_ids",
    "payload",
)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value


def digest(row: Mapping[str, Any]) -> str:
    """SHA-256 of one event's stored columns (a ``.values(*COLUMNS)`` dict), canonical JSON."""
    canonical = json.dumps(
        {name: _plain(row[name]) for name in COLUMNS},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def chain(previous: str, event_digest: str) -> str:
    return hashlib.sha256(f"{previous}:{event_digest}".encode()).hexdigest()


def _seal_rows(event_pks: Iterable[int], models: Any = None) -> int:
    """Seal the given events (those not sealed yet), in id order. SQLite: chained here (the
    caller's transaction holds the write lock). PostgreSQL: ``seq`` and ``chain`` are set by the
    deferred trigger at commit."""
    from . import models as live_models

    m = models or live_models
    pks = sorted(set(event_pks))
    if not pks:
        return 0
    done = set(m.AuditSeal.objects.filter(event_id__in=pks).values_list("event_id", flat=True))
    todo = [pk for pk in pks if pk not in done]
    if not todo:
        return 0
    rows = {r["id"]: r for r in m.AuditEvent.objects.filter(pk__in=todo).values(*COLUMNS)}
    chained = connection.vendor != "postgresql"
    if chained:
        last = (
            m.AuditSeal.objects.filter(seq__isnull=False)
            .order_by("-seq")
            .values_list("seq", "chain")
            .first()
        )
        seq, previous = last if last is not None else (0, GENESIS)
    seals = []
    for pk in todo:
        if pk not in rows:
            continue
        event_digest = digest(rows[pk])
        seal = m.AuditSeal(event_id=pk, digest=event_digest)
        if chained:
            seq += 1
            previous = chain(previous, event_digest)
            seal.seq, seal.chain = seq, previous
        seals.append(seal)
    m.AuditSeal.objects.bulk_create(seals)
    return len(seals)


def as_stored(event: Any) -> dict[str, Any]:
    """A just-created event's columns as the database returns them: JSON columns through a
    JSON round trip (what SQLite's text and PostgreSQL's jsonb give back)."""
    row = {name: getattr(event, name) for name in COLUMNS}
    for name in ("entry_ids", "payload"):
        row[name] = json.loads(json.dumps(row[name]))
    return row


def seal_new_event(event: Any) -> None:
    """Seal a just-inserted event (``memory.audit.record``, inside its transaction): one INSERT
    on PostgreSQL (chained at commit), a read of the last seal and an INSERT on SQLite."""
    from .models import AuditSeal

    event_digest = digest(as_stored(event))
    seal = AuditSeal(event_id=event.pk, digest=event_digest)
    if connection.vendor != "postgresql":
        last = (
            AuditSeal.objects.filter(seq__isnull=False)
            .order_by("-seq")
            .values_list("seq", "chain")
            .first()
        )
        seq, previous = last if last is not None else (0, GENESIS)
        seal.seq, seal.chain = int(seq or 0) + 1, chain(previous, event_digest)
    seal.save(force_insert=True)


def seal_new_events(event_pks: Iterable[int]) -> int:
    """Seal events just inserted together (``memory.audit.record_many``, inside their
    transaction), in id order: one read of them and one insert of their seals."""
    return _seal_rows(event_pks)


def flush_pending_chain() -> None:
    """PostgreSQL: chain the seals written in the current transaction now rather than at its
    commit (``SET CONSTRAINTS … IMMEDIATE``). Outside a test's never-committed transaction
    there is nothing pending; ``verify_integrity`` calls it so a check inside one sees them."""
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute(f"SET CONSTRAINTS {CHAIN_TRIGGER} IMMEDIATE")


def seal_pending(batch: int = 1000) -> int:
    """Seal every unsealed event, oldest first (after a crash between commit and seal)."""
    from .models import AuditEvent

    total = 0
    while True:
        pks = list(
            AuditEvent.objects.filter(seal__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not pks:
            return total
        with transaction.atomic():
            total += _seal_rows(pks)


def seal_all_existing(apps: Any, schema_editor: Any) -> None:
    """Migration step: seal the events written before the chain existed, in id order."""

    class _Models:
        AuditEvent = apps.get_model("memory", "AuditEvent")
        AuditSeal = apps.get_model("memory", "AuditSeal")

    last = 0
    while True:
        pks = list(
            _Models.AuditEvent.objects.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", flat=True)[:2000]
        )
        if not pks:
            return
        _seal_rows(pks, _Models)
        last = pks[-1]


# --- Verification -----------------------------------------------------------------------------


def verify(batch: int = 2000) -> Iterator[tuple[str, str, str]]:
    """Findings ``(check, subject, detail)`` over the whole chain, in keyset batches; then the
    unsealed events. Reads only."""
    from .models import AuditEvent, AuditSeal

    flush_pending_chain()
    expected_seq, previous, last = 1, GENESIS, 0
    while True:
        seals = list(
            AuditSeal.objects.filter(seq__gt=last)
            .order_by("seq")
            .values_list("seq", "event_id", "digest", "chain")[:batch]
        )
        if not seals:
            break
        rows = {
            r["id"]: r
            for r in AuditEvent.objects.filter(pk__in=[s[1] for s in seals]).values(*COLUMNS)
        }
        for maybe_seq, event_id, sealed_digest, sealed_chain in seals:
            seq = int(maybe_seq or 0)  # the filter above left no NULL
            if seq != expected_seq:
                yield (
                    "audit_chain",
                    f"seals {expected_seq}..{seq - 1}",
                    f"{seq - expected_seq} seal(s) missing before seal {seq} (event #{event_id})",
                )
            if chain(previous, sealed_digest) != sealed_chain:
                yield (
                    "audit_chain",
                    f"seal {seq}",
                    f"does not follow the seal before it (event #{event_id}): a seal was "
                    "removed or rewritten",
                )
            row = rows.get(event_id)
            if row is None:
                yield ("audit_event", f"event #{event_id}", f"deleted (sealed as {seq})")
            elif digest(row) != sealed_digest:
                yield (
                    "audit_event",
                    f"event #{event_id}",
                    f"rewritten in place: its columns no longer match seal {seq}",
                )
            expected_seq, previous = seq + 1, sealed_chain
        last = int(seals[-1][0] or 0)
    unsealed = AuditEvent.objects.filter(Q(seal__isnull=True) | Q(seal__seq__isnull=True))
    count = unsealed.count()
    if count:
        first = unsealed.order_by("pk").values_list("pk", flat=True).first()
        yield (
            "audit_unsealed",
            f"{count} event(s)",
            f"not sealed, from event #{first} (a crash between commit and seal, or written "
            "around the application): manage.py verify_integrity --seal seals them",
        )


def head() -> tuple[int, str]:
    """The chain head: the last seal's sequence number and hash ``(0, GENESIS)`` when empty."""
    from .models import AuditSeal

    last = (
        AuditSeal.objects.filter(seq__isnull=False)
        .order_by("-seq")
        .values_list("seq", "chain")
        .first()
    )
    return (int(last[0] or 0), last[1]) if last is not None else (0, GENESIS)
