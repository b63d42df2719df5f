"""The maintenance passes that file proposals (DESIGN §8): near-duplicates, contradictions,
promotion and capacity. For each: found once, a rerun files nothing new, a dry run writes
nothing but its run, negative controls, protections; plus the job lock and the REST endpoints.

Runs on both backends (the suite runs on SQLite and on PostgreSQL).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from memory import actions, maintenance, vectors
from memory.actors import Actor
from memory.dedupe import lexical_similarity
from memory.embeddings import calibration
from memory.exceptions import MaintenanceRunning
from memory.models import (
    AuditEvent,
    Entry,
    Head,
    LifecycleProjection,
    MaintenanceRun,
    Memory,
    Relation,
    RelationKind,
    Revision,
)
from proposals import bodies
from proposals.models import Proposal, ProposalStatus
from proposals.passes import base as passes_base
from proposals.passes.contradictions import is_contradiction
from proposals.passes.near_duplicates import COSINE_THRESHOLD, default_parameters, pair_edge
from proposals.requests import submit_request
from review.actions import approve_proposal, lost_detail_names
from tests.factories import remember

REPO = [{"source": "repo", "ref": "docs/ops.md"}]


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


def enable(memory: Memory, *jobs: str, **policy: Any) -> Memory:
    """Turn jobs on in the Memory's policy (every job is off by default)."""
    memory.refresh_from_db()
    current = dict(memory.policy or {})
    cfg = dict(current.get("jobs") or {})
    for job in jobs:
        cfg[job] = {**cfg.get(job, {}), "enabled": True}
    current.update(policy)
    current["jobs"] = {**cfg, **(policy.get("jobs") or {})}
    founder = Actor.for_user(User.objects.get(username="founder"))
    return actions.update_memory_policy(memory, actor=founder, policy=current)


def add(memory: Memory, actor: Actor, body: str, kind: str = "fact", **extra: Any) -> Entry:
    extra.setdefault("dedupe", False)
    return remember(memory, actor, body, kind=kind, **extra).entry


def snapshot(memory: Memory) -> tuple[Any, ...]:
    """Everything a dry run must leave alone."""
    return (
        list(Head.objects.filter(memory=memory).order_by("pk").values_list()),
        list(LifecycleProjection.objects.filter(memory=memory).order_by("pk").values_list()),
        list(Revision.objects.filter(memory=memory).order_by("pk").values_list()),
        list(Relation.objects.filter(memory=memory).order_by("pk").values_list()),
        list(Proposal.objects.filter(memory=memory).order_by("pk").values_list("pk", "status")),
    )


def run(memory: Memory, job: str, actor: Actor, *, dry_run: bool) -> MaintenanceRun:
    return maintenance.run_job(memory, actor=actor, job=job, dry_run=dry_run)


def filed(memory: Memory, kind: str) -> list[Proposal]:
    return list(Proposal.objects.filter(memory=memory, kind=kind).order_by("pk"))


# --- Pure helpers ------------------------------------------------------------------------------


def test_value_differences_see_a_changed_time_but_not_an_extra_detail():
    old = "The daily standup is at 9:30"
    new = "Update: the daily standup moved from 9:30 to 10:00"
    assert bodies.value_differences(new, old) == {"time": [["10:00"], []]}
    assert bodies.value_differences("Deploy target is eu-2", "Deploy target is eu-2 (ArgoCD)") == {}


def test_subject_similarity_ignores_values_and_function_words():
    assert bodies.subject_similarity(
        "Update: the daily standup moved from 9:30 to 10:00", "The daily standup is at 9:30"
    ) == pytest.approx(1.0)
    assert bodies.subject_similarity("The daily standup is at 9:30", "The retro is at 16:00") == 0


def test_a_subject_word_inside_a_value_still_names_the_subject():
    """ "staging" is cut out of "staging-2.helios.dev" only: it stays the subject of both, so the
    changed host is a contradiction (it was missed: the second body had no subject left)."""
    old = "The staging server is staging-1.helios.dev."
    new = "Staging moved to staging-2.helios.dev."
    assert bodies.subject_terms(old) == {"staging", "server"}
    assert bodies.subject_terms(new) == {"staging"}
    found = is_contradiction(new, old, min_similarity=0.2, min_subject=0.75)
    assert found is not None
    assert found["values"] == {"identifier": [["staging-2.helios.dev"], ["staging-1.helios.dev"]]}


def test_counts_written_out_are_two_values_of_one_slot():
    old, new = "The sprint length is two weeks.", "The sprint length is three weeks."
    assert bodies.value_differences(new, old) == {"number": [["three"], ["two"]]}
    found = is_contradiction(new, old, min_similarity=0.2, min_subject=0.75)
    assert found is not None and found["values"] == {"number": [["three"], ["two"]]}


def test_values_and_subjects_are_the_analyzers_words_in_japanese_korean_and_russian():
    """A changed weekday or count is a contradiction in languages written without spaces (the
    whole sentence was one identifier value, and the subject was left empty)."""

    def contradiction(new: str, old: str) -> dict[str, Any] | None:
        found = is_contradiction(new, old, min_similarity=0.2, min_subject=0.75)
        return found and found["values"]

    assert contradiction(
        "チームの定例会議は毎週木曜日の10時から。", "チームの定例会議は毎週水曜日の10時から。"
    ) == {"date": [["thursday"], ["wednesday"]]}
    assert contradiction(
        "배치 작업의 재시도 횟수는 5회로 바뀌었다.", "배치 작업의 재시도 횟수는 3회이다."
    ) == {"number": [["5회"], ["3회"]]}
    assert contradiction(
        "Планёрка команды проходит каждый четверг в 10:00.",
        "Планёрка команды проходит каждую среду в 10:00.",
    ) == {"date": [["thursday"], ["wednesday"]]}
    assert contradiction("API gatewayのtimeoutは60秒に変更", "API gatewayのtimeoutは30秒") == {
        "number": [["60秒"], ["30秒"]]
    }
    # Another subject with its own value: no conflict.
    assert contradiction("開発環境のタイムアウトは10秒。", "APIのタイムアウトは30秒。") is None
    # The same fact with the same values: a restatement the near-duplicate pass may merge.
    a, b = "APIのタイムアウトは30秒に設定されている。", "APIのタイムアウトは30秒に設定している。"
    assert bodies.slot_differences(a, b) == {}
    assert bodies.subject_similarity(a, b) >= 0.9
    assert pair_edge(a, b, lexical_similarity(a, b), threshold=0.6, min_subject=0.6)[0] is None


