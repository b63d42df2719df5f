"""The near-duplicate admission check on add (DESIGN.md §7) over HTTP: observations, the
system's consolidation proposal, the opt-out, the bounded candidate set, claims and clearance."""

from __future__ import annotations

import pytest

from memory.models import AuditEvent, Relation, Revision
from proposals.models import Proposal
from tests.conftest import make_key
from tests.factories import add_via_api

from .conftest import E, P


def test_a_duplicate_gets_a_relation_and_a_system_consolidation_proposal(a):
    old = add_via_api(a, "Use PostgreSQL advisory locks for leader election.")
    new = a.post(E, {"body": "use postgresql advisory locks for leader election", "kind": "fact"})
    assert new.status_code == 201, new.text
    body = new.json()
    assert body["near_duplicates"] == [
        {"entry_id": old["entry_id"], "score": 1.0, "relation": "duplicate_of", "method": "lexical"}
    ]
    proposal = a.get(f"{P}/{body['proposal']}").json()
    assert proposal["kind"] == "consolidation" and proposal["status"] == "pending"
    assert proposal["submitted_by"] == {
        "type": "system",
        "id": "system",
        "label": "near-duplicate check",
        "on_behalf_of": None,
    }
    assert proposal["payload"]["target"] == {"entry_id": old["entry_id"], "version": 1}
    assert proposal["payload"]["redundant"] == [{"entry_id": body["entry_id"], "version": 1}]
    assert proposal["payload"]["body"] == "Use PostgreSQL advisory locks for leader election."
    assert proposal["verification"]["similarity"] == 1.0
    rel = Relation.objects.get()
    assert (rel.kind, rel.from_entry.uid, rel.to_entry.uid) == (
        "duplicate_of",
        body["entry_id"],
        old["entry_id"],
    )
    assert rel.authoritative is False and rel.revision is None and rel.score == 1.0
    # The observation and the proposal wrote no revision: only the two adds did.
    assert list(Revision.objects.values_list("kind", flat=True)) == ["add", "add"]
    assert AuditEvent.objects.filter(action="relation.observed").count() == 1


def test_a_near_duplicate_gets_an_observation_but_no_proposal(a):
    old = add_via_api(a, "The deploy target is eu-2")
    r = a.post(E, {"body": "The deploy target is eu-3", "kind": "fact"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["near_duplicates"] == [
        {
            "entry_id": old["entry_id"],
            "score": 0.7143,
            "relation": "near_duplicate_of",
            "method": "lexical",
        }
    ]
    assert "proposal" not in body
    assert Relation.objects.get().kind == "near_duplicate_of"
    assert Proposal.objects.count() == 0


def test_unrelated_text_and_dedupe_false_record_nothing(a):
    add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    r = a.post(E, {"body": "Tabs in Makefiles, four spaces in Python", "kind": "preference"})
    assert r.json()["near_duplicates"] == []
    r = a.post(
        E,
        {
            "body": "Use PostgreSQL advisory locks for leader election!",
            "kind": "fact",
            "dedupe": False,
        },
    )
    assert r.status_code == 201 and r.json()["near_duplicates"] == []
    assert "proposal" not in r.json()
    assert Relation.objects.count() == 0 and Proposal.objects.count() == 0


def test_thresholds_come_from_the_memory_policy(api, a, reviewer):
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": 0.7, "tau_similar": 0.5}}
    )
    old = add_via_api(a, "The deploy target is eu-2")
    body = a.post(E, {"body": "The deploy target is eu-2 via ArgoCD", "kind": "fact"}).json()
    assert body["near_duplicates"] == [
        {
            "entry_id": old["entry_id"],
            "score": 0.75,
            "relation": "duplicate_of",
            "method": "lexical",
        }
    ]
    payload = a.get(f"{P}/{body['proposal']}").json()["payload"]
    assert payload["target"]["entry_id"] == old["entry_id"]
    assert payload["body"] == "The deploy target is eu-2 via ArgoCD"


def test_a_duplicate_score_with_a_different_value_files_no_consolidation(api, a, reviewer):
    """ "eu-2" and "eu-3" score as duplicates under a low tau_same, but they are two values of one
    slot: merging would keep the older value and retire the newer. The relation is recorded;
    the pair is left to the contradiction pass."""
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": 0.7, "tau_similar": 0.5}}
    )
    old = add_via_api(a, "The deploy target is eu-2")
    body = a.post(E, {"body": "The deploy target is eu-3", "kind": "fact"}).json()
    assert body["near_duplicates"] == [
        {
            "entry_id": old["entry_id"],
            "score": 0.7143,
            "relation": "duplicate_of",
            "method": "lexical",
        }
    ]
    assert "proposal" not in body
    assert Proposal.objects.count() == 0


