"""Direct writes and exact history through the HTTP API."""

from __future__ import annotations

import pytest

from memory import actions
from memory.models import Entry, EntryVersion, Evidence, Head, Revision
from tests.factories import add_via_api

E = "/api/v1/memories/acme/entries"


@pytest.fixture
def a(api, agent):
    return api.as_(agent)


def test_revision_numbers_run_1_to_n_in_order(a):
    first = add_via_api(a, "The deploy target is eu-2", current_state=True)
    second = add_via_api(a, "Prefer tabs in Makefiles", kind="preference")
    r = a.post(f"{E}/{first['entry_id']}/revise", {"body": "The deploy target is eu-3"})
    assert r.status_code == 201, r.text
    r = a.post(f"{E}/{second['entry_id']}/forget", {"reason": "no longer true"})
    assert r.status_code == 200, r.text
    revs = a.get("/api/v1/memories/acme/revisions?since_revision=0").json()
    assert [x["number"] for x in revs["items"]] == [1, 2, 3, 4]
    assert [x["kind"] for x in revs["items"]] == ["add", "add", "revise", "forget"]
    assert revs["head"] == 4
    assert first["revision"] == 1 and second["revision"] == 2


def test_exact_duplicate_is_a_noop(a):
    first = add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    r = a.post(E, {"body": "  Use PostgreSQL advisory locks for leader election ", "kind": "fact"})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "entry_id": first["entry_id"],
        "version": 1,
        "content_hash": first["content_hash"],
        "created": False,
        "reason": "exact_duplicate",
        "state": "active",
        "near_duplicates": [],
    }
    assert Revision.objects.count() == 1
    assert EntryVersion.objects.count() == 1


def test_the_exact_duplicate_lookup_names_the_versions_memory(memory, agent):
    # The hash is only unique within a Memory, and the index is (memory, content hash): with the
    # head's Memory alone in the query, PostgreSQL walked the whole index (1.2 ms at 10,000
    # entries, growing with the table). Which plan a tiny test table gets is the planner's
    # choice, so the query is checked for the condition the index needs.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import remember

    remember(memory, agent.actor, "Use PostgreSQL advisory locks for leader election")
    with CaptureQueriesContext(connection) as queries:
        again = remember(memory, agent.actor, "Use PostgreSQL advisory locks for leader election")
    assert again.reason == "exact_duplicate"
    (lookup,) = [q["sql"] for q in queries.captured_queries if 'content_hash" = ' in q["sql"]]
    assert f'"memory_entryversion"."memory_id" = {memory.pk}' in lookup, lookup


def test_same_text_with_other_kind_or_evidence_is_a_new_entry(a):
    first = add_via_api(a, "Releases are cut on Tuesdays")
    other_kind = add_via_api(a, "Releases are cut on Tuesdays", kind="decision")
    cited = add_via_api(
        a, "Releases are cut on Tuesdays", evidence=[{"source": "repo", "ref": "RELEASING.md"}]
    )
    assert len({first["entry_id"], other_kind["entry_id"], cited["entry_id"]}) == 3


def test_text_equal_to_an_inactive_entry_makes_a_new_entry(a):
    first = add_via_api(a, "The staging database is db-7")
    a.post(f"{E}/{first['entry_id']}/forget", {"reason": "decommissioned"})
    again = a.post(E, {"body": "The staging database is db-7", "kind": "fact"})
    assert again.status_code == 201, again.text
    assert again.json()["entry_id"] != first["entry_id"]
    old = a.get(f"{E}/{first['entry_id']}").json()
    assert old["state"] == "inactive"