def test_a_counter_after_a_space_restates_the_value_and_a_cjk_url_part_is_a_value():
    """ "30 秒" is "30秒" (the number alone was another value: a conflict between restatements),
    and a URL differing in its CJK part only gives its slot another value (it was cut there)."""
    spaced, unspaced = "APIのタイムアウトは30 秒", "APIのタイムアウトは30秒"
    assert bodies.value_differences(spaced, unspaced) == {}
    assert is_contradiction(spaced, unspaced, min_similarity=0.2, min_subject=0.75) is None
    assert bodies.value_differences("APIのタイムアウトは60 秒", unspaced) == {
        "number": [["60 秒"], ["30秒"]]
    }
    tokyo = "チームのwikiはhttps://ja.wikipedia.org/wiki/東京を参照。"
    osaka = "チームのwikiはhttps://ja.wikipedia.org/wiki/大阪を参照。"
    assert bodies.value_differences(osaka, tokyo) == {
        "url": [["https://ja.wikipedia.org/wiki/大阪"], ["https://ja.wikipedia.org/wiki/東京"]]
    }
    assert bodies.value_differences(
        "設定は/srv/データ/本番.yamlにある。", "設定は/srv/データ/開発.yamlにある。"
    ) == {"path": [["/srv/データ/本番.yaml"], ["/srv/データ/開発.yaml"]]}


def test_two_urls_ending_in_other_weekdays_are_two_values_not_two_days():
    friday = "祝日の一覧はhttps://ja.wikipedia.org/wiki/金曜日を参照。"
    saturday = "祝日の一覧はhttps://ja.wikipedia.org/wiki/土曜日を参照。"
    assert bodies.value_differences(friday, saturday) == {
        "url": [["https://ja.wikipedia.org/wiki/金曜日"], ["https://ja.wikipedia.org/wiki/土曜日"]]
    }
    # The same URL is one value however it is written around.
    assert not bodies.value_differences(friday, "祝日の一覧は https://ja.wikipedia.org/wiki/金曜日")


def test_one_character_of_another_value_in_cjk_is_a_swapped_slot():
    assert bodies.word_swap("エディタは深色テーマを使う。", "エディタは浅色テーマを使う。") == [
        ["深"],
        ["浅"],
    ]
    assert bodies.word_swap("에디터는 어두운 테마를 사용한다.", "에디터는 밝은 테마를 사용한다.")
    # An ending that changes is no value.
    assert not bodies.word_swap(
        "APIのタイムアウトは30秒に設定されている。", "APIのタイムアウトは30秒に設定している。"
    )


def test_a_word_swapped_in_one_slot_or_a_negation_is_a_different_value():
    # Worded alike but for one slot: another value written as words, or the slot negated.
    assert bodies.word_swap("The user prefers dark mode.", "The user prefers light mode.") == [
        ["dark"],
        ["light"],
    ]
    assert bodies.word_swap(
        "Deploys are allowed on Fridays.", "Deploys are not allowed on Fridays."
    )
    assert bodies.word_swap(
        "New feature flags are on by default.", "New feature flags are off by default."
    )
    assert bodies.word_swap(
        "The staging cluster has 3 nodes.", "The production cluster has 3 nodes."
    )
    assert bodies.slot_differences(
        "The default branch is main.", "The default branch is master."
    ) == {"words": [["main"], ["master"]]}


@pytest.mark.parametrize(
    ("plain", "negated"),
    [
        ("本番環境ではキャッシュを使う。", "本番環境ではキャッシュを使わない。"),
        ("本番環境ではキャッシュを使います。", "本番環境ではキャッシュを使いません。"),
        ("金曜日はデプロイする。", "金曜日はデプロイしない。"),
        ("ステージングでは再起動できる。", "ステージングでは再起動できない。"),
        ("本番ではデバッグログを出力している。", "本番ではデバッグログを出力していない。"),
        ("本番ではキャッシュを確認して再起動する。", "本番ではキャッシュを確認せず再起動する。"),
        ("캐시를 사용한다.", "캐시를 사용하지 않는다."),
        ("프로덕션에서는 캐시를 사용합니다.", "프로덕션에서는 캐시를 사용하지 않습니다."),
        ("금요일에는 배포를 한다.", "금요일에는 배포를 안 한다."),
        ("스테이징에서는 디버거를 쓴다.", "스테이징에서는 디버거를 못 쓴다."),
        ("스테이징 서버에는 캐시가 있다.", "스테이징 서버에는 캐시가 없다."),
        # A verb whose negative stem is its one kanji, an adjective's く form, じゃない, 아니다.
        ("本番のログは毎日見る。", "本番のログは毎日見ない。"),
        ("金曜日は担当者が来る。", "金曜日は担当者が来ない。"),
        ("本番では手動で再起動出来る。", "本番では手動で再起動出来ない。"),
        ("ステージングの応答は速い。", "ステージングの応答は速くない。"),
        ("本番のエラーは少ない。", "本番のエラーは少なくない。"),
        ("このキャッシュは本番用だ。", "このキャッシュは本番用じゃない。"),
        ("이 서버는 프로덕션이다.", "이 서버는 프로덕션이 아니다."),
        ("이 서버는 프로덕션입니다.", "이 서버는 프로덕션이 아닙니다."),
    ],
)
def test_a_japanese_or_korean_negation_is_a_different_value(plain, negated):
    # As "allowed" / "not allowed": read before, the two were one fact (a merge).
    assert bodies.word_swap(plain, negated)
    assert bodies.slot_differences(negated, plain)