def test_a_count_written_out_that_changed_files_no_consolidation(api, a, reviewer):
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": 0.7, "tau_similar": 0.5}}
    )
    add_via_api(a, "The sprint length is two weeks.")
    body = a.post(E, {"body": "The sprint length is three weeks.", "kind": "fact"}).json()
    assert body["near_duplicates"][0]["relation"] == "duplicate_of"
    assert "proposal" not in body
    assert Proposal.objects.count() == 0


def test_a_word_swapped_or_negated_in_one_slot_files_no_consolidation(api, a, reviewer):
    """ "main" / "master" and "allowed" / "not allowed" are two values of one slot written as
    words: duplicates by score, never a merge (the same slot check as the near-duplicate pass)."""
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": 0.6, "tau_similar": 0.5}}
    )
    add_via_api(a, "The default branch is main.")
    body = a.post(E, {"body": "The default branch is master.", "kind": "fact"}).json()
    assert body["near_duplicates"][0]["relation"] == "duplicate_of"
    add_via_api(a, "Deploys are allowed on Fridays.")
    negated = a.post(E, {"body": "Deploys are not allowed on Fridays.", "kind": "fact"}).json()
    assert negated["near_duplicates"][0]["relation"] == "duplicate_of"
    assert "proposal" not in body and "proposal" not in negated
    assert Proposal.objects.count() == 0


@pytest.mark.parametrize(
    ("plain", "negated"),
    [
        ("本番環境ではキャッシュを使う。", "本番環境ではキャッシュを使わない。"),
        ("프로덕션 환경에서는 캐시를 사용한다.", "프로덕션 환경에서는 캐시를 사용하지 않는다."),
    ],
)
def test_a_japanese_or_korean_negation_files_no_consolidation(api, a, reviewer, plain, negated):
    """Use / do not use, scored by words (the model reads neither): a duplicate by score, as
    "allowed" / "not allowed" is, never a merge."""
    tau = {"cosine": 0.6, "lexical": 0.6}
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": tau, "tau_similar": tau}}
    )
    add_via_api(a, plain)
    body = a.post(E, {"body": negated, "kind": "fact"}).json()
    assert body["near_duplicates"][0]["relation"] == "duplicate_of"
    assert "proposal" not in body
    assert Proposal.objects.count() == 0


def test_the_consolidation_on_add_keeps_the_details_of_both_texts(api, a, reviewer):
    """The newer text adds a detail: the proposed body is the merge, not the older text alone
    (which dropped "conftest.py", flagged only as a lost detail)."""
    api.as_(reviewer).patch(
        "/api/v1/memories/acme", {"policy": {"tau_same": 0.7, "tau_similar": 0.5}}
    )
    old = add_via_api(a, "Dana prefers pytest over unittest for all new tests of the billing app.")
    r = a.post(
        E,
        {
            "body": "Dana prefers pytest over unittest for all new tests of the billing app, "
            "with fixtures in conftest.py.",
            "kind": "preference",
        },
    ).json()
    assert r["near_duplicates"][0]["relation"] == "duplicate_of", r
    proposal = a.get(f"{P}/{r['proposal']}").json()
    assert proposal["payload"]["target"]["entry_id"] == old["entry_id"]
    assert proposal["payload"]["body"] == (
        "Dana prefers pytest over unittest for all new tests of the billing app, "
        "with fixtures in conftest.py."
    )
    assert proposal["verification"]["lost_details"] == []


def test_a_working_note_repeated_on_add_files_no_consolidation(a):
    """A note seen again in another session is what the promotion pass looks for: a merge on
    add would retire the repeat and the recurrence with it."""
    note = "test_checkout_flow is flaky on CI with a timeout in the Stripe mock"
    first = add_via_api(a, note, kind="working_note", session_id="s1")
    r = a.post(E, {"body": note + ".", "kind": "working_note", "session_id": "s2"}).json()
    assert r["near_duplicates"][0] == {
        "entry_id": first["entry_id"],
        "score": 1.0,
        "relation": "duplicate_of",
        "method": "lexical",
    }
    assert "proposal" not in r
    assert Proposal.objects.count() == 0


def test_the_check_is_bounded_to_twenty_candidates(a):
    for i in range(25):
        add_via_api(a, f"Queue worker {i} handles billing exports nightly", dedupe=False)
    r = a.post(E, {"body": "Queue worker handles billing exports nightly", "kind": "fact"})
    found = r.json()["near_duplicates"]
    assert 0 < len(found) <= 20
    assert Relation.objects.count() == len(found)


