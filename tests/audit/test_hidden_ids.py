"""A key below an entry's clearance gets the same answer for that entry's id as for an id that
does not exist — in the event list, its ``entry`` filter and ``q`` search and both exports — and redacted events never list the hidden ids."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memory import actions
from tests.audit.conftest import bearer, in_request
from tests.conftest import make_key

pytestmark = pytest.mark.django_db

MADE_UP = "e_0123456789abcdef0123456789abcd"


@pytest.fixture
def hidden(history, staff, agent):
    """A restricted entry, forgotten, and a conflict recorded between it and a visible one."""
    secret = in_request(
        actions.add_entry,
        history.memory,
        actor=staff,
        body="Incident 4411: the vault root token was rotated",
        kind="fact",
        sensitivity="restricted",
    ).entry
    visible = in_request(
        actions.add_entry,
        history.memory,
        actor=agent.actor,
        body="Rotation runs monthly",
        kind="fact",
    ).entry
    in_request(
        actions.record_conflict,
        history.memory,
        actor=staff,
        from_entry=visible.uid,
        to_entry=secret.uid,
    )
    in_request(
        actions.forget_entry, history.memory, actor=staff, entry_uid=secret.uid, reason="rotated"
    )
    return secret.uid


def _answers(key, entry_id: str) -> dict[str, list]:
    client = Client()
    headers = bearer(key)

    def items(query: str) -> list[dict]:
        return client.get(f"/api/v1/audit/events?{query}", headers=headers).json()["items"]

    def export(fmt: str, query: str) -> list[str]:
        r = client.get(f"/api/v1/audit/export?format={fmt}&{query}", headers=headers)
        assert r.status_code == 200
        body = b"".join(r.streaming_content).decode()  # type: ignore[attr-defined]
        return body.splitlines()[1:] if fmt == "csv" else body.splitlines()

    return {
        "entry": items(f"entry={entry_id}"),
        "q": items(f"q={entry_id}"),
        "csv": export("csv", f"entry={entry_id}"),
        "jsonl": export("jsonl", f"entry={entry_id}"),
        "csv_q": export("csv", f"q={entry_id}"),
        "jsonl_q": export("jsonl", f"q={entry_id}"),
    }


def test_a_hidden_id_answers_as_a_made_up_one(hidden, auditor):
    assert _answers(auditor, hidden) == _answers(auditor, MADE_UP)
    assert _answers(auditor, hidden)["entry"] == []


def test_redacted_events_never_list_the_hidden_id(hidden, auditor):
    client = Client()
    page = client.get("/api/v1/audit/events?limit=200", headers=bearer(auditor)).json()["items"]
    assert any(e["redacted"] for e in page)
    assert hidden not in json.dumps(page)
    for fmt in ("csv", "jsonl"):
        r = client.get(f"/api/v1/audit/export?format={fmt}", headers=bearer(auditor))
        assert hidden not in b"".join(r.streaming_content).decode()  # type: ignore[attr-defined]
    # The conflict event still names the visible entry.
    conflict = [e for e in page if e["action"] == "relation.observed"]
    assert conflict and conflict[0]["redacted"] and len(conflict[0]["entry_ids"]) == 1


def test_the_redaction_the_pages_share_drops_the_hidden_id(hidden, auditor):
    """The ``/audit/`` page serves signed-in users (cleared for everything); it redacts through
    the same ``events.redact`` as the API, which drops the hidden ids."""
    from audit import events
    from memory.models import AuditEvent

    rows = events.redact(list(AuditEvent.objects.order_by("pk")), auditor.actor)
    assert any(getattr(e, "redacted", False) for e in rows)
    assert all(hidden not in (e.entry_ids or []) for e in rows)


def test_a_cleared_key_still_finds_the_entry(hidden, restricted_auditor):
    answers = _answers(restricted_auditor, hidden)
    assert {e["action"] for e in answers["entry"]} >= {"entry.added", "entry.forgotten"}
    assert all(hidden in e["entry_ids"] for e in answers["entry"])


def test_a_key_scoped_elsewhere_is_not_told_either(hidden, other_memory):
    scoped = make_key("ada-other", "auditor", memories=("other",))
    assert _answers(scoped, hidden) == _answers(scoped, MADE_UP)