@pytest.mark.parametrize(
    "text",
    [
        "毎日見ない",
        "担当者が来ない",
        "再起動出来ない",
        "寝なかった",
        "応答は速くない",
        "エラーは少なくない",
        "新しくなければ",
        "よくない",
        "本番用じゃない",
        "프로덕션이 아니다",
        "프로덕션이 아닙니다",
        "프로덕션이 아닌 서버",
        "캐시가 아니라 디스크다",
        "프로덕션이 아닐 때만 배포한다",
        "프로덕션이 아니어서 캐시를 쓴다",
        "프로덕션이 아니지만 캐시를 쓴다",
        "프로덕션이 아닌데 캐시를 쓴다",
        "프로덕션이 아니예요",
        "ログを見なくてもいい",
        "本番じゃなかったので問題ない",
        "本番じゃないですから触っても大丈夫です",
        "本番じゃなく検証環境で実行する",
        "障害は起こり得ない",
        "설정이 아냐",
    ],
)
def test_each_form_on_the_list_is_read_as_one_negation(text):
    assert bodies.cjk_negations(text) == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # An adjective ending in ない ("dangerous") is no negation.
        ("この設定を変えるのは危ない。", "この設定を変えるのは危なかった。"),
        # An obligation (two negations) restates the fact; "nothing but" is no negation.
        ("本番ではキャッシュを使う。", "本番ではキャッシュを使わなければならない。"),
        ("障害時は手動で再起動する。", "障害時は手動で再起動するしかない。"),
        # 없이 in 끊임없이 ("ceaselessly") is no predicate.
        ("배치는 실행된다.", "배치는 끊임없이 실행된다."),
    ],
)
def test_words_that_only_look_negated_are_no_negation(a, b):
    assert bodies.cjk_negations(a) % 2 == bodies.cjk_negations(b) % 2


@pytest.mark.parametrize(
    "text",
    [
        "少ない",
        "危ない",
        "すくない",
        "あぶない",
        "せつない",
        "もったいない",
        "間違いない",
        "するしかない",
        "すみません",
        "まず確認する",
        "必ず使う",
        "相変わらず遅い",
        "動くはずだ",
        "今はずっと使う",
        "집 안에 있다",
        "못을 박다",
        "끊임없이 실행된다",
        "캐시를 없앤다",
        "안전하다",
        "少なくなった",
        "高くなった",
        "少なくとも",
        "来なさい",
        "書くなら",
        "아니면 내일 한다",
        "아니요",
        # "Have no choice but to", "unavoidable": an obligation, as 使わなければならない is.
        "使わざるを得ない",
        "やむを得ない",
        # "Without bias / detection / notice": a noun's なく.
        "偏見なく評価する",
        "検出なく",
        "届出なく",
        # "Not only … but also", and a rhetorical "isn't it".
        "스테이징뿐만 아니라 프로덕션에서도 쓴다",
        "운영뿐만이 아니라 개발에서도 쓴다",
        "운영만 아니라 개발에서도 쓴다",
        "재시작할 수밖에 없다",
        "本番だけじゃなく開発でも使う",
        "この設定は便利じゃないですか",
    ],
)
def test_no_negation_is_read_in_adjectives_or_words_that_hold_its_letters(text):
    assert bodies.cjk_negations(text) == 0


def test_a_rewording_a_linking_verb_or_an_added_detail_is_no_swap():
    # A rewording around a shared value, not one slot with two values.
    assert not bodies.word_swap(
        "Production logs go to Datadog.", "We send prod logging to Datadog."
    )
    # "uses" / "talks to" only link the app to the same gateway.
    assert not bodies.word_swap(
        "The mobile app uses the GraphQL gateway at https://api.acme.dev/graphql",
        "The mobile app talks to the GraphQL gateway at https://api.acme.dev/graphql",
    )
    # A detail one side adds, the same terms inflected, and nothing in common.
    assert not bodies.word_swap("Deploy target is eu-2", "Deploy target is eu-2 via ArgoCD")
    assert not bodies.word_swap(
        "Release notes are due every Friday", "Release notes are due on Fridays"
    )
    assert not bodies.word_swap("Tests must pass before merging.", "No merge until CI is green.")
    assert bodies.slot_differences("Standup is at 9:30.", "Standup is at 10:00.") == {
        "time": [["9:30"], ["10:00"]]
    }


def test_the_pair_rule_takes_a_restatement_below_the_old_floor_and_refuses_a_swapped_value():
    # Cosines of all-MiniLM-L6-v2: a reordered restatement scores under the old 0.8 floor and
    # is taken; the swapped value scores 0.86, over it, and is refused.
    threshold, min_subject = default_parameters(Memory(policy={}), "cosine")
    assert threshold == COSINE_THRESHOLD < 0.7
    refused, edge = pair_edge(
        "Production deploys run every Tuesday at 14:00.",
        "Every Tuesday at 14:00 the production deploys run.",
        0.69,
        threshold=threshold,
        min_subject=min_subject,
    )
    assert refused is None and edge["score"] == 0.69
    refused, _ = pair_edge(
        "The user prefers dark mode.",
        "The user prefers light mode.",
        0.864,
        threshold=threshold,
        min_subject=min_subject,
    )
    assert refused == "pairs_with_different_values"
    # Lexically the subject overlap is still asked: shared values inflate Jaccard.
    assert default_parameters(Memory(policy={}), "lexical") == (0.6, 0.6)


def test_merged_body_keeps_every_detail():
    from proposals.verify import lost_details

    texts = [
        "The build cache lives in s3://acme-cache and is purged on Sundays.",
        "Build cache: s3://acme-cache. Owner is Mara Okafor.",
    ]
    merged = bodies.merged_body(texts)
    assert lost_details([("a", texts[0]), ("b", texts[1])], merged) == []
    assert merged.startswith(texts[0])


