"""``manage.py verify_integrity``: silent and 0 on a sound Memory; every kind of corruption is
found, named, and makes it exit 1. Corruptions are written with raw SQL, lifting the append-only
triggers inside the test's own transaction (rolled back afterwards)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.management import call_command
from django.db import connection

from lib.append_only import drop_sql, install_sql, schema_guard_lifted
from memory import actions
from memory.models import Head, LifecycleProjection, Revision
from proposals.models import Proposal
from proposals.requests import submit_request
from review.actions import approve_proposal, compensate_operation, reject_proposal
from review.integrity import verify_memory
from tests.factories import remember


@contextmanager
def triggers_lifted(*tables: str) -> Iterator[None]:
    with schema_guard_lifted(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SET LOCAL session_replication_role = replica")
        else:
            for t in tables:
                for sql in drop_sql(t, "sqlite"):
                    cur.execute(sql)
        yield
        if connection.vendor == "postgresql":
            cur.execute("SET LOCAL session_replication_role = origin")
        else:
            for t in tables:
                for sql in install_sql(t, "sqlite"):
                    cur.execute(sql)


def pair(memory, agent, text: str):
    a = remember(memory, agent.actor, f"{text} at 02:00 UTC via deploy.sh", dedupe=False)
    b = remember(memory, agent.actor, f"{text} nightly at 02:00 UTC", dedupe=False)
    return a, b


def consolidate(memory, agent, a, b, text: str) -> Proposal:
    return submit_request(
        actor=agent.actor,
        data={
            "memory": memory.slug,
            "kind": "consolidation",
            "rationale": "Same schedule stated twice",
            "target": {"entry_id": a.entry.uid, "version": 1},
            "redundant": [{"entry_id": b.entry.uid, "version": 1}],
            "body": f"{text} nightly at 02:00 UTC via deploy.sh",
        },
    ).proposal


@pytest.fixture
def history(memory, agent, reviewer):
    """A Memory with every kind of record: approved, compensated, rejected and pending proposals."""
    out = {}
    for name in ("approved", "compensated", "rejected", "pending"):
        a, b = pair(memory, agent, f"The {name} job runs")
        out[name] = consolidate(memory, agent, a, b, f"The {name} job runs")
        out[f"{name}_entry"] = a.entry
    approve_proposal(out["approved"].pk, actor=reviewer.actor)
    done = approve_proposal(out["compensated"].pk, actor=reviewer.actor)
    assert done.operation is not None
    compensate_operation(done.operation.pk, actor=reviewer.actor, comment="Too eager")
    reject_proposal(out["rejected"].pk, actor=reviewer.actor, reason="wrong", comment="No")
    return out


def run() -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_integrity", stdout=out, stderr=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def checks(memory) -> set[str]:
    return {f.check for f in verify_memory(memory).findings}


def test_a_sound_memory_passes(memory, history):
    code, out = run()
    assert code == 0, out
    assert "integrity: ok" in out
    assert "acme: 1" in out and "4 proposals checked, 0 findings" in out


def test_a_revision_gap_is_found(memory, history):
    top = Revision.objects.filter(memory=memory).order_by("-number")[0]
    with triggers_lifted("memory_revision"), connection.cursor() as cur:
        cur.execute("UPDATE memory_revision SET number = number + 5 WHERE id = %s", [top.pk])
    code, out = run()
    assert code == 1
    assert f"revision_gap revisions 1..{top.number + 5}" in out
    assert f"first missing #{top.number}" in out


def test_a_head_that_is_not_the_replay_of_its_revisions_is_found(memory, history):
    entry = history["pending_entry"]
    Head.objects.filter(entry=entry).update(state="inactive")
    code, out = run()
    assert code == 1
    assert f"head_replay {entry.uid}" in out


def test_a_projection_row_that_differs_from_a_rebuild_is_found(memory, history):
    entry = history["approved_entry"]
    LifecycleProjection.objects.filter(entry=entry).update(importance=3, validity="superseded")
    assert checks(memory) == {"projection"}
    code, out = run()
    assert code == 1
    assert f"projection {entry.uid}: " in out and "validity live='superseded'" in out


def test_an_approved_proposal_without_its_revision_is_found(memory, history):
    p = history["approved"]
    with triggers_lifted("memory_revision"), connection.cursor() as cur:
        cur.execute("UPDATE memory_revision SET proposal_id = NULL WHERE proposal_id = %s", [p.pk])
    code, out = run()
    assert code == 1
    assert f"approval_records proposal #{p.pk} (approved): 0 applying revisions" in out


def test_an_approved_status_without_an_operation_is_found(memory, history):
    p = history["pending"]
    Proposal.objects.filter(pk=p.pk).update(status="approved")
    assert "approval_records" in checks(memory)
    _, out = run()
    assert f"proposal #{p.pk} (approved): no operation" in out


def test_a_compensated_proposal_without_its_compensation_is_found(memory, history):
    p = history["compensated"]
    with triggers_lifted("memory_revision"), connection.cursor() as cur:
        cur.execute(
            "UPDATE memory_revision SET kind = 'revise' WHERE proposal_id = %s AND kind = 'compensate'",
            [p.pk],
        )
    _, out = run()
    assert f"proposal #{p.pk} (compensated): 2 applying revisions" in out


def test_a_pending_proposal_on_a_moved_entry_is_found(memory, agent, history):
    p = history["pending"]
    entry = history["pending_entry"]
    actions.revise_entry(
        memory,
        actor=agent.actor,
        entry_uid=entry.uid,
        body="The pending job runs at 03:00 UTC via deploy.sh",
    )
    assert Proposal.objects.get(pk=p.pk).status == "stale"  # the write path keeps it sound
    assert checks(memory) == set()
    Proposal.objects.filter(pk=p.pk).update(status="pending")
    code, out = run()
    assert code == 1
    assert (
        f"pending_on_moved_entry proposal #{p.pk}: {entry.uid} recorded at v1 active, head is v2 active"
        in out
    )


def test_one_memory_can_be_checked_alone(memory, other_memory, history):
    Head.objects.filter(entry=history["pending_entry"]).update(state="inactive")
    out = io.StringIO()
    call_command("verify_integrity", "--memory", "other", stdout=out)
    assert "integrity: ok (1 memories" in out.getvalue()


def test_a_body_rewritten_to_the_same_length_is_found(memory, history):
    """With the append-only guards lifted (PostgreSQL ``session_replication_role = replica``,
    SQLite ``DROP TRIGGER``), a body rewritten in place to text of the same length."""
    from memory.models import EntryVersion

    version = EntryVersion.objects.filter(entry=history["approved_entry"]).order_by("number")[0]
    forged = version.body.replace("02:00", "03:00")
    assert len(forged) == len(version.body) and forged != version.body
    with triggers_lifted("memory_entryversion"), connection.cursor() as cur:
        cur.execute("UPDATE memory_entryversion SET body = %s WHERE id = %s", [forged, version.pk])
    assert "content_hash" in checks(memory)
    code, out = run()
    assert code == 1
    assert f"content_hash {history['approved_entry'].uid} v{version.number}" in out
    assert "rewritten in place" in out


def test_a_deleted_revision_row_is_reported_not_a_crash(memory, history):
    top = Revision.objects.filter(memory=memory).order_by("-number")[0]
    # Foreign keys are checked at commit (deferred); the row is put back before the test ends.
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM memory_revision WHERE id = %s", [top.pk])
        columns = [c[0] for c in cur.description]
        row = cur.fetchone()
    with triggers_lifted("memory_revision"), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SET CONSTRAINTS ALL DEFERRED")
        cur.execute("DELETE FROM memory_revision WHERE id = %s", [top.pk])
    code, out = run()
    with connection.cursor() as cur:
        marks = ", ".join(["%s"] * len(columns))
        cur.execute(f"INSERT INTO memory_revision ({', '.join(columns)}) VALUES ({marks})", row)
    assert code == 1, out
    assert "revision_gap" in out
    assert "Traceback" not in out


# --- The audit hash chain ------------------------------------------------------------------------


def test_the_audit_chain_of_a_sound_history_has_no_finding(memory, history):
    from memory import audit_chain
    from memory.models import AuditEvent, AuditSeal

    assert AuditSeal.objects.count() == AuditEvent.objects.count() > 0
    assert list(audit_chain.verify()) == []
    code, out = run()
    assert code == 0, out
    assert f"audit: {AuditEvent.objects.count()} sealed events, chain head" in out


def test_a_deleted_audit_event_is_found(memory, history):
    from memory.models import AuditEvent

    event = AuditEvent.objects.order_by("pk")[3]
    with triggers_lifted("memory_auditevent"), connection.cursor() as cur:
        cur.execute("DELETE FROM memory_auditevent WHERE id = %s", [event.pk])
    code, out = run()
    assert code == 1
    assert f"audit audit_event event #{event.pk}: deleted" in out


def test_an_audit_event_rewritten_in_place_is_found(memory, history):
    from memory.models import AuditEvent

    event = AuditEvent.objects.exclude(label="").order_by("pk")[2]
    forged = event.label[::-1]  # same length
    with triggers_lifted("memory_auditevent"), connection.cursor() as cur:
        cur.execute("UPDATE memory_auditevent SET label = %s WHERE id = %s", [forged, event.pk])
    code, out = run()
    assert code == 1
    assert f"audit audit_event event #{event.pk}: rewritten in place" in out


def test_an_event_deleted_with_its_seal_breaks_the_chain(memory, history):
    from memory import audit_chain
    from memory.models import AuditEvent, AuditSeal

    audit_chain.flush_pending_chain()  # PostgreSQL chains at commit: as if committed
    event = AuditEvent.objects.order_by("pk")[2]
    with triggers_lifted("memory_auditevent", "memory_auditseal"), connection.cursor() as cur:
        cur.execute("DELETE FROM memory_auditseal WHERE event_id = %s", [event.pk])
        cur.execute("DELETE FROM memory_auditevent WHERE id = %s", [event.pk])
    code, out = run()
    assert code == 1
    assert "audit audit_chain" in out and "seal(s) missing" in out
    assert AuditSeal.objects.count() == AuditEvent.objects.count()


def test_an_event_written_around_the_application_is_unsealed_until_sealed(memory, history):
    from memory.models import AuditEvent

    last: dict = dict(AuditEvent.objects.order_by("-pk").values()[0])
    columns = [c for c in last if c != "id"]
    with connection.cursor() as cur:
        marks = ", ".join(["%s"] * len(columns))
        values = [
            json.dumps(last[c]) if c in ("entry_ids", "payload") else last[c] for c in columns
        ]
        cur.execute(
            f"INSERT INTO memory_auditevent ({', '.join(columns)}) VALUES ({marks})", values
        )
    code, out = run()
    assert code == 1 and "audit audit_unsealed 1 event(s)" in out
    sealed = io.StringIO()
    call_command("verify_integrity", "--seal", stdout=sealed, stderr=sealed)
    assert "sealed 1 unsealed event(s)" in sealed.getvalue()
    assert run()[0] == 0


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite authorizer")
@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE memory_auditevent",
        "DROP TABLE memory_revision",
        "DROP TRIGGER memory_auditevent_append_only",
        "DROP TRIGGER memory_entryversion_no_erase",
        "ALTER TABLE memory_auditevent RENAME TO gone",
    ],
)
def test_sqlite_refuses_dropping_or_altering_history(memory, history, sql):
    from django.db import DatabaseError

    with pytest.raises(DatabaseError, match="not authorized"), connection.cursor() as cur:
        cur.execute(sql)
