"""Set-based candidate generation for the maintenance passes (issue #16) and resuming past
``max_scan``.

- ``candidates.Neighbourhoods``: a fixed number of queries per keyset batch, whatever its size;
  in a small Memory the qualifying neighbours are exactly the lexical channel's; the caps bound
  what is read; the expected neighbourhoods are spelled out, so the same test passing on SQLite
  and on PostgreSQL shows both backends give identical candidates.
- ``near_duplicates``, ``contradictions``, ``promotion`` and ``capacity`` continue after the
  last entry the previous real run examined and wrap around at the end.

Runs on both backends (the suite runs on SQLite and on PostgreSQL).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.actors import Actor
from memory.dedupe import jaccard
from memory.models import Entry, Memory
from memory.search import ACTIVE, lexical_channel
from memory.text import stop_terms
from proposals.models import Proposal, ProposalStatus, RejectionReason
from proposals.passes import base, candidates
from proposals.passes.candidates import (
    Neighbourhoods,
    ScopedNeighbourhoods,
    scoped_neighbourhoods,
    stored_terms,
    token_set,
)
from tests.proposals.test_passes import add, enable, run, wnote

# Words no other body shares (so an entry made of them has no neighbour).
UNIQUE = [
    f"{a}{b}{c}"
    for a in ("bra", "cle", "dwo", "fri", "glu", "hax")
    for b in ("mo", "ne", "pi", "ru")
    for c in ("lk", "sp", "xt", "zv")
]


@pytest.fixture
def system() -> Actor:
    return Actor.system("test")


def heads_of(memory: Memory) -> dict[int, base.HeadRow]:
    pks = list(Entry.objects.filter(memory=memory).values_list("pk", flat=True))
    return base.load_heads(memory, pks)


def texts(rows: dict[int, base.HeadRow]) -> dict[int, str]:
    return {pk: r.searchable_text for pk, r in rows.items()}


@pytest.fixture
def topics(memory, agent) -> dict[str, Entry]:
    """Three topics with near-duplicates and one unrelated entry."""
    a = agent.actor
    bodies = {
        "deploy1": "The payments service deploys to eu-2 through ArgoCD every Tuesday",
        "deploy2": "Payments service deploys every Tuesday to eu-2 through ArgoCD pipelines",
        "deploy3": "ArgoCD deploys the payments service to eu-2",
        "standup1": "The platform team standup happens at 9:30 in room Kepler",
        "standup2": "Platform team standup is held in room Kepler at 10:00",
        "loki1": "Loki keeps the cluster logs for thirty days of retention",
        "loki2": "Cluster logs retention in Loki is thirty days",
        "lonely": "Quokkas photograph remarkably well near Rottnest",
    }
    return {k: add(memory, a, b) for k, b in bodies.items()}


# --- The neighbourhoods --------------------------------------------------------------------------


def test_stored_tokens_give_dedupes_terms_and_similarity(topics):
    from memory.dedupe import lexical_similarity
    from memory.search import query_terms

    rows = heads_of(topics["deploy1"].memory)
    d1, d2 = rows[topics["deploy1"].pk], rows[topics["deploy2"].pk]
    assert stored_terms(d1.searchable_text) == query_terms(d1.body)
    assert token_set(d1.searchable_text) == d1.tokens
    assert jaccard(d1.tokens, d2.tokens) == pytest.approx(lexical_similarity(d1.body, d2.body))


def test_neighbourhoods_are_the_expected_ones(memory, topics):
    """Spelled out: the same test on both backends shows they agree."""
    rows = heads_of(memory)
    found = Neighbourhoods(memory).of(texts(rows))
    pk = {k: e.pk for k, e in topics.items()}
    named = {v: k for k, v in pk.items()}
    got = {named[e]: [named[n] for n in ns] for e, ns in found.items()}
    assert got == {
        "deploy1": ["deploy2", "deploy3"],
        "deploy2": ["deploy1", "deploy3"],
        "deploy3": ["deploy1", "deploy2"],
        "standup1": ["standup2"],
        "standup2": ["standup1"],
        "loki1": ["loki2"],
        "loki2": ["loki1"],
        "lonely": [],
    }


def assert_neighbours_are_the_channels(memory, rows, found):
    """Each entry's neighbours are exactly what the lexical channel returns for its terms."""
    for pk, row in rows.items():
        channel = lexical_channel(
            memory.pk,
            stored_terms(row.searchable_text),
            view=ACTIVE,
            limit=100,
            exclude_entry_pks=[pk],
        )
        assert set(found[pk]) == {c.entry_pk for c in channel}, row.body