def test_merged_body_appends_whole_sentences_never_a_clause_cut_at_a_semicolon():
    texts = [
        "The dev server on port 8000 must be restarted after changing settings.py.",
        "Autoreload missed a settings.py change again; had to restart the dev server.",
    ]
    merged = bodies.merged_body(texts)
    assert merged == f"{texts[0]} {texts[1]}"
    assert ";." not in merged


#: Pairs of a cluster (the more complete body first) whose second body only restates the first.
RESTATEMENTS = {
    # an inflection: "formats" is "format", "caching" is "cache"
    "inflection": (
        "Code formatting is done with ruff format; line length is 100.",
        "Ruff formats the code with a line length of 100.",
    ),
    "inflection, word order": (
        "Celery uses Redis as its broker, and Redis also serves as the cache.",
        "Redis is used for caching and as the Celery broker.",
    ),
    # filler: "once", "again", "same" say nothing about the test
    "filler": (
        "test_checkout_flow is flaky: it fails intermittently on CI with a timeout in the Stripe "
        "mock.",
        "Once again test_checkout_flow fails on CI with the same Stripe mock timeout.",
    ),
    "filler and inflection": (
        "Dana again asked for a summary of the changed files before ending the session.",
        "Dana asks for a summary of changed files at the end of every session.",
    ),
}


@pytest.mark.parametrize("texts", RESTATEMENTS.values(), ids=RESTATEMENTS.keys())
def test_merged_body_appends_no_sentence_that_only_restates(texts):
    """A sentence whose words the merge already has, up to an inflection or a filler word, is
    not appended: the merged body stated the same fact twice."""
    from proposals.verify import lost_details

    merged = bodies.merged_body(list(texts))
    assert merged == texts[0]
    assert lost_details([("a", texts[0]), ("b", texts[1])], merged) == []


#: Pairs whose second body adds a detail and nothing else (its words are all in the first).
NEW_DETAILS = {
    "number": (
        "The production database has read replicas.",
        "The production database has 2 read replicas.",
    ),
    "version": ("The frontend is built with Vite.", "The frontend is built with Vite 5."),
    "host": ("Grafana runs on ops-1.helios.dev.", "Grafana also runs on ops-2.helios.dev."),
    "name": ("The payments service has an owner.", "The payments service owner is Lena Fischer."),
}


@pytest.mark.parametrize("texts", NEW_DETAILS.values(), ids=NEW_DETAILS.keys())
def test_merged_body_appends_a_sentence_with_a_new_detail(texts):
    from proposals.verify import lost_details

    merged = bodies.merged_body(list(texts))
    assert merged == f"{texts[0]} {texts[1]}"
    assert lost_details([("a", texts[0]), ("b", texts[1])], merged) == []


def test_merged_body_appends_a_sentence_with_a_new_content_word():
    texts = [
        "The dev server on port 8000 must be restarted after changing settings.py.",
        "Autoreload misses settings.py changes.",
    ]
    assert bodies.merged_body(texts) == f"{texts[0]} {texts[1]}"


# --- near_duplicates ---------------------------------------------------------------------------


@pytest.fixture
def duplicates(memory, agent):
    a = agent.actor
    return {
        "full": add(memory, a, "The build cache lives in s3://acme-cache and is purged weekly"),
        "short": add(memory, a, "The build cache lives in s3://acme-cache"),
        "owner": add(memory, a, "The build cache lives in s3://acme-cache, owned by Mara Okafor"),
        "other": add(memory, a, "Release notes are written by the on-call engineer"),
        "conflict_a": add(memory, a, "The staging database runs PostgreSQL 15"),
        "conflict_b": add(memory, a, "The staging database runs PostgreSQL 16"),
    }


def test_near_duplicates_dry_run_writes_only_its_run(memory, duplicates, system):
    before = snapshot(memory)
    events = AuditEvent.objects.count()
    r = run(memory, "near_duplicates", system, dry_run=True)
    assert snapshot(memory) == before
    assert AuditEvent.objects.count() == events + 1  # the run's own event
    assert r.counts["would_propose"] == 1 and r.counts["proposals"] == []
    (item,) = [i for i in r.items if i["reason"] == "near_duplicate_cluster"]
    assert set(item["entries"]) == {duplicates[k].uid for k in ("full", "short", "owner")}
    assert item["inputs"]["pairs"] and item["inputs"]["threshold"] == 0.6


def test_a_manual_real_run_of_a_pass_needs_no_job_switch(memory, duplicates, reviewer):
    # jobs.near_duplicates.enabled is the beat schedule's switch: a reviewer's run by hand
    # files its proposal with the schedule off (a proposal changes nothing until approved).
    assert not maintenance.job_enabled(memory.policy or {}, "near_duplicates")
    r = run(memory, "near_duplicates", reviewer.actor, dry_run=False)
    assert len(r.counts["proposals"]) == 1 and len(filed(memory, "consolidation")) == 1
    assert maintenance.due_jobs(memory, timezone.now()) == []  # the schedule stays off


def test_the_contradictions_pass_run_by_hand_with_its_schedule_off_flags_a_correction(
    memory, standup, reviewer
):
    old, new = standup
    assert not maintenance.job_enabled(memory.policy or {}, "contradictions")
    r = run(memory, "contradictions", reviewer.actor, dry_run=False)
    assert r.counts["observed"] == 1
    rel = Relation.objects.get(memory=memory, kind=RelationKind.CONFLICTS_WITH)
    assert (rel.from_entry_id, rel.to_entry_id) == (new.pk, old.pk)
    (p,) = filed(memory, "supersession")
    assert p.payload["old"]["entry_id"] == old.uid


