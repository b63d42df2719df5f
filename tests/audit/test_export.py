"""``GET /api/v1/audit/export``: streamed CSV and JSON Lines with the log's filters, oldest
first, in keyset batches (a fixed number of queries per batch), a consistent snapshot."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.http import StreamingHttpResponse
from django.test import Client

from audit import api as audit_api
from memory import actions
from memory.models import AuditEvent
from tests.audit.conftest import bearer, in_request
from tests.conftest import make_key

pytestmark = pytest.mark.django_db

URL = "/api/v1/audit/export"


def export(key, query: str) -> StreamingHttpResponse:
    response = Client().get(f"{URL}?{query}", headers=bearer(key))
    assert response.status_code == 200, response.content
    assert isinstance(response, StreamingHttpResponse)
    return response


def body_of(response: StreamingHttpResponse) -> str:
    return b"".join(response.streaming_content).decode()  # type: ignore[arg-type]


def jsonl(key, query: str = "") -> list[dict]:
    text = body_of(export(key, f"format=jsonl&{query}"))
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def csv_rows(key, query: str = "") -> list[dict]:
    return list(csv.DictReader(io.StringIO(body_of(export(key, f"format=csv&{query}")))))


def add_many(memory, agent, n: int, prefix: str = "Exported fact") -> None:
    for i in range(n):
        in_request(actions.add_entry, memory, actor=agent.actor, body=f"{prefix} {i}", kind="fact")


def test_jsonl_streams_every_event_oldest_first_like_the_api_items(history, auditor):
    response = export(auditor, "format=jsonl")
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"].startswith('attachment; filename="audit-')
    assert response["Content-Disposition"].endswith('.jsonl"')
    lines = [json.loads(x) for x in body_of(response).splitlines()]
    assert [x["id"] for x in lines] == list(
        AuditEvent.objects.order_by("id").values_list("id", flat=True)
    )
    api_items = Client().get("/api/v1/audit/events?limit=200", headers=bearer(auditor)).json()
    assert lines == list(reversed(api_items["items"]))


def test_csv_has_a_header_and_one_row_per_event(history, auditor, agent):
    response = export(auditor, "format=csv&action=entry.forgotten")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = body_of(response)
    assert text.splitlines()[0].split(",") == audit_api.CSV_HEADER
    [row] = list(csv.DictReader(io.StringIO(text)))
    event = AuditEvent.objects.get(action="entry.forgotten")
    assert row["id"] == str(event.pk)
    assert row["action"] == "entry.forgotten"
    assert row["actor_type"] == "agent" and row["actor_id"] == agent.actor.id
    assert row["actor_label"] == "agent-1" and row["on_behalf_of"] == ""
    assert row["memory"] == "acme" and row["revision"] == "3"
    assert row["label"] == "The deploy target is the eu-3 cluster"
    assert row["entry_ids"] == history.entry_id
    assert json.loads(row["payload"]) == {"reason": "cluster decommissioned", "version": 2}
    assert row["correlation_id"] == event.correlation_id
    assert row["recorded_at"].endswith("Z") and row["redacted"] == "false"


def test_export_applies_the_same_filters_as_the_log(history, auditor):
    rows = csv_rows(auditor, "memory=acme&kind=entry")
    assert {r["action"] for r in rows} == {
        "entry.added",
        "entry.revised",
        "entry.forgotten",
        "entry.reactivated",
    }
    listed = Client().get(
        "/api/v1/audit/events?memory=acme&kind=entry&limit=200", headers=bearer(auditor)
    )
    assert [int(r["id"]) for r in rows] == sorted(i["id"] for i in listed.json()["items"])
    assert jsonl(auditor, f"entry={history.other_id}")[-1]["action"] == "relation.observed"


def test_spreadsheet_formulas_in_labels_are_neutralized_in_csv_only(history, auditor, agent):
    in_request(
        actions.add_entry, history.memory, actor=agent.actor, body="=HYPERLINK(1)", kind="fact"
    )
    [row] = csv_rows(auditor, "q=HYPERLINK")
    assert row["label"] == "'=HYPERLINK(1)"
    [line] = jsonl(auditor, "q=HYPERLINK")
    assert line["label"] == "=HYPERLINK(1)"


def test_small_batches_give_the_same_export(history, auditor, agent, monkeypatch):
    add_many(history.memory, agent, 7)
    whole = jsonl(auditor)
    monkeypatch.setattr(audit_api, "EXPORT_BATCH", 3)
    monkeypatch.setattr(audit_api, "EXPORT_CHUNK", 2)
    monkeypatch.setattr(audit_api, "EXPORT_BUFFER", 10)
    assert jsonl(auditor) == whole
    assert [int(r["id"]) for r in csv_rows(auditor)] == [x["id"] for x in whole]


def test_export_is_a_snapshot_of_the_moment_it_started(history, auditor, agent, monkeypatch):
    monkeypatch.setattr(audit_api, "EXPORT_BATCH", 2)
    monkeypatch.setattr(audit_api, "EXPORT_BUFFER", 1)
    before = list(AuditEvent.objects.order_by("id").values_list("id", flat=True))
    chunks = iter(export(auditor, "format=jsonl").streaming_content)  # type: ignore[arg-type]
    first = json.loads(next(chunks))
    add_many(history.memory, agent, 3, prefix="Written during the export")
    rest = [json.loads(c) for c in chunks]
    assert [first["id"], *(x["id"] for x in rest)] == before


def test_export_is_bounded_in_batches(history, auditor, agent, monkeypatch):
    """The generator never asks for more than one batch at a time."""
    add_many(history.memory, agent, 5)
    monkeypatch.setattr(audit_api, "EXPORT_BATCH", 4)
    seen: list[int] = []
    real = audit_api.events.hidden_entry_uids

    def spy(actor, rows):
        seen.append(len(rows))
        return real(actor, rows)

    monkeypatch.setattr(audit_api.events, "hidden_entry_uids", spy)
    total = len(jsonl(auditor))
    assert max(seen) == 4
    assert sum(seen) == total == AuditEvent.objects.count()


def test_bad_format_is_400_in_json_and_agents_are_refused(history, auditor, agent):
    r = Client().get(f"{URL}?format=xml", headers=bearer(auditor))
    assert r.status_code == 400
    assert r.json()["error"]["details"] == {"format": ["One of csv, jsonl."]}
    r = Client().get(f"{URL}?format=csv&colour=red", headers=bearer(auditor))
    assert r.status_code == 400 and "colour" in r.json()["error"]["details"]
    r = Client().get(f"{URL}?format=csv", headers=bearer(agent))
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert Client().get(f"{URL}?format=csv").status_code == 401


def test_scoped_key_exports_only_its_memories(history, other_memory, agent):
    in_request(actions.add_entry, other_memory, actor=agent.actor, body="Elsewhere", kind="fact")
    scoped = make_key("ada-other", "auditor", memories=("other",))
    assert {x["memory"] for x in jsonl(scoped)} == {"other"}
    assert Client().get(f"{URL}?format=csv&memory=acme", headers=bearer(scoped)).status_code == 404


def test_export_withholds_entries_above_the_keys_clearance(history, auditor, staff):
    result = in_request(
        actions.add_entry,
        history.memory,
        actor=staff,
        body="Pager rota for the incident bridge",
        kind="fact",
        sensitivity="confidential",
    )
    [line] = [e for e in jsonl(auditor) if e["redacted"]]
    assert line["label"] == "" and line["payload"] == {} and line["entry_ids"] == []
    [row] = [r for r in csv_rows(auditor) if r["redacted"] == "true"]
    assert row["label"] == "" and row["entry_ids"] == ""
    # Filtering on the hidden id answers as for an id that does not exist.
    assert body_of(export(auditor, f"format=jsonl&entry={result.entry.uid}")) == ""
    assert csv_rows(auditor, f"entry={result.entry.uid}") == []


def test_browser_session_can_export(history, auditor_browser):
    r = auditor_browser.get(f"{URL}?format=csv&kind=entry")
    assert r.status_code == 200 and r.streaming


@pytest.mark.parametrize("extra", [0, 60])
def test_export_costs_a_fixed_number_of_queries_per_batch(
    history, agent, auditor, restricted_auditor, django_assert_max_num_queries, extra
):
    add_many(history.memory, agent, extra)
    total = AuditEvent.objects.count()
    # Key lookup + its Memories, upper bound, one batch, one clearance check for the batch.
    with django_assert_max_num_queries(5):
        assert len(jsonl(auditor)) == total
    # A key cleared for everything needs no clearance check.
    with django_assert_max_num_queries(4):
        assert len(csv_rows(restricted_auditor)) == total


def test_each_further_batch_costs_at_most_two_queries(
    history, agent, auditor, monkeypatch, django_assert_max_num_queries
):
    add_many(history.memory, agent, 10)
    total = AuditEvent.objects.count()
    monkeypatch.setattr(audit_api, "EXPORT_BATCH", 10)
    batches = -(-total // 10)
    # 2 for the key, 1 upper bound, per batch the rows and the clearance check, and one empty
    # batch when the last one was full.
    with django_assert_max_num_queries(3 + 2 * batches + 1):
        assert len(jsonl(auditor)) == total