def test_revise_keeps_id_bumps_version_unions_evidence_and_adds_one_revision(a):
    first = add_via_api(
        a, "CI runs on GitHub Actions", evidence=[{"source": "repo", "ref": ".github/ci.yml"}]
    )
    head_before = a.get("/api/v1/memories/acme").json()["head"]
    r = a.post(
        f"{E}/{first['entry_id']}/revise",
        {
            "body": "CI runs on GitHub Actions and Buildkite",
            "evidence": [
                {"source": "chat", "ref": "msg-991"},
                {"source": "repo", "ref": ".github/ci.yml"},
            ],
            "expected_version": 1,
        },
    )
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["entry_id"] == first["entry_id"]
    assert out["version"] == 2
    # A revise writes a version of an existing entry: it never says an entry was created.
    assert out["revised"] is True and "created" not in out
    entry = a.get(f"{E}/{first['entry_id']}").json()
    assert [(e["source"], e["ref"]) for e in entry["evidence"]] == [
        ("repo", ".github/ci.yml"),
        ("chat", "msg-991"),
    ]
    since = a.get(f"/api/v1/memories/acme/revisions?since_revision={head_before}").json()
    assert len(since["items"]) == 1
    change = since["items"][0]["changes"][0]
    assert change == {
        "entry_id": first["entry_id"],
        "from_version": 1,
        "to_version": 2,
        "from_state": "active",
        "to_state": "active",
        "state_reason": "",
    }
    versions = a.get(f"{E}/{first['entry_id']}/versions").json()["items"]
    assert [v["body"] for v in versions] == [
        "CI runs on GitHub Actions",
        "CI runs on GitHub Actions and Buildkite",
    ]
    assert versions[0]["lifecycle_reason"] == "replaced_by_version:2"
    assert versions[1]["is_head"] is True


def test_revise_with_the_same_body_and_evidence_is_a_noop(a):
    first = add_via_api(a, "Logs are kept 30 days")
    r = a.post(f"{E}/{first['entry_id']}/revise", {"body": "Logs are kept 30 days "})
    assert r.status_code == 200, r.text
    assert r.json()["revised"] is False and "created" not in r.json()
    assert Revision.objects.count() == 1


def test_forget_and_reactivate_keep_the_same_version_and_hash(a):
    first = add_via_api(a, "Feature flags live in flags.yaml")
    eid = first["entry_id"]
    version_pk = Head.objects.get(entry__uid=eid).version_id
    r = a.post(f"{E}/{eid}/forget", {"reason": "moved to the flag service"})
    assert r.status_code == 200, r.text
    forgotten = a.get(f"{E}/{eid}").json()
    assert forgotten["state"] == "inactive"
    assert forgotten["lifecycle"]["validity"] == "inactive"
    assert forgotten["lifecycle"]["validity_reason"] == "moved to the flag service"
    r = a.post(f"{E}/{eid}/reactivate", {"reason": "flag service was rolled back"})
    assert r.status_code == 200, r.text
    back = a.get(f"{E}/{eid}").json()
    assert back["state"] == "active"
    assert back["version"] == 1
    assert back["content_hash"] == first["content_hash"]
    assert Head.objects.get(entry__uid=eid).version_id == version_pk
    assert EntryVersion.objects.count() == 1


def test_revising_an_inactive_entry_is_409(a):
    eid = add_via_api(a, "Use Redis 6")["entry_id"]
    a.post(f"{E}/{eid}/forget", {"reason": "upgraded"})
    r = a.post(f"{E}/{eid}/revise", {"body": "Use Redis 7"})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "entry_inactive"
    assert EntryVersion.objects.count() == 1


def test_stale_expected_version_is_409(a):
    eid = add_via_api(a, "Primary region is us-east-1")["entry_id"]
    assert a.post(f"{E}/{eid}/revise", {"body": "Primary region is us-east-2"}).status_code == 201
    r = a.post(f"{E}/{eid}/revise", {"body": "Primary region is eu-west-1", "expected_version": 1})
    assert r.status_code == 409, r.text
    body = r.json()["error"]
    assert body["code"] == "version_conflict"
    assert body["details"] == {"expected_version": 1, "head_version": 2}
    assert Revision.objects.count() == 2


