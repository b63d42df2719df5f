"""Revalidation over MCP (official client, Streamable HTTP): ``remember`` takes the governance
fields, ``recall`` and ``context_pack`` flag a due fact and take ``strict_fresh``, and ``confirm``
renews it without a new version."""

from __future__ import annotations

from memory.models import Entry, Revision

from .conftest import ok, refused

PAST = "2026-01-01"
FUTURE = "2099-01-01T00:00:00Z"


def test_a_due_fact_is_flagged_over_mcp_and_confirm_renews_it(mcp, agent, auditor):
    client = mcp.as_(agent)
    tools = client.tools()
    schema = tools["confirm"].input_schema
    assert set(schema["properties"]) >= {"memory", "entry_id", "evidence", "review_at"}
    assert tools["confirm"].annotations.read_only_hint is False
    assert {"owner", "confidence", "review_at"} <= set(tools["remember"].input_schema["properties"])
    assert "strict_fresh" in tools["recall"].input_schema["properties"]
    assert "strict_fresh" in tools["context_pack"].input_schema["properties"]

    added = ok(
        client.call(
            "remember",
            memory="acme",
            body="The deploy target is eu-2",
            kind="fact",
            owner="platform",
            confidence=0.9,
            review_at=PAST,
        )
    )
    uid = added["entry_id"]
    (hit,) = ok(client.call("recall", memory="acme", query="deploy target"))["hits"]
    assert hit["review_due"] is True and hit["owner"] == "platform" and hit["confidence"] == 0.9
    (item,) = ok(client.call("context_pack", memory="acme", query="deploy target"))["items"]
    assert item["review_due"] is True
    assert (
        ok(client.call("recall", memory="acme", query="deploy target", strict_fresh=True))["hits"]
        == []
    )
    assert (
        ok(client.call("context_pack", memory="acme", query="deploy target", strict_fresh=True))[
            "items"
        ]
        == []
    )

    error = refused(client.call("confirm", memory="acme", entry_id=uid, review_at=PAST))
    assert error["code"] == "invalid" and "review_at" in error["details"]
    denied = refused(mcp.as_(auditor).call("confirm", memory="acme", entry_id=uid))
    assert denied["code"] == "forbidden"

    body = ok(
        client.call(
            "confirm",
            memory="acme",
            entry_id=uid,
            evidence=[{"source": "repo", "ref": "deploy.tf"}],
            review_at=FUTURE,
        )
    )
    assert body["version"] == 1 and body["review_due"] is False
    assert Revision.objects.get(number=body["revision"]).kind == "confirm"
    assert Entry.objects.get(uid=uid).versions.count() == 1
    (hit,) = ok(client.call("recall", memory="acme", query="deploy target", strict_fresh=True))[
        "hits"
    ]
    assert hit["entry_id"] == uid and hit["review_due"] is False
