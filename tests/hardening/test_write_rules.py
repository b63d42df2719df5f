"""Writes respect the key: clearance on every write (#1), the evidence limit on a revise's union
(#6), and who may declare a shared source (#7)."""

from __future__ import annotations

import pytest
from django.conf import settings

from memory.models import Entry, EntryVersion, Head, Revision, SourceDeclaration
from tests.conftest import make_key
from tests.factories import add_via_api

E = "/api/v1/memories/acme/entries"


@pytest.fixture
def public_agent(memory):
    return make_key("public-agent", "agent", clearance="public")


@pytest.fixture
def confidential_agent(memory):
    return make_key("conf-agent", "agent", clearance="confidential")


def test_ending_a_session_retires_only_what_the_key_can_see(api, public_agent, confidential_agent):
    conf = api.as_(confidential_agent)
    hidden = {
        s: add_via_api(
            conf,
            f"Note {s} on billing",
            kind="working_note",
            tier="session",
            session_id="s1",
            sensitivity=s,
        )["entry_id"]
        for s in ("internal", "confidential")
    }
    seen = add_via_api(
        conf,
        "Public note on billing",
        kind="working_note",
        tier="session",
        session_id="s1",
        sensitivity="public",
    )["entry_id"]
    r = api.as_(public_agent).post("/api/v1/memories/acme/sessions/s1/end")
    assert r.status_code == 200, r.text
    assert r.json()["retired"] == [seen]
    states = dict(Head.objects.values_list("entry__uid", "state"))
    assert states[seen] == "inactive"
    assert all(states[uid] == "active" for uid in hidden.values())
    # The confidential key then ends the rest.
    r = conf.post("/api/v1/memories/acme/sessions/s1/end")
    assert sorted(r.json()["retired"]) == sorted(hidden.values())


@pytest.mark.parametrize("sensitivity", ["internal", "confidential", "restricted"])
def test_a_key_cannot_write_above_its_clearance(api, public_agent, sensitivity):
    r = api.as_(public_agent).post(
        E, {"body": "Salary bands for 2025", "kind": "fact", "sensitivity": sensitivity}
    )
    assert r.status_code == 403, r.text
    assert r.json()["error"]["code"] == "forbidden"
    assert Entry.objects.count() == 0 and Revision.objects.count() == 0


def test_a_key_may_write_at_and_below_its_clearance(api, agent):
    for s in ("public", "internal"):
        r = api.as_(agent).post(E, {"body": f"A {s} fact", "kind": "fact", "sensitivity": s})
        assert r.status_code == 201, r.text


def test_every_write_on_a_hidden_entry_is_404(api, public_agent, confidential_agent):
    conf = api.as_(confidential_agent)
    hidden = add_via_api(conf, "Acquisition target is Initech", sensitivity="confidential")[
        "entry_id"
    ]
    other = add_via_api(conf, "Acquisition target is Globex", sensitivity="public")["entry_id"]
    pub = api.as_(public_agent)
    attempts = {
        "revise": pub.post(f"{E}/{hidden}/revise", {"body": "Acquisition target is Hooli"}),
        "forget": pub.post(f"{E}/{hidden}/forget", {"reason": "wrong"}),
        "reactivate": pub.post(f"{E}/{hidden}/reactivate", {}),
        "relation": pub.post(
            "/api/v1/memories/acme/relations",
            {"kind": "conflicts_with", "from_entry": other, "to_entry": hidden},
        ),
        "proposal": pub.post(
            "/api/v1/proposals",
            {
                "memory": "acme",
                "kind": "cleanup",
                "rationale": "stale",
                "entries": [{"entry_id": hidden, "version": 1}],
            },
        ),
    }
    assert {k: r.status_code for k, r in attempts.items()} == dict.fromkeys(attempts, 404)
    assert Head.objects.get(entry__uid=hidden).state == "active"
    assert EntryVersion.objects.filter(entry__uid=hidden).count() == 1