def test_in_a_small_memory_the_neighbours_are_the_lexical_channels(memory, topics):
    rows = heads_of(memory)
    found = Neighbourhoods(memory, limit=100).of(texts(rows))
    assert_neighbours_are_the_channels(memory, rows, found)


def test_japanese_neighbours_are_the_lexical_channels(memory, agent):
    """The floor counts a CJK run by its content words (``memory.search.query_floor``), here as
    in the channel: the question shares only 妻 with the hobby, one of its two words."""
    a = agent.actor
    question, hobby, _, office = (
        add(memory, a, body)
        for body in (
            "妻の習い事は何ですか",
            "妻は毎週末にヨガ教室に通っています。",
            "猫の名前はミソです",
            "東京の事務所は新宿にあります",
        )
    )
    rows = heads_of(memory)
    found = Neighbourhoods(memory, limit=100).of(texts(rows))
    assert set(found[question.pk]) == {hobby.pk, office.pk}
    assert_neighbours_are_the_channels(memory, rows, found)


def test_a_scoped_finder_over_every_entry_ranks_like_the_index(memory, topics):
    # One version per entry: the scope's head frequencies are the index's version counts.
    rows = heads_of(memory)
    scoped = scoped_neighbourhoods(memory, list(rows), heads=True)
    assert isinstance(scoped, ScopedNeighbourhoods)
    assert scoped.of(texts(rows)) == Neighbourhoods(memory, heads=True).of(texts(rows))


def test_a_scoped_finder_reads_its_scope_once(memory, topics):
    rows = heads_of(memory)
    scope = [topics[k].pk for k in ("deploy1", "deploy3", "loki1", "lonely")]
    with CaptureQueriesContext(connection) as queries:
        finder = scoped_neighbourhoods(memory, scope)
        found = finder.of({pk: rows[pk].searchable_text for pk in scope})
        light = finder.neighbours(scope)
    assert len(queries) == 1
    assert set(light) == set(scope)
    # Only entries of the scope are neighbours: deploy2 is not in it, loki2 neither.
    assert found == {
        topics["deploy1"].pk: [topics["deploy3"].pk],
        topics["deploy3"].pk: [topics["deploy1"].pk],
        topics["loki1"].pk: [],
        topics["lonely"].pk: [],
    }


def test_a_scope_above_the_bound_is_looked_up_through_the_index(memory, topics, monkeypatch):
    monkeypatch.setattr(candidates, "SCOPE_MAX", 3)
    finder = candidates.scoped_neighbourhoods(memory, [e.pk for e in topics.values()])
    assert type(finder) is Neighbourhoods and finder.heads


def test_promotion_pairs_notes_that_other_entries_would_crowd_out(memory, agent, system):
    # Twenty-five facts repeat the first note word for word: among every head they would fill
    # its twenty nearest places, and the second note (fewer words shared) would not be seen.
    a = agent.actor
    body = "test_checkout is flaky because of the timezone in CI runners"
    for i in range(25):
        add(memory, a, f"{body} {UNIQUE[i]}")
    wnote(memory, a, body, "s-1")
    wnote(memory, a, "test_checkout flaky again: the timezone in CI differs", "s-2")
    enable(memory, "promotion")
    r = run(memory, "promotion", system, dry_run=True)
    assert r.counts["themes"] == 1