def test_the_near_duplicate_pass_never_proposes_on_a_superseded_entry(memory, agent, reviewer):
    a = agent.actor
    old = add(memory, a, "Production deploys run every Tuesday at 14:00.")
    twin = add(memory, a, "Every Tuesday at 14:00 the production deploys run.")
    successor = add(memory, a, "Production deploys run every Wednesday at 14:00.")
    sup = submit_request(
        actor=a,
        data={
            "memory": memory.slug,
            "kind": "supersession",
            "rationale": "Moved",
            "old": {"entry_id": old.uid, "version": 1},
            "successor": {"entry_id": successor.uid, "version": 1},
        },
    ).proposal
    approve_proposal(sup.pk, actor=reviewer.actor, acknowledge_lost_details=lost_detail_names(sup))
    assert LifecycleProjection.objects.get(entry=old).validity == "superseded"
    r = run(memory, "near_duplicates", reviewer.actor, dry_run=False)
    assert filed(memory, "consolidation") == []
    assert not any(old.uid in i.get("entries", []) for i in r.items)
    assert twin.uid  # the restatement of a superseded fact is left alone too


def test_a_pass_files_nothing_on_an_entry_superseded_since_it_read_it(memory, agent):
    a = agent.actor
    old = add(memory, a, "The deploy target is eu-2", current_state=True)
    new = add(memory, a, "The deploy target is eu-3", current_state=True)
    assert passes_base.not_filable(memory, "consolidation", [old.pk, new.pk]) == []
    actions.forget_entry(memory, actor=a, entry_uid=old.uid, reason="gone")
    assert passes_base.not_filable(memory, "consolidation", [old.pk, new.pk]) == [old.uid]
    # A promotion takes the notes of an ended session (inactive heads).
    assert passes_base.not_filable(memory, "promotion", [old.pk]) == []


def test_near_duplicates_files_one_consolidation_per_cluster_once(memory, duplicates, system):
    enable(memory, "near_duplicates")
    r = run(memory, "near_duplicates", system, dry_run=False)
    (p,) = filed(memory, "consolidation")
    assert r.counts["proposals"] == [p.pk]
    assert p.submitted_by_type == "system" and p.status == ProposalStatus.PENDING
    uids = {t.entry.uid for t in p.targets.all()}
    assert uids == {duplicates[k].uid for k in ("full", "short", "owner")}
    # The target is the most complete member; the merged body keeps every detail.
    assert p.payload["target"]["entry_id"] in {duplicates["full"].uid, duplicates["owner"].uid}
    assert p.verification["lost_details"] == []
    assert "Mara Okafor" in p.payload["body"] and "weekly" in p.payload["body"]
    # Different values (PostgreSQL 15 / 16) are never merged; nothing about the entries changed.
    assert all(
        Head.objects.get(entry=e).state == "active"
        and Head.objects.get(entry=e).version.number == 1
        for e in duplicates.values()
    )
    again = run(memory, "near_duplicates", system, dry_run=False)
    assert again.counts["proposals"] == [] and again.counts["already_proposed"] == 1
    assert len(filed(memory, "consolidation")) == 1


@pytest.mark.semantic
def test_with_the_model_only_paraphrases_make_an_edge(memory, agent, system):
    # The add-time tau_similar with embeddings (0.35) flags related entries; these two score
    # about 0.43 (one subject, two facts) and must not be merged, while the paraphrases pair.
    a = agent.actor
    facts = [
        add(memory, a, "The data team has 5 analysts"),
        add(memory, a, "The data team owns the dbt models"),
    ]
    paraphrases = [
        add(memory, a, "Mara Okafor owns the payments service"),
        add(memory, a, "The payments service is owned by Mara Okafor"),
    ]
    r = run(memory, "near_duplicates", system, dry_run=True)
    assert r.parameters["method"] == "cosine"
    assert r.parameters["threshold"] == calibration().near_duplicate  # the model's own
    clusters = [set(i["entries"]) for i in r.items if i["reason"] == "near_duplicate_cluster"]
    assert clusters == [{e.uid for e in paraphrases}]
    assert not any(facts[0].uid in c for c in clusters)


@pytest.mark.semantic
def test_with_the_model_only_restatements_cluster_never_other_methods_actors_or_values(
    memory, agent, system
):
    # Restatements next to entries on the same subjects with another value, another method or
    # actor, or another fact, which the model scores as high or higher. A restatement in other
    # words ("runs on GitHub Actions" / "ship through GitHub Actions workflows") says things the
    # other does not, as another method does ("applied by the deploy pipeline" / "applied by
    # hand by the on-call engineer"): the pass merges neither.
    a = agent.actor
    groups = [
        [
            add(memory, a, "Production deploys run every Tuesday at 14:00."),
            add(memory, a, "Every Tuesday at 14:00 the production deploys run."),
        ],
        [
            add(memory, a, "Error reports from the mobile app go to Sentry."),
            add(memory, a, "Error reports from the mobile app are sent to Sentry."),
        ],
    ]
    other_words = [
        add(memory, a, "The deploy pipeline runs on GitHub Actions."),
        add(memory, a, "We ship through GitHub Actions workflows."),
        add(memory, a, "Database migrations are applied automatically by the deploy pipeline."),
        add(memory, a, "Database migrations are applied by hand by the on-call engineer."),
    ]
    others = [
        add(memory, a, "Standup is at 9:30."),
        add(memory, a, "Standup is at 10:00."),
        add(memory, a, "The staging DB is db-stage-3."),
        add(memory, a, "The staging cache is redis-2."),
        add(memory, a, "The user prefers dark mode."),
        add(memory, a, "The user prefers light mode."),
        add(memory, a, "Deploys are allowed on Fridays."),
        add(memory, a, "Deploys are not allowed on Fridays."),
    ]
    vectors.backfill()  # what the indexing after each write does: the vector neighbours
    r = run(memory, "near_duplicates", system, dry_run=True)
    clusters = [set(i["entries"]) for i in r.items if i["reason"] == "near_duplicate_cluster"]
    assert sorted(clusters, key=sorted) == sorted(({e.uid for e in g} for g in groups), key=sorted)
    assert not {e.uid for e in others + other_words} & set().union(*clusters)
    assert r.counts["pairs_with_different_values"] >= 3
    assert r.counts["pairs_not_restatements"] >= 1