def test_revise_enforces_the_evidence_limit_on_the_union(api, agent):
    limit = settings.STEWARD_MAX_EVIDENCE
    a = api.as_(agent)
    first = [{"source": "repo", "ref": f"doc-{i}"} for i in range(limit - 2)]
    eid = add_via_api(a, "Runbook lists every step", evidence=first)["entry_id"]
    more = [{"source": "chat", "ref": f"msg-{i}"} for i in range(3)]
    r = a.post(f"{E}/{eid}/revise", {"body": "Runbook lists every step, checked", "evidence": more})
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "too_large"
    assert EntryVersion.objects.filter(entry__uid=eid).count() == 1
    # Up to the limit is fine; re-citing what is already there does not count twice.
    r = a.post(
        f"{E}/{eid}/revise",
        {"body": "Runbook lists every step, checked", "evidence": [*first[:5], *more[:2]]},
    )
    assert r.status_code == 201, r.text
    assert len(a.get(f"{E}/{eid}").json()["evidence"]) == limit


def test_ten_revises_never_exceed_the_limit(api, agent):
    a = api.as_(agent)
    eid = add_via_api(a, "Service list v0")["entry_id"]
    codes = []
    for n in range(10):
        ev = [{"source": "repo", "ref": f"r{n}-{i}"} for i in range(8)]
        codes.append(
            a.post(
                f"{E}/{eid}/revise", {"body": f"Service list v{n + 1}", "evidence": ev}
            ).status_code
        )
    assert codes == [201] * 4 + [413] * 6
    assert len(a.get(f"{E}/{eid}").json()["evidence"]) == 32


@pytest.fixture
def scoped_reviewer(memory, other_memory):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user("sam", password="pw-sam-123")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return make_key("sam-key", "reviewer", memories=("other",), owner="sam")


@pytest.mark.parametrize(
    "declaration",
    [
        {"authority": "untrusted", "verification": "not_verified"},
        {"authority": "system_attested", "verification": "verified"},
    ],
)
def test_only_an_unscoped_reviewer_or_staff_may_declare_a_shared_source(
    api, agent, scoped_agent, scoped_reviewer, reviewer, declaration
):
    path = "/api/v1/sources/repo/declarations"
    before = SourceDeclaration.objects.count()
    for key in (agent, scoped_agent, scoped_reviewer):
        r = api.as_(key).post(path, declaration)
        assert r.status_code == 403, (key.key.name, r.text)
        assert r.json()["error"]["code"] == "forbidden"
    assert SourceDeclaration.objects.count() == before
    r = api.as_(reviewer).post(path, declaration)
    assert r.status_code == 201, r.text


def test_an_agent_may_still_register_a_new_untrusted_source(api, scoped_agent):
    r = api.as_(scoped_agent).post("/api/v1/sources", {"name": "notes", "description": "Scratch"})
    assert r.status_code == 201, r.text
    r = api.as_(scoped_agent).post(
        "/api/v1/sources",
        {
            "name": "notes2",
            "declaration": {"authority": "repository_attested", "verification": "verified"},
        },
    )
    assert r.status_code == 403, r.text


def test_a_consolidation_whose_evidence_union_passes_the_limit_is_refused(api, agent):
    from proposals.models import Proposal

    a = api.as_(agent)
    x = add_via_api(
        a,
        "Runbook step list A",
        evidence=[{"source": "repo", "ref": f"a{i}"} for i in range(20)],
        dedupe=False,
    )
    y = add_via_api(
        a,
        "Runbook step list B",
        evidence=[{"source": "chat", "ref": f"b{i}"} for i in range(20)],
        dedupe=False,
    )
    r = a.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "One runbook",
            "target": {"entry_id": x["entry_id"], "version": 1},
            "redundant": [{"entry_id": y["entry_id"], "version": 1}],
            "body": "Runbook step list A and B",
        },
    )
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == "too_large"
    assert Proposal.objects.count() == 0