def test_forgetting_twice_and_reactivating_an_active_entry_are_conflicts(a):
    eid = add_via_api(a, "Nightly backups at 03:00")["entry_id"]
    assert a.post(f"{E}/{eid}/reactivate", {}).status_code == 409
    assert a.post(f"{E}/{eid}/forget", {"reason": "x"}).status_code == 200
    r = a.post(f"{E}/{eid}/forget", {"reason": "x"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "entry_inactive"


def test_since_revision_semantics(a):
    for i in range(3):
        add_via_api(a, f"Fact number {i} about the build")
    url = "/api/v1/memories/acme/revisions?since_revision="
    assert [x["number"] for x in a.get(url + "0").json()["items"]] == [1, 2, 3]
    assert [x["number"] for x in a.get(url + "1").json()["items"]] == [2, 3]
    assert a.get(url + "3").json()["items"] == []
    r = a.get(url + "4")
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"] == {"since_revision": 4, "head": 3}
    assert a.get(url + "-1").status_code == 400


def test_revision_list_pages_with_next_since_revision(a, django_assert_max_num_queries):
    for i in range(5):
        add_via_api(a, f"Service {i} owns the queue")
    page = a.get("/api/v1/memories/acme/revisions?since_revision=0&limit=2").json()
    assert [x["number"] for x in page["items"]] == [1, 2]
    assert page["next_since_revision"] == 2
    page = a.get("/api/v1/memories/acme/revisions?since_revision=4&limit=2").json()
    assert [x["number"] for x in page["items"]] == [5]
    assert page["next_since_revision"] is None


def test_version_read_is_exact(a):
    eid = add_via_api(a, "Timeout is 30s")["entry_id"]
    a.post(f"{E}/{eid}/revise", {"body": "Timeout is 45s"})
    v1 = a.get(f"{E}/{eid}/versions/1").json()
    assert v1["body"] == "Timeout is 30s"
    assert v1["status"] == "replaced"
    assert v1["lifecycle_reason"] == "replaced_by_version:2"
    assert a.get(f"{E}/{eid}/versions/2").json()["body"] == "Timeout is 45s"
    r = a.get(f"{E}/{eid}/versions/3")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_body_over_the_byte_limit_is_refused_and_nothing_stored(a):
    r = a.post(E, {"body": "🧠" * 3000, "kind": "fact"})
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "too_large"
    assert Revision.objects.count() == 0
    # 2048 brains are exactly 8192 bytes: accepted.
    assert a.post(E, {"body": "🧠" * 2048, "kind": "fact"}).status_code == 201


def test_a_number_or_a_boolean_where_text_is_expected_is_refused(a):
    r = a.post(E, {"body": 123, "kind": "fact"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid"
    assert r.json()["error"]["details"] == {"body": ["Not a valid string."]}
    # A choice is text too: 5 is not matched against "5".
    r = a.post(E, {"body": "Timeout is 30s", "kind": 5, "sensitivity": True})
    assert r.status_code == 400, r.text
    not_text = ["Not a valid string."]
    assert r.json()["error"]["details"] == {"kind": not_text, "sensitivity": not_text}
    cited = {"body": "Cited", "kind": "fact", "evidence": [{"source": "repo", "ref": True}]}
    r = a.post(E, cited)
    assert r.status_code == 400, r.text
    assert "ref" in str(r.json()["error"]["details"])
    assert Revision.objects.count() == 0


def test_too_many_evidence_references_is_refused(a):
    refs = [{"source": "repo", "ref": f"file{i}.py"} for i in range(33)]
    r = a.post(E, {"body": "Many refs", "kind": "fact", "evidence": refs})
    assert r.status_code == 413, r.text
    assert Revision.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        "The CI key is AKIAIOSFODNN7EXAMPLE for the build account",
        "Use token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + " for the bot",
        "Connect with postgres://app:hunter2-real@db.internal:5432/app",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        "Slack bot token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ],
)
def test_secrets_are_refused_with_nothing_stored(a, body):
    r = a.post(E, {"body": body, "kind": "fact"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "secret_detected"
    assert EntryVersion.objects.count() == 0
    assert Revision.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        "Fixed in commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c on main",
        "The tenant id is 123e4567-e89b-12d3-a456-426614174000",
        "Checksum sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "The password policy requires 12 characters and rotation every 90 days",
        "Base64 of the logo is iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    ],
)
def test_ordinary_hashes_ids_and_prose_are_accepted(a, body):
    r = a.post(E, {"body": body, "kind": "fact"})
    assert r.status_code == 201, r.text


def test_secret_in_a_revision_or_reason_is_refused(a):
    eid = add_via_api(a, "Bot account is ci-bot")["entry_id"]
    r = a.post(f"{E}/{eid}/revise", {"body": "Bot key AKIAIOSFODNN7EXAMPLE"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected"
    r = a.post(f"{E}/{eid}/forget", {"reason": "leaked AKIAIOSFODNN7EXAMPLE"})
    assert r.status_code == 422
    assert Revision.objects.count() == 1


def test_unknown_fields_and_bad_values_are_400_with_details(a):
    r = a.post(E, {"body": "x", "kind": "fact", "colour": "red"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid"
    assert "colour" in r.json()["error"]["details"]
    r = a.post(E, {"body": "x", "kind": "rumour"})
    assert r.status_code == 400 and "kind" in r.json()["error"]["details"]
    r = a.post(E, {"kind": "fact"})
    assert r.status_code == 400 and "body" in r.json()["error"]["details"]
    r = a.post(E, {"body": "x", "kind": "fact", "evidence": [{"source": "nowhere", "ref": "1"}]})
    assert r.status_code == 400, r.text
    r = a.post(E, {"body": "x", "kind": "fact", "tier": "session"})
    assert r.status_code == 400 and "session_id" in r.json()["error"]["details"]
    assert Revision.objects.count() == 0


def test_malformed_json_not_json_and_wrong_method(a):
    r = a.request("POST", E, data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid"
    r = a.request("POST", E, data="body=x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    r = a.request("DELETE", E)
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    r = a.get("/api/v1/no-such-thing")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_request_body_over_the_upload_limit_is_413(a):
    r = a.request(
        "POST",
        E,
        data=b'{"body": "' + b"a" * (2 * 1024 * 1024) + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413, r.text[:200]
    assert r.json()["error"]["code"] == "too_large"


def test_no_key_and_bad_key_are_401(api, agent):
    r = api.get("/api/v1/memories/acme")
    assert r.status_code == 401 and r.json()["error"]["code"] == "not_authenticated"
    r = api.as_("nope.nope").get("/api/v1/memories/acme")
    assert r.status_code == 401


def test_the_bearer_scheme_is_case_insensitive(api, agent):
    for scheme in ("bearer", "BEARER"):
        headers = {"Authorization": f"{scheme} {agent.secret}"}
        r = api.get("/api/v1/memories/acme", headers=headers)
        assert r.status_code == 200, (scheme, r.text[:200])
    r = api.get("/api/v1/memories/acme", headers={"Authorization": "bearer nope.nope"})
    assert r.status_code == 401
    assert r.json()["error"]["message"] == "Invalid or revoked API key."


def test_key_scoped_to_a_memory_gets_404_elsewhere(api, scoped_agent, agent):
    add_via_api(api.as_(agent), "Other team uses Go", slug="other")
    s = api.as_(scoped_agent)
    assert s.get("/api/v1/memories/acme").status_code == 200
    r = s.get("/api/v1/memories/other")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = s.post("/api/v1/memories/other/entries", {"body": "x", "kind": "fact"})
    assert r.status_code == 404
    assert s.get("/api/v1/memories/other/revisions").status_code == 404


def test_entries_above_clearance_do_not_exist_for_the_key(api, agent, memory):
    from tests.conftest import make_key

    secret_keeper = make_key("ops", "agent", clearance="restricted")
    hi = api.as_(secret_keeper)
    eid = add_via_api(hi, "Incident 42 root cause is the HR system", sensitivity="restricted")[
        "entry_id"
    ]
    low = api.as_(agent)
    assert hi.get(f"{E}/{eid}").status_code == 200
    assert low.get(f"{E}/{eid}").status_code == 404
    assert low.get(f"{E}/{eid}/versions").status_code == 404
    assert low.post(f"{E}/{eid}/forget", {"reason": "x"}).status_code == 404
    listed = low.get(E).json()["items"]
    assert eid not in [e["entry_id"] for e in listed]


def test_auditor_cannot_write(api, auditor, agent):
    eid = add_via_api(api.as_(agent), "Docs live in /docs")["entry_id"]
    au = api.as_(auditor)
    assert au.get(f"{E}/{eid}").status_code == 200
    for path, body in [
        (E, {"body": "x", "kind": "fact"}),
        (f"{E}/{eid}/revise", {"body": "y"}),
        (f"{E}/{eid}/forget", {"reason": "z"}),
        (f"{E}/{eid}/reactivate", {}),
        (f"{E}/{eid}/pin", {"pinned": True, "category": "safety_policy", "reason": "r"}),
        ("/api/v1/memories/acme/sessions/s1/end", None),
    ]:
        r = au.post(path, body)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["error"]["code"] == "forbidden"
    assert Revision.objects.count() == 1


def test_pin_is_for_reviewers_only(api, agent, reviewer):
    eid = add_via_api(api.as_(agent), "Never deploy on Fridays", kind="constraint")["entry_id"]
    pin = {"pinned": True, "category": "safety_policy", "reason": "company rule"}
    assert api.as_(agent).post(f"{E}/{eid}/pin", pin).status_code == 403
    r = api.as_(reviewer).post(f"{E}/{eid}/pin", pin)
    assert r.status_code == 200, r.text
    lifecycle = api.as_(agent).get(f"{E}/{eid}").json()["lifecycle"]
    assert lifecycle["pinned"] is True and lifecycle["pin_category"] == "safety_policy"
    assert Revision.objects.filter(kind="pin").count() == 1


def test_end_session_retires_only_that_sessions_session_tier_entries(a):
    s1 = add_via_api(
        a, "Working on ticket 17", kind="working_note", tier="session", session_id="s1"
    )
    s1_long = add_via_api(a, "Ticket 17 is about billing", session_id="s1")
    s2 = add_via_api(
        a, "Working on ticket 18", kind="working_note", tier="session", session_id="s2"
    )
    # It takes no fields: one sent anyway is refused like on every other action.
    r = a.post("/api/v1/memories/acme/sessions/s1/end", {"session": "s2"})
    assert r.status_code == 400 and r.json()["error"]["details"] == {"session": ["Unknown field."]}
    assert a.get(f"{E}/{s1['entry_id']}").json()["state"] == "active"
    r = a.post("/api/v1/memories/acme/sessions/s1/end", {})
    assert r.status_code == 200, r.text
    assert r.json()["retired"] == [s1["entry_id"]]
    assert a.get(f"{E}/{s1['entry_id']}").json()["lifecycle"]["auto_action_reason"] == "session_end"
    assert a.get(f"{E}/{s1_long['entry_id']}").json()["state"] == "active"
    assert a.get(f"{E}/{s2['entry_id']}").json()["state"] == "active"
    again = a.post("/api/v1/memories/acme/sessions/s1/end").json()
    assert again["revision"] is None and again["retired"] == []
    # Undone by reactivate.
    assert a.post(f"{E}/{s1['entry_id']}/reactivate", {}).status_code == 200


def test_conflicts_with_observation_marks_both_unresolved(a):
    x = add_via_api(a, "Deploy target is eu-2", current_state=True)["entry_id"]
    y = add_via_api(a, "Deploy target is us-1", current_state=True)["entry_id"]
    r = a.post(
        "/api/v1/memories/acme/relations",
        {
            "kind": "conflicts_with",
            "from_entry": x,
            "to_entry": y,
            "evidence": [{"source": "chat", "ref": "msg-5"}],
        },
    )
    assert r.status_code == 201, r.text
    assert r.json()["authoritative"] is False
    for eid in (x, y):
        assert a.get(f"{E}/{eid}").json()["lifecycle"]["validity"] == "unresolved_conflict"
    assert Revision.objects.count() == 2  # an observation changes no head
    r = a.post(
        "/api/v1/memories/acme/relations", {"kind": "supersedes", "from_entry": x, "to_entry": y}
    )
    assert r.status_code == 400


def test_entry_list_filters_and_cursor_pagination(a, django_assert_max_num_queries):
    ids = [
        add_via_api(a, f"Library {i} is pinned to v{i}.0", kind="fact")["entry_id"]
        for i in range(5)
    ]
    a.post(f"{E}/{ids[0]}/forget", {"reason": "removed"})
    add_via_api(a, "We prefer small PRs", kind="preference")
    page1 = a.get(f"{E}?kind=fact&state=active&limit=2").json()
    page2 = a.get(f"{E}?kind=fact&state=active&limit=2&cursor={page1['next_cursor']}").json()
    assert [e["entry_id"] for e in page1["items"] + page2["items"]] == ids[1:5]
    assert page2["next_cursor"] is None
    inactive = a.get(f"{E}?validity=inactive").json()["items"]
    assert [e["entry_id"] for e in inactive] == [ids[0]]
    assert a.get(f"{E}?state=gone").status_code == 400


def test_an_entry_page_is_chosen_on_the_entries_alone(a):
    """The page's keys come from the entry table alone and its rows are then read by key: with
    the head and projection joined into the LIMIT query, PostgreSQL merge-joined them from their
    first row and a cursor deep into a Memory of a million entries read every row before it."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    ids = [add_via_api(a, f"Service {i} listens on port 80{i}")["entry_id"] for i in range(3)]
    auth = {"Authorization": f"Bearer {a.secret}"}
    with CaptureQueriesContext(connection) as queries:
        page = Client().get(f"{E}?limit=2", headers=auth).json()
    assert [e["entry_id"] for e in page["items"]] == ids[:2]
    (chooser,) = [q["sql"] for q in queries.captured_queries if "LIMIT 3" in q["sql"]]
    assert 'FROM "memory_entry"' in chooser and "JOIN" not in chooser, chooser
    rest = a.get(f"{E}?limit=2&cursor={page['next_cursor']}").json()
    assert [e["entry_id"] for e in rest["items"]] == ids[2:] and rest["next_cursor"] is None


def test_memory_create_and_policy_roles(api, agent, reviewer, scoped_agent):
    assert api.as_(agent).post("/api/v1/memories", {"slug": "x", "name": "X"}).status_code == 403
    r = api.as_(reviewer).post("/api/v1/memories", {"slug": "team-x", "name": "Team X"})
    assert r.status_code == 201, r.text
    assert (
        api.as_(reviewer).post("/api/v1/memories", {"slug": "team-x", "name": "Y"}).status_code
        == 409
    )
    r = api.as_(reviewer).patch("/api/v1/memories/team-x", {"policy": {"quality_ranking": True}})
    assert r.status_code == 200 and r.json()["policy"] == {"quality_ranking": True}
    r = api.as_(reviewer).patch("/api/v1/memories/team-x", {"policy": {"bogus": 1}})
    assert r.status_code == 400
    assert api.as_(agent).patch("/api/v1/memories/team-x", {"policy": {}}).status_code == 403


def test_sources_and_declarations(api, agent, reviewer):
    ag = api.as_(agent)
    r = ag.post("/api/v1/sources", {"name": "wiki", "description": "Team wiki"})
    assert r.status_code == 201, r.text
    assert r.json()["declaration"]["authority"] == "untrusted"
    # An agent cannot raise a declaration.
    r = ag.post(
        "/api/v1/sources/wiki/declarations",
        {"authority": "system_attested", "verification": "verified"},
    )
    assert r.status_code == 403
    r = api.as_(reviewer).post(
        "/api/v1/sources/wiki/declarations",
        {"authority": "user_asserted", "verification": "verified"},
    )
    assert r.status_code == 201 and r.json()["declaration_version"] == 1
    eid = add_via_api(ag, "Wiki says SLA is 99.9", evidence=[{"source": "wiki", "ref": "SLA"}])[
        "entry_id"
    ]
    api.as_(reviewer).post(
        "/api/v1/sources/wiki/declarations",
        {"authority": "untrusted", "verification": "not_verified"},
    )
    # Evidence keeps the snapshot taken at write time.
    ev = ag.get(f"{E}/{eid}").json()["evidence"][0]
    assert ev["snapshot"] == {
        "authority": "user_asserted",
        "verification": "verified",
        "declaration_version": 1,
    }
    detail = ag.get("/api/v1/sources/wiki").json()
    assert [d["declaration_version"] for d in detail["declarations"]] == [1, 2]
    assert Evidence.objects.count() == 1


def test_entry_detail_has_fixed_query_count(a, agent, memory, django_assert_max_num_queries):
    from django.test import Client

    eid = add_via_api(
        a,
        "Queue is RabbitMQ",
        evidence=[{"source": "repo", "ref": "a"}, {"source": "chat", "ref": "b"}],
    )["entry_id"]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")
    with django_assert_max_num_queries(7):
        r = client.get(f"{E}/{eid}")
    assert r.status_code == 200


@pytest.mark.parametrize(
    "policy",
    [
        {"l1_max_per_run": "many"},
        {"importance_floor": 7},
        {"retention_days": {"long": "forever"}},
        {"approvals_required": {"consolidation": 0}},
        {"freshness": {"alpha": 2}},
        {"webhook_url": "ftp://x"},
        {"tau_same": 1.5},
    ],
)
def test_policy_values_are_validated_when_saved(api, reviewer, policy):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": policy})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid"
    assert api.as_(reviewer).get("/api/v1/memories/acme").json()["policy"] == {}


def test_an_add_runs_a_fixed_number_of_queries(a, agent):
    """However many entries the Memory holds: the writer reads back nothing of the entry it
    creates (no head, no evidence, no relation: its projection row is derived from what was just
    written), and listeners with nothing to file open no transaction after the commit."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")

    def add(body: str) -> list[str]:
        with CaptureQueriesContext(connection) as ctx:
            r = client.post(E, {"body": body, "kind": "fact"}, content_type="application/json")
        assert r.status_code == 201, r.content
        return [q["sql"] for q in ctx.captured_queries]

    first = add("The staging cluster runs three nodes")
    for n in range(12):
        add_via_api(a, f"Release train {n} ships on Thursday with the staging cluster")
    later = add("The billing service retries webhooks five times")
    # One lexical query for the duplicate check (one tier: memory.search.lexical_candidates),
    # one for the term statistics it ranks by, two upserts counting the new version into them,
    # and two for the audit event's seal on SQLite (the last seal, the new one:
    # memory.audit_chain).
    assert len(first) == len(later) <= 21, later
    assert len([sql for sql in later if "memory_entryversion v" in sql]) == 1
    assert not [sql for sql in later if "SAVEPOINT" in sql]
    assert len([sql for sql in later if 'FROM "memory_head"' in sql]) == 1  # the exact duplicate
    assert not [sql for sql in later if 'FROM "memory_relation"' in sql]
    assert not [sql for sql in later if 'FROM "memory_evidence"' in sql]


def test_an_add_called_with_a_misspelt_or_missing_field_is_refused(memory, agent):
    """The add's keywords are its fields: a typo is a caller's error, never silently dropped,
    and a missing body is the same 400 detail the API gives."""
    from memory.exceptions import ValidationFailed

    with pytest.raises(TypeError, match="sesion_id"):
        actions.add_entry(memory, actor=agent.actor, body="A note", kind="fact", sesion_id="s1")  # type: ignore[call-arg]
    with pytest.raises(ValidationFailed) as missing:
        actions.add_entry(memory, actor=agent.actor, kind="fact")  # type: ignore[call-arg]
    assert missing.value.details == {"body": ["This field is required."]}
    assert not Entry.objects.filter(memory=memory).exists()