def test_the_cosine_default_is_never_above_tau_same(memory, system, settings):
    settings.STEWARD_EMBEDDINGS = {"PROVIDER": "memory.embeddings.HashingProvider"}
    r = run(memory, "near_duplicates", system, dry_run=True)
    assert r.parameters["method"] == "cosine" and r.parameters["threshold"] == COSINE_THRESHOLD
    enable(memory, tau_same=0.5)
    r = run(memory, "near_duplicates", system, dry_run=True)
    assert r.parameters["threshold"] == 0.5  # what the add-time check already calls the same


def test_a_policy_threshold_overrides_the_default(memory, duplicates, system):
    enable(memory, jobs={"near_duplicates": {"threshold": 0.95}})
    r = run(memory, "near_duplicates", system, dry_run=True)
    assert r.parameters["threshold"] == 0.95
    # No pair of the fixture reaches 0.95: the cluster the default threshold finds is gone.
    assert not [i for i in r.items if i["reason"] == "near_duplicate_cluster"]


def test_a_rejected_cluster_is_not_filed_again(memory, duplicates, system, reviewer):
    from review.actions import reject_proposal

    enable(memory, "near_duplicates")
    run(memory, "near_duplicates", system, dry_run=False)
    (p,) = filed(memory, "consolidation")
    reject_proposal(p.pk, actor=reviewer.actor, reason="wrong", comment="Different caches")
    again = run(memory, "near_duplicates", system, dry_run=False)
    assert again.counts["proposals"] == [] and len(filed(memory, "consolidation")) == 1


# --- contradictions ----------------------------------------------------------------------------


@pytest.fixture
def standup(memory, agent):
    a = agent.actor
    old = add(memory, a, "The daily standup is at 9:30", current_state=True)
    new = add(
        memory,
        a,
        "Update: the daily standup moved from 9:30 to 10:00",
        current_state=True,
        evidence=REPO,
    )
    return old, new


NEGATIVE_CONTROL = [
    "The daily standup is at 9:30",
    "The weekly retro is at 16:00 on Fridays",
    "The deploy target is eu-2",
    "The staging database runs PostgreSQL 16",
    "Our API rate limit is 600 requests per minute",
    "The on-call rotation has 6 engineers",
    "Release 4.2 ships on 2026-03-01",
    "The build cache lives in s3://acme-cache",
    "The support inbox is answered within 4 hours",
    "The CI runners have 8 GB of memory",
    "Mara Okafor owns the billing service",
    "The office closes at 18:00",
]


def test_contradiction_is_observed_and_a_supersession_proposed(memory, standup, system):
    old, new = standup
    enable(memory, "contradictions")
    r = run(memory, "contradictions", system, dry_run=False)
    assert r.counts["contradictions"] == 1 and r.counts["observed"] == 1
    rel = Relation.objects.get(memory=memory, kind=RelationKind.CONFLICTS_WITH)
    assert (rel.from_entry_id, rel.to_entry_id) == (new.pk, old.pk) and not rel.authoritative
    for e in (old, new):
        assert LifecycleProjection.objects.get(entry=e).validity == "unresolved_conflict"
        assert Head.objects.get(entry=e).state == "active"  # never retires anything itself
    (p,) = filed(memory, "supersession")
    assert p.payload["old"]["entry_id"] == old.uid
    assert p.payload["successor"]["entry_id"] == new.uid
    (item,) = r.items
    assert item["inputs"]["values"] == {"time": [["10:00"], []]} or item["inputs"]["values"]
    again = run(memory, "contradictions", system, dry_run=False)
    assert again.counts.get("observed", 0) == 0 and again.counts["already_observed"] == 1
    assert again.counts["proposals"] == [] and len(filed(memory, "supersession")) == 1
    assert Relation.objects.filter(kind=RelationKind.CONFLICTS_WITH).count() == 1


def test_contradiction_dry_run_writes_only_its_run(memory, standup, system):
    before = snapshot(memory)
    r = run(memory, "contradictions", system, dry_run=True)
    assert snapshot(memory) == before
    assert r.counts["would_observe"] == 1 and r.counts["would_propose"] == 1


def test_a_newer_entry_without_evidence_is_observed_but_not_proposed(memory, agent, system):
    add(memory, agent.actor, "The daily standup is at 9:30", current_state=True)
    add(memory, agent.actor, "The daily standup is at 10:00 now", current_state=True)
    enable(memory, "contradictions")
    r = run(memory, "contradictions", system, dry_run=False)
    assert r.counts["observed"] == 1 and filed(memory, "supersession") == []
    assert r.items[0]["action"] == "observed_only"


def test_unrelated_facts_never_conflict(memory, agent, system):
    for body in NEGATIVE_CONTROL:
        add(memory, agent.actor, body, current_state=True, evidence=REPO)
    enable(memory, "contradictions")
    r = run(memory, "contradictions", system, dry_run=False)
    assert r.counts.get("contradictions", 0) == 0, r.items
    assert not Relation.objects.filter(kind=RelationKind.CONFLICTS_WITH).exists()
    assert filed(memory, "supersession") == []


def test_entries_not_about_current_state_are_not_compared(memory, agent, system):
    add(memory, agent.actor, "The daily standup is at 9:30")
    add(memory, agent.actor, "Update: the daily standup moved from 9:30 to 10:00", evidence=REPO)
    r = run(memory, "contradictions", system, dry_run=True)
    assert r.counts.get("contradictions", 0) == 0


# --- promotion ---------------------------------------------------------------------------------


def wnote(memory: Memory, actor: Actor, body: str, session: str, **extra: Any) -> Entry:
    extra.setdefault("tier", "session")
    return add(memory, actor, body, kind="working_note", session_id=session, **extra)