def test_a_claim_is_verified_before_anything_acts_on_it(a):
    similar = add_via_api(a, "Releases are cut on Tuesdays by the platform team")
    unrelated = add_via_api(a, "Tabs in Makefiles")
    r = a.post(
        E,
        {
            "body": "Releases are cut on Tuesdays by the release team",
            "kind": "fact",
            "near_duplicate_of": similar["entry_id"],
        },
    )
    # Jaccard over stemmed tokens: "release" and "releases" are one term, 8 of 9 shared.
    assert r.json()["near_duplicates"] == [
        {
            "entry_id": similar["entry_id"],
            "score": 0.8889,
            "relation": "near_duplicate_of",
            "method": "lexical",
            "claimed": True,
        }
    ]
    # A claim that the server cannot confirm is not acted on: no relation, no proposal.
    r = a.post(
        E,
        {
            "body": "The coverage gate is 85% on changed lines",
            "kind": "constraint",
            "near_duplicate_of": unrelated["entry_id"],
        },
    )
    assert r.status_code == 201 and r.json()["near_duplicates"] == []
    r = a.post(E, {"body": "Go is used", "kind": "fact", "near_duplicate_of": "e_unknown"})
    assert r.status_code == 201 and r.json()["near_duplicates"] == []
    assert Relation.objects.count() == 1


def test_entries_above_the_writer_clearance_are_never_reported(api, a):
    high = api.as_(make_key("ops", "agent", clearance="restricted"))
    add_via_api(high, "Incident 42 root cause was the HR system", sensitivity="restricted")
    r = a.post(E, {"body": "Incident 42 root cause was the HR system.", "kind": "fact"})
    assert r.status_code == 201
    assert r.json()["near_duplicates"] == [] and "proposal" not in r.json()
    assert Relation.objects.count() == 0


def test_the_write_proceeds_even_when_the_proposal_is_refused(a, monkeypatch):
    from proposals.actions import system
    from proposals.exceptions import NoopRewrite

    def refuse(**kwargs):
        raise NoopRewrite()

    monkeypatch.setattr(system, "submit_in_transaction", refuse)
    old = add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    r = a.post(E, {"body": "Use PostgreSQL advisory locks for leader election.", "kind": "fact"})
    assert r.status_code == 201, r.text
    assert r.json()["near_duplicates"][0]["entry_id"] == old["entry_id"]
    assert "proposal" not in r.json()
    assert Proposal.objects.count() == 0 and Relation.objects.count() == 1


def test_each_duplicate_add_files_its_own_pair(a):
    old = add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    first = a.post(
        E, {"body": "Use PostgreSQL advisory locks for leader election.", "kind": "fact"}
    )
    second = a.post(
        E, {"body": "Use PostgreSQL advisory locks, for leader election", "kind": "fact"}
    )
    assert first.json()["proposal"] != second.json()["proposal"]
    targets = {p.payload["target"]["entry_id"] for p in Proposal.objects.all()}
    assert targets <= {old["entry_id"], first.json()["entry_id"]}
    assert Proposal.objects.filter(status="pending").count() == 2


def test_with_an_embedding_provider_similarity_is_cosine(a, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    old = add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    r = a.post(E, {"body": "Use PostgreSQL advisory locks for leader election.", "kind": "fact"})
    found = r.json()["near_duplicates"]
    assert found[0]["entry_id"] == old["entry_id"] and found[0]["score"] >= 0.99
    assert Relation.objects.get().evidence == [{"method": "cosine", "claimed": False}]
    proposal = a.get(f"{P}/{r.json()['proposal']}").json()
    assert proposal["verification"]["similarity_method"] == "cosine"


def test_a_failing_listener_leaves_the_write_and_the_other_listeners(a, monkeypatch):
    """The listeners run after the add committed, each in its own transaction: a database error
    in one neither undoes the write nor stops the consolidation proposal of the next."""
    from django.db import connection

    from memory import effects

    def broken(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")

    listeners = effects.entry_admitted._listeners
    monkeypatch.setattr(effects.entry_admitted, "_listeners", [broken, *listeners])
    add_via_api(a, "Use PostgreSQL advisory locks for leader election")
    r = a.post(E, {"body": "Use PostgreSQL advisory locks for leader election.", "kind": "fact"})
    assert r.status_code == 201, r.text
    assert Proposal.objects.get(pk=r.json()["proposal"]).kind == "consolidation"
    assert Revision.objects.count() == 2
