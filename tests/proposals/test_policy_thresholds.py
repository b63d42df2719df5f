"""A policy's similarity thresholds are per method.

A number (``tau_same``, ``tau_similar``, ``jobs.<job>.threshold``, and the near-duplicate
pass's ``jobs.near_duplicates.min_subject``) is the threshold of the
Memory's configured similarity — cosine with an embedding provider — and judges only the pairs
that similarity scores: a pair with a text the model cannot read (Korean, Thai) is scored by
words and judged by the lexical defaults, never by a number tuned for cosine. An object
``{"cosine": x, "lexical": y}`` sets each method.

The provider here is the hashing one declaring the Latin script, as all-MiniLM-L6-v2 does: it
reads English and not Korean or Thai, with no model to load.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from memory import actions, maintenance
from memory.actors import Actor
from memory.dedupe import DEFAULT_THRESHOLDS, lexical_similarity, thresholds
from memory.embeddings import HashingProvider
from memory.exceptions import ValidationFailed
from memory.models import Memory, Relation
from proposals.actions import submit_proposal
from proposals.kinds.base import Submission
from proposals.models import Proposal
from proposals.passes import near_duplicates, promotion
from tests.factories import remember


class LatinHashingProvider(HashingProvider):
    """The hashing provider reading Latin letters only (the model's declaration)."""

    scripts = frozenset({"LATIN"})


LATIN_PROVIDER = f"{__name__}.LatinHashingProvider"
LEXICAL_SAME, LEXICAL_SIMILAR = DEFAULT_THRESHOLDS["lexical"]

#: "The team meets every Monday morning" / "… every Friday evening": Jaccard 0.59.
KO_RELATED = ("팀은 매주 월요일 아침에 모입니다.", "팀은 매주 금요일 저녁에 모입니다.")
#: "… every Monday morning" / "… every Monday morning in the meeting room": Jaccard 0.74.
KO_RESTATED = ("팀은 매주 월요일 아침에 모입니다.", "팀은 매주 월요일 아침에 회의실에서 모입니다.")
#: "… meets briefly at headquarters" / "… at length in the meeting room": Jaccard 0.65, the
#: subjects overlapping 0.67 (containment), no slot with two values.
KO_TWO_PLACES = (
    "팀은 매주 월요일 아침에 본사에서 짧게 모입니다.",
    "팀은 매주 월요일 아침에 회의실에서 길게 모입니다.",
)
#: A restatement in Thai sharing its words: Jaccard 0.86.
TH_RESTATED = ("ทีมประชุมทุกเช้าวันจันทร์", "ทีมประชุมกันทุกเช้าวันจันทร์")


@pytest.fixture
def latin_model(settings) -> None:
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": LATIN_PROVIDER}


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


def set_policy(memory: Memory, **policy: Any) -> Memory:
    founder = Actor.for_user(User.objects.get(username="founder"))
    return actions.update_memory_policy(memory, actor=founder, policy=policy)


def found(result: Any) -> list[tuple[str, str]]:
    return [(d["relation"], d["method"]) for d in result.near_duplicates]


# --- The thresholds ------------------------------------------------------------------------------


def test_a_number_is_the_configured_similaritys_threshold(memory, settings):
    memory.policy = {"tau_same": 0.7, "tau_similar": 0.3}
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": LATIN_PROVIDER}
    assert thresholds(memory, "cosine") == (0.7, 0.3)
    assert thresholds(memory, "lexical") == DEFAULT_THRESHOLDS["lexical"]
    assert thresholds(memory) == (0.7, 0.3)
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": None}
    assert thresholds(memory, "lexical") == (0.7, 0.3)
    assert thresholds(memory, "cosine") == DEFAULT_THRESHOLDS["cosine"]


def test_an_object_sets_each_method(memory, settings):
    memory.policy = {"tau_same": {"cosine": 0.8, "lexical": 0.95}, "tau_similar": {"lexical": 0.5}}
    for provider in (LATIN_PROVIDER, None):
        settings.STEWARD_EMBEDDINGS = {"PROVIDER": provider}
        assert thresholds(memory, "cosine") == (0.8, DEFAULT_THRESHOLDS["cosine"][1])
        assert thresholds(memory, "lexical") == (0.95, 0.5)
    # tau_similar is never above tau_same, per method.
    memory.policy = {"tau_same": {"lexical": 0.5}, "tau_similar": {"lexical": 0.7, "cosine": 0.9}}
    assert thresholds(memory, "lexical") == (0.5, 0.5)
    assert thresholds(memory, "cosine") == (DEFAULT_THRESHOLDS["cosine"][0],) * 2


# --- At add time ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("latin_model")
def test_a_cosine_tuned_tau_similar_leaves_pairs_scored_by_words_at_the_lexical_default(
    memory, agent
):
    a, b = KO_RELATED
    assert 0.35 <= lexical_similarity(a, b) < LEXICAL_SIMILAR
    memory = set_policy(memory, tau_similar=0.35)
    remember(memory, agent.actor, a)
    assert remember(memory, agent.actor, b).near_duplicates == []
    assert not Relation.objects.filter(memory=memory).exists()


@pytest.mark.usefixtures("latin_model")
def test_a_cosine_tuned_tau_same_files_no_consolidation_for_a_pair_scored_by_words(memory, agent):
    a, b = KO_RESTATED
    assert 0.7 <= lexical_similarity(a, b) < LEXICAL_SAME
    memory = set_policy(memory, tau_same=0.7)
    remember(memory, agent.actor, a)
    again = remember(memory, agent.actor, b)
    assert found(again) == [("near_duplicate_of", "lexical")]
    assert not Proposal.objects.filter(memory=memory, kind="consolidation").exists()


@pytest.mark.usefixtures("latin_model")
def test_the_lexical_key_of_an_object_judges_pairs_scored_by_words(memory, agent):
    memory = set_policy(
        memory, tau_same={"lexical": 0.7}, tau_similar={"lexical": 0.5, "cosine": 0.3}
    )
    remember(memory, agent.actor, KO_RESTATED[0])
    assert found(remember(memory, agent.actor, KO_RESTATED[1])) == [("duplicate_of", "lexical")]
    (p,) = Proposal.objects.filter(memory=memory, kind="consolidation")
    assert "lexical tau_same 0.7" in p.rationale


# --- The passes ----------------------------------------------------------------------------------


def clusters(run: Any, reason: str) -> list[dict[str, Any]]:
    return [i for i in run.items if i["reason"] == reason]


@pytest.mark.usefixtures("latin_model")
def test_a_near_duplicate_number_is_the_cosine_threshold_with_the_model(memory, agent, system):
    entries = {remember(memory, agent.actor, t, dedupe=False).entry.uid for t in TH_RESTATED}
    memory = set_policy(memory, jobs={"near_duplicates": {"threshold": 0.9}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert (r.parameters["method"], r.parameters["threshold"]) == ("cosine", 0.9)
    assert r.parameters["unread_pairs"]["threshold"] == LEXICAL_SIMILAR
    (item,) = clusters(r, "near_duplicate_cluster")
    assert set(item["entries"]) == entries
    assert (item["inputs"]["method"], item["inputs"]["threshold"]) == ("lexical", LEXICAL_SIMILAR)

    memory = set_policy(memory, jobs={"near_duplicates": {"threshold": {"lexical": 0.9}}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert r.parameters["threshold"] == near_duplicates.COSINE_THRESHOLD
    assert r.parameters["unread_pairs"]["threshold"] == 0.9
    assert clusters(r, "near_duplicate_cluster") == []


@pytest.mark.usefixtures("latin_model")
def test_a_near_duplicate_min_subject_is_per_method_as_its_threshold(memory, agent, system):
    # A number tuned for the model's pairs (0.9) left the pairs scored by words refused too.
    entries = {remember(memory, agent.actor, t, dedupe=False).entry.uid for t in KO_TWO_PLACES}
    memory = set_policy(memory, jobs={"near_duplicates": {"min_subject": 0.9}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert r.parameters["min_subject"] == 0.9
    assert r.parameters["unread_pairs"]["min_subject"] == near_duplicates.DEFAULT_MIN_SUBJECT
    # Two places and two durations are two facts, whatever the subject threshold: never merged.
    assert clusters(r, "near_duplicate_cluster") == [] and len(entries) == 2
    assert r.counts["pairs_not_restatements"] >= 1

    memory = set_policy(memory, jobs={"near_duplicates": {"min_subject": {"lexical": 0.9}}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert r.parameters["min_subject"] == near_duplicates.COSINE_MIN_SUBJECT
    assert r.parameters["unread_pairs"]["min_subject"] == 0.9
    assert clusters(r, "near_duplicate_cluster") == []


def test_without_the_model_a_near_duplicate_min_subject_number_judges_pairs_by_words(
    memory, agent, system
):
    for t in KO_TWO_PLACES:
        remember(memory, agent.actor, t, dedupe=False)
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    # Each says something the other does not (another place, another length): not merged.
    assert clusters(r, "near_duplicate_cluster") == []
    assert r.counts["pairs_not_restatements"] >= 1
    memory = set_policy(memory, jobs={"near_duplicates": {"min_subject": 0.9}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert (r.parameters["method"], r.parameters["min_subject"]) == ("lexical", 0.9)
    assert clusters(r, "near_duplicate_cluster") == []


def test_without_the_model_a_near_duplicate_number_is_the_lexical_threshold(memory, agent, system):
    for t in TH_RESTATED:
        remember(memory, agent.actor, t, dedupe=False)
    memory = set_policy(memory, jobs={"near_duplicates": {"threshold": 0.9}})
    r = maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=True)
    assert (r.parameters["method"], r.parameters["threshold"]) == ("lexical", 0.9)
    assert clusters(r, "near_duplicate_cluster") == []


def notes(memory: Memory, actor: Actor) -> set[str]:
    return {
        remember(
            memory, actor, t, kind="working_note", tier="session", session_id=f"s-{i}", dedupe=False
        ).entry.uid
        for i, t in enumerate(TH_RESTATED)
    }


@pytest.mark.usefixtures("latin_model")
def test_a_promotion_number_is_the_cosine_threshold_with_the_model(memory, agent, system):
    uids = notes(memory, agent.actor)
    memory = set_policy(memory, jobs={"promotion": {"threshold": 0.95}})
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert (r.parameters["method"], r.parameters["threshold"]) == ("cosine", 0.95)
    assert r.parameters["unread_pairs"]["threshold"] == promotion.DEFAULT_THRESHOLD
    (item,) = clusters(r, "recurring_theme")
    assert set(item["entries"]) == uids
    assert item["inputs"]["method"] == "lexical"
    assert item["inputs"]["threshold"] == promotion.DEFAULT_THRESHOLD

    memory = set_policy(memory, jobs={"promotion": {"threshold": {"lexical": 0.95, "cosine": 0.5}}})
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True)
    assert r.parameters["threshold"] == 0.5
    assert r.parameters["unread_pairs"]["threshold"] == 0.95
    assert clusters(r, "recurring_theme") == []


# --- A proposal's verification -------------------------------------------------------------------


@pytest.mark.usefixtures("latin_model")
def test_a_consolidation_scored_by_words_is_checked_against_the_lexical_tau_similar(memory, agent):
    a, b = KO_RELATED
    assert 0.35 <= lexical_similarity(a, b) < LEXICAL_SIMILAR
    memory = set_policy(memory, tau_similar=0.35)
    target = remember(memory, agent.actor, a, dedupe=False)
    other = remember(memory, agent.actor, b, dedupe=False)
    data = {
        "memory": memory.slug,
        "kind": "consolidation",
        "rationale": "The same meeting.",
        "target": {"entry_id": target.entry.uid, "version": 1},
        "redundant": [{"entry_id": other.entry.uid, "version": 1}],
        "body": f"{a} {b}",
    }
    filed = submit_proposal(actor=agent.actor, submission=Submission.of("consolidation", data))
    verification = filed.proposal.verification
    assert verification["similarity_method"] == "lexical"
    (check,) = [c for c in verification["checks"] if c["code"] == "similarity"]
    assert check["status"] == "warn"
    assert f"below lexical tau_similar {LEXICAL_SIMILAR}" in check["message"]


# --- The policy cleaner --------------------------------------------------------------------------

BAD = [
    ({"tau_same": {"jaccard": 0.9}}, "policy.tau_same.jaccard"),
    ({"tau_similar": {"cosine": 1.5}}, "policy.tau_similar.cosine"),
    ({"tau_similar": {"lexical": "0.5"}}, "policy.tau_similar.lexical"),
    ({"tau_same": [0.9, 0.85]}, "policy.tau_same"),
    ({"tau_same": True}, "policy.tau_same"),
    (
        {"jobs": {"near_duplicates": {"threshold": {"bm25": 0.5}}}},
        "policy.jobs.near_duplicates.threshold.bm25",
    ),
    (
        {"jobs": {"promotion": {"threshold": {"lexical": -0.1}}}},
        "policy.jobs.promotion.threshold.lexical",
    ),
    ({"jobs": {"promotion": {"threshold": 2}}}, "policy.jobs.promotion.threshold"),
    (
        {"jobs": {"near_duplicates": {"min_subject": {"bm25": 0.5}}}},
        "policy.jobs.near_duplicates.min_subject.bm25",
    ),
    (
        {"jobs": {"near_duplicates": {"min_subject": 1.5}}},
        "policy.jobs.near_duplicates.min_subject",
    ),
    # The contradiction pass's subject containment is one number, whatever scored the pair.
    (
        {"jobs": {"contradictions": {"min_subject": {"lexical": 0.5}}}},
        "policy.jobs.contradictions.min_subject",
    ),
]


@pytest.mark.parametrize(("policy", "field"), BAD)
def test_the_cleaner_refuses_a_bad_threshold(policy, field):
    with pytest.raises(ValidationFailed) as exc:
        actions.clean_policy(policy)
    assert list(exc.value.details) == [field]


def test_the_cleaner_keeps_numbers_and_objects():
    policy = {
        "tau_same": 0.8,
        "tau_similar": {"cosine": 0.3, "lexical": 0.55},
        "jobs": {
            "near_duplicates": {"threshold": {"lexical": 0.7}, "min_subject": {"cosine": 0.2}},
            "promotion": {"threshold": 1},
            "contradictions": {"min_subject": 0.8},
        },
    }
    assert actions.clean_policy(policy) == policy
    assert actions.clean_policy({"tau_same": {}}) == {"tau_same": {}}


def test_a_bad_threshold_object_is_refused_over_rest(api, reviewer):
    for policy, field in BAD[:2] + BAD[5:6]:
        r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": policy})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid" and list(error["details"]) == [field]
    assert api.as_(reviewer).get("/api/v1/memories/acme").json()["policy"] == {}
    good = {"tau_same": {"cosine": 0.8, "lexical": 0.95}}
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": good})
    assert r.status_code == 200, r.text
    assert api.as_(reviewer).get("/api/v1/memories/acme").json()["policy"] == good


def test_a_bad_threshold_object_is_refused_on_the_replay_page(client, reviewer, memory):
    client.login(username="rita", password="pw-rita-123")
    url = f"/memories/{memory.slug}/replay/"
    policy = '{"tau_similar": {"jaccard": 0.5}}'
    bad = client.get(url, {"run": "1", "policy": policy, "queries": "standup"})
    assert bad.status_code == 422 and b"policy.tau_similar.jaccard" in bad.content