def test_a_theme_in_two_sessions_is_promoted_once(memory, agent, system):
    a = agent.actor
    n1 = wnote(memory, a, "test_checkout is flaky because of the timezone in CI", "s-1")
    n2 = wnote(memory, a, "test_checkout flaky again: the timezone in CI differs", "s-2")
    actions.end_session(memory, actor=a, session_id="s-1")  # its note is inactive now
    enable(memory, "promotion")
    r = run(memory, "promotion", system, dry_run=False)
    (p,) = filed(memory, "promotion")
    assert r.counts["proposals"] == [p.pk]
    assert {n["entry_id"] for n in p.payload["notes"]} == {n1.uid, n2.uid}
    assert p.payload["target_kind"] == "fact" and p.verification["lost_details"] == []
    again = run(memory, "promotion", system, dry_run=False)
    assert again.counts["proposals"] == [] and len(filed(memory, "promotion")) == 1


def test_notes_of_one_session_are_never_promoted(memory, agent, system):
    a = agent.actor
    wnote(memory, a, "test_checkout is flaky because of the timezone in CI", "s-1")
    wnote(memory, a, "test_checkout flaky again: the timezone in CI differs", "s-1")
    wnote(memory, a, "The linter config lives in pyproject.toml", "s-2")
    enable(memory, "promotion")
    r = run(memory, "promotion", system, dry_run=False)
    assert filed(memory, "promotion") == [] and r.counts["proposals"] == []


def test_ending_a_session_runs_the_promotion_pass(
    memory, agent, django_capture_on_commit_callbacks
):
    a = agent.actor
    wnote(memory, a, "test_checkout is flaky because of the timezone in CI", "s-1")
    actions.end_session(memory, actor=a, session_id="s-1")  # pass off: nothing runs
    assert not MaintenanceRun.objects.filter(job="promotion").exists()
    enable(memory, "promotion")
    wnote(memory, a, "test_checkout flaky again: the timezone in CI differs", "s-2")
    with django_capture_on_commit_callbacks(execute=True):
        actions.end_session(memory, actor=a, session_id="s-2")
    (r,) = MaintenanceRun.objects.filter(job="promotion")
    assert r.actor_type == "system" and not r.dry_run
    assert len(filed(memory, "promotion")) == 1


def test_ending_a_session_never_retires_pinned_entries(memory, agent, reviewer):
    a = agent.actor
    keep = wnote(memory, a, "Pinned scratch rule", "s-9")
    gone = wnote(memory, a, "Ordinary scratch", "s-9")
    actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=keep.uid,
        pinned=True,
        category="safety_policy",
        reason="keep",
    )
    result = actions.end_session(memory, actor=a, session_id="s-9")
    assert result.retired == [gone.uid]
    assert Head.objects.get(entry=keep).state == "active"


def test_job_policy_is_validated(memory):
    from memory.exceptions import ValidationFailed

    founder = Actor.for_user(User.objects.get(username="founder"))
    for bad in (
        {"jobs": {"nope": {"enabled": True}}},
        {"jobs": {"capacity": {"enabled": "yes"}}},
        {"jobs": {"capacity": {"max_entries": 500}}},
        {"jobs": {"promotion": {"target_kind": "working_note"}}},
        {"recall_events": 1},
    ):
        with pytest.raises(ValidationFailed):
            actions.update_memory_policy(memory, actor=founder, policy=bad)
    ok = {"jobs": {"capacity": {"enabled": True, "every_hours": 6}}, "recall_events": True}
    assert actions.update_memory_policy(memory, actor=founder, policy=ok).policy == ok


def test_promotion_dry_run_writes_only_its_run(memory, agent, system):
    wnote(memory, agent.actor, "test_checkout is flaky because of the timezone in CI", "s-1")
    wnote(memory, agent.actor, "test_checkout flaky again: the timezone in CI differs", "s-2")
    before = snapshot(memory)
    r = run(memory, "promotion", system, dry_run=True)
    assert snapshot(memory) == before and r.counts["would_propose"] == 1


# --- capacity ----------------------------------------------------------------------------------


def test_capacity_files_one_bounded_cleanup_of_the_lowest_scores(memory, agent, system, reviewer):
    a = agent.actor
    low = [add(memory, a, f"Scratch note number {i}", kind="working_note") for i in range(6)]
    actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=low[0].uid,
        pinned=True,
        category="durable_decision",
        reason="keep",
    )
    add(memory, a, "A decision that matters", kind="decision")
    enable(memory, capacity_low_entries=5, jobs={"capacity": {"enabled": True, "max_entries": 3}})
    before = snapshot(memory)
    dry = run(memory, "capacity", system, dry_run=True)
    assert snapshot(memory) == before and dry.counts["triggered"] is True
    r = run(memory, "capacity", system, dry_run=False)
    (p,) = filed(memory, "cleanup")
    ids = [e["entry_id"] for e in p.payload["entries"]]
    assert len(ids) == 3 and low[0].uid not in ids  # bounded; pinned entries are never listed
    assert "new low-importance entries" in p.rationale and r.counts["proposals"] == [p.pk]
    again = run(memory, "capacity", system, dry_run=False)
    assert again.counts["triggered"] is False and len(filed(memory, "cleanup")) == 1


def test_capacity_below_the_threshold_files_nothing(memory, agent, system):
    add(memory, agent.actor, "One scratch note", kind="working_note")
    enable(memory, "capacity", capacity_low_entries=5)
    r = run(memory, "capacity", system, dry_run=False)
    assert r.counts["triggered"] is False and filed(memory, "cleanup") == []


