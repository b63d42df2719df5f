"""The MCP ``remember`` tool with ``entries``: the batch add over real Streamable HTTP."""

from __future__ import annotations

from memory.models import Entry, Revision

from .conftest import ok, refused

AWS = "The CI key is AKIAIOSFODNN7EXAMPLE for the build account"


def turns(n: int) -> list[dict]:
    return [
        {"body": f"Standup turn {i}: the migration is at step {i}", "kind": "fact"}
        for i in range(n)
    ]


def test_remember_takes_a_list_of_entries(mcp, api, agent):
    client = mcp.as_(agent)
    schema = client.tools()["remember"].input_schema
    assert schema["anyOf"] == [{"required": ["body", "kind"]}, {"required": ["entries"]}]
    assert schema["properties"]["entries"]["items"]["required"] == ["body", "kind"]
    assert schema["required"] == ["memory"]
    body = ok(client.call("remember", memory="acme", entries=turns(3), idempotency_key="b1"))
    assert [x["status"] for x in body["results"]] == [201, 201, 201]
    assert body["revision"] == 1 and Revision.objects.count() == 1
    # As REST answers it, and the same key and entries answer the same again.
    r = api.as_(agent).get(f"/api/v1/memories/acme/entries/{body['results'][2]['entry_id']}")
    assert r.json()["body"] == "Standup turn 2: the migration is at step 2"
    assert (
        ok(client.call("remember", memory="acme", entries=turns(3), idempotency_key="b1")) == body
    )
    error = refused(client.call("remember", memory="acme", entries=turns(2), idempotency_key="b1"))
    assert error["code"] == "idempotency_key_reused"


def test_a_refused_item_refuses_the_batch_with_its_index(mcp, agent):
    client = mcp.as_(agent)
    entries = turns(3)
    entries[2]["body"] = AWS
    error = refused(client.call("remember", memory="acme", entries=entries))
    assert error["code"] == "secret_detected"
    assert list(error["details"]["entries"]) == ["2"]
    assert Entry.objects.count() == 0


def test_entries_or_one_entry_not_both(mcp, agent):
    client = mcp.as_(agent)
    error = refused(client.call("remember", memory="acme", entries=turns(1), body="x"))
    assert error["code"] == "invalid" and "body" in error["details"]
    error = refused(client.call("remember", memory="acme"))
    assert error["code"] == "invalid" and {"body", "kind"} <= set(error["details"])
    error = refused(
        client.call("remember", memory="acme", body="x", kind="fact", idempotency_key="k")
    )
    assert error["code"] == "invalid" and "idempotency_key" in error["details"]
