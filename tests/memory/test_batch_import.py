"""Batch add (``POST …/entries/batch``): all or nothing, each item judged as one add."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions
from memory.exceptions import BatchRefused, IdempotencyKeyReused
from memory.models import AuditEvent, BatchImportKey, Entry, EntryVersion, Head, Revision
from proposals.models import Proposal, ProposalKind
from tests.conftest import make_key
from tests.factories import add_via_api, remember

B = "/api/v1/memories/acme/entries/batch"
AWS = "The CI key is AKIAIOSFODNN7EXAMPLE for the build account"


@pytest.fixture
def a(api, agent):
    return api.as_(agent)


def turns(n: int, prefix: str = "Turn") -> list[dict]:
    return [
        {"body": f"{prefix} {i}: the pager rotation moves to team {i} on Monday", "kind": "fact"}
        for i in range(n)
    ]


def test_a_batch_writes_every_entry_in_one_revision(a, memory):
    r = a.post(B, {"entries": turns(5)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["revision"] == 1
    assert [x["index"] for x in body["results"]] == [0, 1, 2, 3, 4]
    assert {x["status"] for x in body["results"]} == {201}
    assert all(x["created"] and x["revision"] == 1 and x["version"] == 1 for x in body["results"])
    assert Revision.objects.filter(memory=memory).count() == 1
    revision = Revision.objects.get(memory=memory)
    assert revision.kind == "add" and revision.changes.count() == 5
    assert Entry.objects.filter(memory=memory).count() == 5
    # Each entry reads back exactly, and is found by recall.
    first = body["results"][0]["entry_id"]
    read = a.get(f"/api/v1/memories/acme/entries/{first}").json()
    assert read["body"] == "Turn 0: the pager rotation moves to team 0 on Monday"
    hits = a.post("/api/v1/memories/acme/search", {"query": "pager rotation team 3"}).json()
    assert body["results"][3]["entry_id"] in [h["entry_id"] for h in hits["hits"]]
    # An audit event per entry, as single adds record.
    assert AuditEvent.objects.filter(action="entry.added", revision_number=1).count() == 5


def test_a_secret_in_one_item_refuses_the_whole_batch(a, memory):
    entries = turns(3)
    entries[1]["body"] = AWS
    r = a.post(B, {"entries": entries})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "secret_detected"
    assert list(error["details"]["entries"]) == ["1"]
    assert error["details"]["entries"]["1"]["code"] == "secret_detected"
    assert "AKIA" not in r.text
    assert Entry.objects.count() == 0 and Revision.objects.count() == 0


def test_every_refused_item_is_named_and_mixed_refusals_are_400(a, memory):
    entries = turns(4)
    entries[0]["body"] = AWS
    entries[2] = {"body": "Card 4111 1111 1111 1111 pays for the build farm", "kind": "fact"}
    entries[3]["kind"] = "rumour"
    r = a.post(B, {"entries": entries})
    # A malformed item is refused by its shape first, by index.
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"]["entries"] == {
        "3": {
            "code": "invalid",
            "message": "The request has invalid fields.",
            "details": {"kind": ['"rumour" is not a valid choice.']},
        }
    }
    entries[3]["kind"] = "fact"
    r = a.post(B, {"entries": entries})
    assert r.status_code == 400, r.text
    details = r.json()["error"]["details"]["entries"]
    assert {k: v["code"] for k, v in details.items()} == {
        "0": "secret_detected",
        "2": "personal_data_detected",
    }
    assert Entry.objects.count() == 0


def test_items_take_only_the_single_add_fields(a, memory):
    r = a.post(B, {"entries": [{"body": "x", "kind": "fact", "dedupe": False}]})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"]["entries"]["0"]["details"] == {"dedupe": ["Unknown field."]}
    r = a.post(B, {"entries": [], "extra": 1})
    assert r.status_code == 400 and "extra" in r.json()["error"]["details"]
    r = a.post(B, {"entries": []})
    assert r.status_code == 400 and "entries" in r.json()["error"]["details"]
    r = a.post(B, {"entries": ["just text"]})
    assert r.status_code == 400, r.text


def test_an_unknown_source_names_its_item(a, memory):
    entries = turns(2)
    entries[1]["evidence"] = [{"source": "nowhere", "ref": "x"}]
    r = a.post(B, {"entries": entries})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"]["entries"]["1"]["details"] == {
        "evidence": ["unknown source: nowhere"]
    }


def test_exact_duplicates_are_no_ops_against_the_memory_and_inside_the_batch(a, memory):
    existing = add_via_api(a, "Backups run at 02:00 UTC")
    entries = [
        {"body": "Backups run at 02:00 UTC", "kind": "fact"},
        {"body": "Restores are tested monthly", "kind": "fact"},
        {"body": "  Restores are tested monthly ", "kind": "fact"},
        {"body": "Restores are tested monthly", "kind": "decision"},
    ]
    body = a.post(B, {"entries": entries}).json()
    r0, r1, r2, r3 = body["results"]
    assert (r0["status"], r0["created"], r0["reason"]) == (200, False, "exact_duplicate")
    assert r0["entry_id"] == existing["entry_id"] and "revision" not in r0
    assert r1["status"] == 201 and r1["created"]
    assert (r2["status"], r2["entry_id"], r2["reason"]) == (200, r1["entry_id"], "exact_duplicate")
    assert r3["status"] == 201 and r3["entry_id"] != r1["entry_id"]  # another kind
    assert Entry.objects.count() == 3
    # Only duplicates: nothing written, the answer names the head.
    again = a.post(B, {"entries": entries[:2]}).json()
    assert [x["status"] for x in again["results"]] == [200, 200]
    assert again["revision"] == 2 and Revision.objects.count() == 2


def test_idempotency_key_replays_and_refuses_another_body(a, memory):
    headers = {"Idempotency-Key": "import-42"}
    first = a.post(B, {"entries": turns(3)}, headers=headers)
    assert first.status_code == 200, first.text
    again = a.post(B, {"entries": turns(3)}, headers=headers)
    assert again.status_code == 200 and again.json() == first.json()
    assert Revision.objects.count() == 1 and Entry.objects.count() == 3
    other = a.post(B, {"entries": turns(2)}, headers=headers)
    assert other.status_code == 409, other.text
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    # Without a key, the same body is a batch of exact duplicates (nothing written).
    plain = a.post(B, {"entries": turns(3)}).json()
    assert {x["reason"] for x in plain["results"]} == {"exact_duplicate"}
    assert Revision.objects.count() == 1


def test_a_refused_batch_leaves_its_key_free(a, memory):
    headers = {"Idempotency-Key": "retry-me"}
    bad = turns(2)
    bad[0]["body"] = AWS
    assert a.post(B, {"entries": bad}, headers=headers).status_code == 422
    assert BatchImportKey.objects.count() == 0
    assert a.post(B, {"entries": turns(2)}, headers=headers).status_code == 200


def test_a_secret_as_idempotency_key_is_refused(a, memory):
    r = a.post(B, {"entries": turns(1)}, headers={"Idempotency-Key": "AKIAIOSFODNN7EXAMPLE"})
    assert r.status_code == 422, r.text
    assert Entry.objects.count() == 0


def test_clearance_refuses_an_item_above_the_key(api, memory):
    low = make_key("low", "agent", clearance="internal")
    entries = turns(2)
    entries[1]["sensitivity"] = "restricted"
    r = api.as_(low).post(B, {"entries": entries})
    assert r.status_code == 403, r.text
    assert r.json()["error"]["details"]["entries"]["1"]["code"] == "forbidden"
    assert Entry.objects.count() == 0


def test_readers_may_not_batch_and_other_memories_are_404(api, auditor, scoped_agent):
    r = api.as_(auditor).post(B, {"entries": turns(1)})
    assert r.status_code == 403, r.text
    r = api.as_(scoped_agent).post("/api/v1/memories/other/entries/batch", {"entries": turns(1)})
    assert r.status_code == 404, r.text


def test_admission_review_makes_candidates_with_their_proposals(a, memory, staff):
    actions.update_memory_policy(
        memory, actor=staff, policy={"admission_review": {"below_authority": "repository_attested"}}
    )
    entries = [
        {"body": "Deploys run on Tuesdays", "kind": "fact"},
        {
            "body": "The billing service retries webhooks five times",
            "kind": "fact",
            "evidence": [{"source": "repo", "ref": "billing/README.md"}],
        },
    ]
    body = a.post(B, {"entries": entries}, headers={"Idempotency-Key": "gated"}).json()
    bare, attested = body["results"]
    assert bare["state"] == "candidate" and "proposal" in bare
    assert attested["state"] == "active" and "proposal" not in attested
    proposal = Proposal.objects.get(pk=bare["proposal"])
    assert proposal.kind == ProposalKind.ADMISSION
    assert Head.objects.get(entry__uid=bare["entry_id"]).state == "candidate"
    # The replay names the proposal too.
    again = a.post(B, {"entries": entries}, headers={"Idempotency-Key": "gated"}).json()
    assert again == body


def test_without_a_key_the_answer_names_the_candidates_proposals_too(a, memory, staff):
    actions.update_memory_policy(
        memory, actor=staff, policy={"admission_review": {"below_authority": "repository_attested"}}
    )
    body = a.post(B, {"entries": [{"body": "Deploys run on Tuesdays", "kind": "fact"}]}).json()
    (item,) = body["results"]
    assert item["state"] == "candidate"
    assert Proposal.objects.get(pk=item["proposal"]).kind == ProposalKind.ADMISSION


def test_over_the_item_limit_is_413(a, memory, settings):
    settings.STEWARD_BATCH_MAX_ENTRIES = 3
    r = a.post(B, {"entries": turns(4)})
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "too_large"


def test_over_the_batch_byte_limit_is_413_and_a_big_batch_fits_under_it(a, memory, settings):
    # A thousand full bodies are larger than other requests may be.
    big = [{"body": f"{i} " + "word " * 1600, "kind": "fact"} for i in range(150)]
    assert len(json.dumps({"entries": big})) > 1024 * 1024
    r = a.post(B, {"entries": big})
    assert r.status_code == 200, r.text[:300]
    settings.STEWARD_BATCH_MAX_BYTES = 1000
    r = a.post(B, {"entries": turns(40)})
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "too_large"


def _count_queries(memory, actor, n: int, prefix: str) -> int:
    entries = [
        {"body": f"{prefix} note {i} about rollout wave {i}", "kind": "fact"} for i in range(n)
    ]
    with CaptureQueriesContext(connection) as ctx:
        actions.add_entries(memory, actor=actor, entries=entries)
    return len(ctx.captured_queries)


def test_the_query_count_does_not_grow_with_the_items(memory, agent):
    small = _count_queries(memory, agent.actor, 5, "small")
    large = _count_queries(memory, agent.actor, 200, "large")
    # Bulk inserts: SQLite splits one into chunks of its parameter limit, nothing is per item.
    assert large <= small + 200 // 10, (small, large)


def test_the_action_refuses_with_per_item_errors_and_key_reuse(memory, agent):
    with pytest.raises(BatchRefused) as exc:
        actions.add_entries(memory, actor=agent.actor, entries=[{"body": AWS, "kind": "fact"}])
    assert exc.value.http_status == 422 and "0" in exc.value.details["entries"]
    actions.add_entries(memory, actor=agent.actor, entries=turns(1), idempotency_key="k")
    with pytest.raises(IdempotencyKeyReused):
        actions.add_entries(memory, actor=agent.actor, entries=turns(2), idempotency_key="k")


def test_a_batch_equals_the_single_adds_it_replaces(memory, agent, other_memory):
    # The same texts added one by one and as one batch: the same versions and projection.
    texts = ["Deploys need two approvals", "The cache TTL is 300 seconds"]
    singles = [remember(other_memory, agent.actor, t) for t in texts]
    batch = actions.add_entries(
        memory, actor=agent.actor, entries=[{"body": t, "kind": "fact"} for t in texts]
    )
    for one, many in zip(singles, batch.items, strict=True):
        assert one.version.content_hash == many.version.content_hash
        assert one.version.searchable_text == many.version.searchable_text
        a = one.entry.projection
        b = many.entry.projection
        assert (a.importance, a.validity, a.evidence_strength) == (
            b.importance,
            b.validity,
            b.evidence_strength,
        )
    assert EntryVersion.objects.filter(memory=memory).count() == 2


def test_an_expired_key_is_free_again_and_purged(memory, agent):
    from datetime import timedelta

    from django.utils import timezone

    actions.add_entries(memory, actor=agent.actor, entries=turns(1), idempotency_key="old")
    BatchImportKey.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    again = actions.add_entries(memory, actor=agent.actor, entries=turns(2), idempotency_key="old")
    assert not again.replayed and again.items[1].created
    assert BatchImportKey.objects.count() == 1
    assert BatchImportKey.objects.get().expires_at > timezone.now()


@pytest.mark.semantic
def test_a_batch_is_recallable_by_meaning_when_it_returns(a, memory):
    # Embedded mode: the batch's vectors are made in the request, after its commit.
    entries = turns(20)
    entries[7] = {"body": "My sister adopted a grey kitten called Pepper.", "kind": "fact"}
    body = a.post(B, {"entries": entries}).json()
    planted = body["results"][7]["entry_id"]
    hits = a.post("/api/v1/memories/acme/search", {"query": "what pet did my sibling get?"}).json()[
        "hits"
    ]
    assert hits[0]["entry_id"] == planted
    assert "vector" in hits[0]["channels"]