def test_capacity_density_counts_restatements_not_entries_on_one_subject(memory, agent, system):
    a = agent.actor
    base = "The nightly export job writes the billing ledger to the archive bucket at midnight"
    add(memory, a, base, dedupe=True)
    # Same subject, a different fact: near_duplicate_of (Jaccard between tau_similar and tau_same).
    related = add(
        memory, a, "The nightly export job writes the audit ledger to the archive", dedupe=True
    )
    # A restatement: duplicate_of (Jaccard at or above tau_same).
    add(memory, a, base + " UTC", dedupe=True)
    kinds = sorted(
        Relation.objects.filter(memory=memory, retired_by__isnull=True).values_list(
            "kind", flat=True
        )
    )
    assert kinds.count("near_duplicate_of") >= 1 and kinds.count("duplicate_of") == 1
    enable(memory, jobs={"capacity": {"enabled": True, "duplicate_density": 0.3}})
    # One restatement among three active entries: density 1/3.
    r = run(memory, "capacity", system, dry_run=True)
    assert r.counts["duplicate_observations"] == 1 and r.counts["triggered"] is True
    # Related entries alone never make a Memory crowded.
    enable(memory, jobs={"capacity": {"enabled": True, "duplicate_density": 0.5}})
    r = run(memory, "capacity", system, dry_run=True)
    assert r.counts["duplicate_observations"] == 1 and r.counts["triggered"] is False
    assert related.uid not in {i.get("entry_id") for i in r.items}


# --- Lock, scheduling, REST --------------------------------------------------------------------


def test_two_runs_of_one_job_never_overlap(memory, system):
    with maintenance.job_lock(memory, "near_duplicates", "first"):
        with pytest.raises(MaintenanceRunning):
            run(memory, "near_duplicates", system, dry_run=True)
        # Another job on the same Memory is not blocked.
        run(memory, "promotion", system, dry_run=True)
    run(memory, "near_duplicates", system, dry_run=True)  # released


def test_a_redelivered_task_takes_its_own_lock_back(memory, system):
    ctx = maintenance.job_lock(memory, "promotion", "task-1")
    ctx.__enter__()  # a worker that died holding it
    r = maintenance.run_job(memory, actor=system, job="promotion", dry_run=True, holder="task-1")
    assert r.job == "promotion"


def test_due_jobs_follow_the_policy(memory, system):
    from django.utils import timezone

    assert maintenance.due_jobs(memory, timezone.now()) == []
    memory = enable(memory, "near_duplicates", "capacity")
    assert maintenance.due_jobs(memory, timezone.now()) == ["capacity", "near_duplicates"]
    run(memory, "capacity", system, dry_run=False)
    assert maintenance.due_jobs(memory, timezone.now()) == ["near_duplicates"]


def test_the_beat_task_fans_out_per_memory(memory, duplicates):
    from memory import tasks

    enable(memory, "near_duplicates")
    queued = tasks.schedule_maintenance.delay().get()
    assert queued == [["acme", "near_duplicates"]]
    assert len(filed(memory, "consolidation")) == 1
    assert tasks.schedule_maintenance.delay().get() == []  # not due again yet


def test_maintenance_endpoints(api, reviewer, agent, memory, duplicates):
    rv = api.as_(reviewer)
    r = rv.post("/api/v1/memories/acme/maintenance/near_duplicates", {"dry_run": True})
    assert r.status_code == 202, r.text
    run_id = r.json()["run"]
    r = rv.get(f"/api/v1/maintenance/runs/{run_id}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["job"] == "near_duplicates" and body["status"] == "finished"
    assert body["proposals"] == [] and body["items"][0]["action"] == "would_propose"
    # A reviewer's manual run never needs jobs.near_duplicates.enabled (the beat schedule).
    r = rv.post("/api/v1/memories/acme/maintenance/near_duplicates", {"dry_run": False})
    assert r.status_code == 202, r.text
    assert len(rv.get(f"/api/v1/maintenance/runs/{r.json()['run']}").json()["proposals"]) == 1
    for job in ("contradictions", "promotion", "capacity"):
        r = rv.post(f"/api/v1/memories/acme/maintenance/{job}", {})
        assert r.status_code == 202, (job, r.text)
    r = api.as_(agent).post("/api/v1/memories/acme/maintenance/capacity", {})
    assert r.status_code == 403, r.text
    r = rv.get("/api/v1/memories/acme/maintenance/runs?limit=2")
    assert r.status_code == 200, r.text
    page = r.json()
    assert [i["job"] for i in page["items"]] == ["capacity", "promotion"]
    assert page["next_cursor"]


def test_transaction_is_not_required_around_a_run(memory, system):
    # Each pass commits per proposal: running one inside a transaction is refused loudly.
    with pytest.raises(RuntimeError), transaction.atomic():
        run(memory, "capacity", system, dry_run=True)


def test_the_maintenance_command_dry_runs_then_applies(memory, duplicates):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out, err = io.StringIO(), io.StringIO()
    call_command("maintenance", "near_duplicates", memory="acme", stdout=out, stderr=err)
    assert '"dry_run": true' in out.getvalue() and "entries" in err.getvalue()
    assert filed(memory, "consolidation") == []
    call_command(
        "maintenance", "near_duplicates", memory="acme", apply=True, stdout=out, stderr=err
    )
    assert len(filed(memory, "consolidation")) == 1
    with pytest.raises(CommandError, match="No memory"):
        call_command("maintenance", "capacity", memory="nope", stdout=out)


def test_a_count_written_as_digits_or_words_is_one_value():
    digits, words = "Indent Python code with 4 spaces.", "Indent Python code with four spaces."
    assert bodies.slot_differences(digits, words) == {}
    assert is_contradiction(words, digits, min_similarity=0.2, min_subject=0.75) is None
    assert pair_edge(digits, words, 0.9, threshold=0.6, min_subject=0.6)[0] is None
    # The merge keeps the first wording: the second only restates the count.
    assert bodies.merged_body([digits, words]) == digits
    # Another number is still another value, shown as written.
    assert bodies.value_differences("Sprints last three weeks.", "Sprints last 4 weeks.") == {
        "number": [["three"], ["4"]]
    }


def test_the_pairs_inside_each_cluster_are_found_in_one_pass_in_the_pairs_order():
    from proposals.passes.near_duplicates import clusters, edges_within

    pairs = [(5, 9), (1, 2), (7, 8), (2, 3), (9, 11)]
    groups = clusters(sorted(pairs))
    assert groups == [[1, 2, 3], [5, 9, 11], [7, 8]]
    assert edges_within(groups, pairs) == [[(1, 2), (2, 3)], [(5, 9), (9, 11)], [(7, 8)]]