def test_a_fixed_number_of_queries_per_batch(memory, agent):
    a = agent.actor
    for i in range(40):
        add(memory, a, f"Runbook for {UNIQUE[i]} and {UNIQUE[(i + 1) % 40]}")
    rows = heads_of(memory)
    small = dict(list(rows.items())[:5])
    for batch in (small, rows):
        finder = Neighbourhoods(memory)
        with CaptureQueriesContext(connection) as first:
            found = finder.of(texts(batch))
        assert len(first.captured_queries) == 1  # frequencies with their postings
        with CaptureQueriesContext(connection) as again:
            assert finder.of(texts(batch)) == found
        assert len(again.captured_queries) == 0  # frequencies and postings kept for the run
        with CaptureQueriesContext(connection) as bounded:
            tight = Neighbourhoods(memory, postings_budget=0)
            assert tight.of(texts(batch)) == found and tight.of(texts(batch)) == found
        # Nothing kept: the second call reads its keys' postings again (one query).
        assert len(bounded.captured_queries) == 2
    # The floor (2 of 3 content terms): "runbook" and the word shared with the entry before,
    # or with the one after; "runbook" alone, which every entry has, is not enough.
    assert all(len(ns) == 2 for ns in found.values())


# --- Keys: informative terms ------------------------------------------------------------------

# One fact written twice, in close wording: each side holds more terms of its own (a changed
# ending is a new syllable and two new bigrams) than a neighbourhood has keys.
KO_BACKUP = (
    "프로덕션 데이터베이스 백업은 매일 밤 3시에 실행되고 결과는 운영 채널로 알림이 간다.",
    "프로덕션 데이터베이스 백업은 매일 밤 3시에 실행되며 그 결과는 운영 채널에 알림으로 전달된다.",
)
KO_OTHERS = (
    "팀 정기 회의는 매주 수요일 10시에 시작한다.",
    "배치 작업의 재시도 횟수는 3회이다.",
    "스테이징 환경은 Python 3.11에서 실행된다.",
    "번역 문자열은 Crowdin에서 관리한다.",
)


def test_keys_are_content_terms_other_entries_hold_rarest_first(memory):
    finder = Neighbourhoods(memory)
    # Particles are stop words; "간다" is held by the entry alone; "운영" by too many versions.
    finder.frequencies = {"는": 2, "의": 2, "간다": 1, "백업": 3, "채널": 2, "운영": 101}
    finder.held = {"는": 2, "의": 2, "간다": 1, "백업": 3, "채널": 2}
    assert finder.keys(["는", "의", "간다", "백업", "채널", "운영"]) == ["채널", "백업"]


def test_a_korean_restatement_is_compared(memory, agent):
    a = agent.actor
    first, second = (add(memory, a, b) for b in KO_BACKUP)
    for body in KO_OTHERS:
        add(memory, a, body)
    finder = Neighbourhoods(memory)
    found = finder.of(texts(heads_of(memory)))
    assert second.pk in found[first.pk]
    assert first.pk in found[second.pk]
    stops = stop_terms()
    for text in texts(heads_of(memory)).values():
        assert not set(finder.keys(stored_terms(text))) & stops


def test_a_term_held_by_more_versions_than_the_cap_pairs_nothing(memory, agent):
    a = agent.actor
    for i in range(6):
        add(memory, a, f"Zanzibar {UNIQUE[i]}")
    rows = heads_of(memory)
    assert all(len(ns) == 5 for ns in Neighbourhoods(memory).of(texts(rows)).values())
    capped = Neighbourhoods(memory, postings_cap=5)
    assert all(ns == [] for ns in capped.of(texts(rows)).values())
    assert capped.frequencies["zanzibar"] == 6  # counted up to cap + 1 only
    assert capped.postings_read == 6  # each entry's own word only: never "zanzibar"'s


def test_limit_bounds_each_neighbourhood(memory, agent):
    a = agent.actor
    for i in range(8):
        add(memory, a, f"Zanzibar ferry timetable {UNIQUE[i]}")
    found = Neighbourhoods(memory, limit=3).of(texts(heads_of(memory)))
    assert all(len(ns) == 3 for ns in found.values())


def test_a_pass_runs_the_same_queries_for_10_or_40_entries(memory, agent, system):
    """Per batch the lexical work is one query, so the pass's query count does not grow with
    the entries of a batch."""

    def queries(n: int) -> int:
        m = Memory.objects.create(slug=f"q{n}", name=f"q{n}")
        for i in range(n):
            add(m, agent.actor, f"{UNIQUE[i]} {UNIQUE[i + 40]}")
        with CaptureQueriesContext(connection) as ctx:
            r = run(m, "near_duplicates", system, dry_run=True)
        assert r.counts["scanned"] == n and r.counts["lexical_queries"] == 1
        return len(ctx.captured_queries)

    assert queries(10) == queries(40)


# --- Resume --------------------------------------------------------------------------------------


def _seed(memory: Memory, agent: Any, job: str) -> list[int]:
    """Five entries the job walks, in entry order."""
    a = agent.actor
    if job == "promotion":
        entries = [wnote(memory, a, f"Note {UNIQUE[i]}", f"s{i}") for i in range(5)]
    elif job == "capacity":
        entries = [add(memory, a, f"Scratch {UNIQUE[i]}", kind="working_note") for i in range(5)]
    else:
        entries = [
            add(memory, a, f"The {UNIQUE[i]} limit is {i}", current_state=True) for i in range(5)
        ]
    return [e.pk for e in entries]


@pytest.mark.parametrize("job", ["near_duplicates", "contradictions", "promotion", "capacity"])
def test_a_pass_resumes_where_the_last_real_run_stopped(memory, agent, system, job):
    pks = _seed(memory, agent, job)
    # Capacity: a density threshold of 0 fires on every run.
    cfg = {
        "enabled": True,
        "max_scan": 2,
        **({"duplicate_density": 0} if job == "capacity" else {}),
    }
    enable(memory, jobs={job: cfg})

    def real() -> tuple[int, int, bool, int]:
        r = run(memory, job, system, dry_run=False)
        # A pending cleanup proposal would hold the next capacity run back: answer it.
        Proposal.objects.filter(memory=memory, kind="cleanup").update(
            status=ProposalStatus.REJECTED, rejection_reason=RejectionReason.OTHER
        )
        return (
            r.parameters["after"],
            r.counts["cursor"],
            r.counts["wrapped"],
            r.counts["scanned"],
        )

    assert real() == (0, pks[1], False, 2)
    assert real() == (pks[1], pks[3], False, 2)
    assert real() == (pks[3], 0, True, 1)  # the end: the next run starts over
    assert real() == (0, pks[1], False, 2)
    dry = run(memory, job, system, dry_run=True)  # a dry run starts from the first entry
    assert dry.parameters["after"] == 0 and dry.counts["scanned"] == 2
    assert real() == (pks[1], pks[3], False, 2)  # and moves no real run's position


def test_a_capacity_run_that_does_not_fire_keeps_the_position(memory, agent, system):
    pks = _seed(memory, agent, "capacity")
    enable(memory, capacity_low_entries=1, jobs={"capacity": {"enabled": True, "max_scan": 2}})
    first = run(memory, "capacity", system, dry_run=False)
    assert first.counts["cursor"] == pks[1]
    quiet = run(memory, "capacity", system, dry_run=False)  # no new low entries since
    assert quiet.counts["triggered"] is False and quiet.counts["cursor"] == pks[1]
    enable(memory, jobs={"capacity": {"enabled": True, "max_scan": 2, "duplicate_density": 0}})
    held = run(memory, "capacity", system, dry_run=False)  # fires; its cleanup is pending
    assert "cleanup_pending" in held.counts and held.counts["cursor"] == pks[1]
