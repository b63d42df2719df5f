"""The lexical channel: admission floor, order, scope, and ``lexical_candidates``."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import User
from django.db import connection

from memory import actions
from memory.actors import Actor
from memory.lexical_index import Collection
from memory.search import (
    ACTIVE,
    CURRENT,
    admission_floor,
    channel_cap,
    lexical,
    lexical_candidates,
    lexical_channel,
    query_terms,
)
from memory.search.lexical import (
    MAX_STATEMENTS,
    _walk_settled,
    essential_sizes,
    groups_reaching,
)
from tests.factories import remember

pytestmark = pytest.mark.django_db


@pytest.fixture
def me(agent):
    return agent.actor


def test_admission_floor_follows_the_design():
    assert [admission_floor(n) for n in (1, 2, 3, 4, 8, 9, 10, 12, 13)] == [
        1,
        1,
        2,
        2,
        2,
        3,
        3,
        3,
        4,
    ]


def test_channel_cap_is_four_k_but_never_below_32():
    assert channel_cap(1) == 32
    assert channel_cap(8) == 32
    assert channel_cap(10) == 40


def test_ten_word_query_about_blue_icons_does_not_match_advisory_locks(memory, me):
    remember(memory, me, "Use PostgreSQL advisory locks for leader election")
    query = "Which blue icons should we use for the settings page"
    assert len(query_terms(query)) == 10
    assert lexical_candidates(memory.pk, query) == []


def test_short_question_about_leader_election_locks_matches(memory, me):
    entry = remember(memory, me, "Use PostgreSQL advisory locks for leader election").entry
    assert lexical_candidates(memory.pk, "Which locks should leader election use?") == [entry.pk]


def test_one_or_two_term_queries_need_one_matching_term(memory, me):
    entry = remember(memory, me, "Use PostgreSQL advisory locks for leader election").entry
    assert lexical_candidates(memory.pk, "postgresql") == [entry.pk]
    assert lexical_candidates(memory.pk, "PostgreSQL mutexes") == [entry.pk]
    assert lexical_candidates(memory.pk, "redis mutexes") == []


def test_more_matching_terms_rank_first_then_shorter_text(memory, me):
    long_one = remember(memory, me, "Deploys go to eu-2 every Tuesday after the standup").entry
    short_one = remember(memory, me, "Deploys go to eu-2").entry
    best = remember(memory, me, "Tuesday deploys go to eu-2 region").entry
    assert lexical_candidates(memory.pk, "tuesday deploys region") == [
        best.pk,
        long_one.pk,
    ]
    assert lexical_candidates(memory.pk, "deploys eu") == [short_one.pk, best.pk, long_one.pk]


def test_only_active_head_versions_are_candidates(memory, me):
    revised = remember(memory, me, "The deploy target is eu-2").entry
    actions.revise_entry(memory, actor=me, entry_uid=revised.uid, body="The rollout target is us-5")
    gone = remember(memory, me, "The deploy target was eu-2 for staging").entry
    actions.forget_entry(memory, actor=me, entry_uid=gone.uid, reason="decommissioned")
    assert lexical_candidates(memory.pk, "deploy eu") == []
    assert lexical_candidates(memory.pk, "rollout") == [revised.pk]


def test_exclusions_limit_and_memory_scope(memory, other_memory, me):
    a = remember(memory, me, "Leader election uses advisory locks").entry
    b = remember(memory, me, "Leader election at boot").entry
    remember(other_memory, me, "Leader election in the other team")
    assert lexical_candidates(memory.pk, "leader election") == [b.pk, a.pk]
    assert lexical_candidates(memory.pk, "leader election", exclude_entry_pks=[b.pk]) == [a.pk]
    assert lexical_candidates(memory.pk, "leader election", limit=1) == [b.pk]


def test_cjk_query_recalls_cjk_entry(memory, me):
    entry = remember(memory, me, "部署目标是欧洲二区").entry
    remember(memory, me, "The deploy target is eu-2")
    assert lexical_candidates(memory.pk, "部署目标") == [entry.pk]


def test_underscored_identifiers_are_one_term_on_every_backend(memory, me):
    entry = remember(memory, me, "Set max_connections to 200").entry
    assert lexical_candidates(memory.pk, "max_connections") == [entry.pk]
    assert lexical_candidates(memory.pk, "connections") == []


def test_query_without_terms_finds_nothing(memory, me):
    remember(memory, me, "Anything at all")
    assert lexical_candidates(memory.pk, "  ?! ") == []


def test_lexical_candidates_is_two_queries(memory, me, django_assert_num_queries):
    """The term statistics (one query), then the one bounded statement of the write path."""
    for i in range(5):
        remember(memory, me, f"Leader election note {i}")
    with django_assert_num_queries(2):
        assert len(lexical_candidates(memory.pk, "leader election", limit=3)) == 3


@pytest.mark.parametrize("entries", [3, 60])
@pytest.mark.parametrize("common", [False, True])
def test_the_channel_reads_at_most_max_statements_whatever_the_memory_holds(
    memory, me, settings, monkeypatch, entries, common, django_assert_max_num_queries
):
    """Also when every lookup counts as a common word's: walked shortest first (three rows at
    first, so it reads on and gives up), then pruned or ranked."""
    if common:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_RANK_FIRST_ROWS": 0}
        monkeypatch.setattr(lexical, "WALK_SHARE", 0.0)
        monkeypatch.setattr(lexical, "WALK_FIRST", 3)
    for i in range(entries):
        words = ["leader", "election", "the"][: 1 + i % 3]
        remember(memory, me, f"{' '.join(words).capitalize()} note {i}")
    terms = query_terms("the leader election")
    if connection.vendor == "postgresql":
        lexical._lexeme_frequencies()  # read at most every STATS_TTL seconds: not counted here
    # The term statistics, then the statements (one on SQLite).
    for limit in (1, 5, 1000):
        with django_assert_max_num_queries(1 + MAX_STATEMENTS):
            found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=limit)
        assert len(found) == min(entries, limit)


def _ranked_by_hand(memory, terms, floor, min_matched=0):
    """The channel's order computed from the stored versions: every admitted head ranked by
    Okapi BM25 (k1 1.2, b 0.75, a term counted once per text) over the Memory's versions'
    indexed tokens, then entry id, then version id — the single-query definition, with the
    statistics counted here by hand rather than read from the term tables."""
    import math

    from memory.models import EntryVersion, Head
    from memory.search import content_terms

    versions = list(EntryVersion.objects.filter(memory=memory))
    n = len(versions)
    avgdl = sum(v.term_count for v in versions) / n
    df = {t: sum(t in v.searchable_text.split() for v in versions) for t in terms}
    idf = {t: round(1000 * math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))) for t in terms}
    a, c = round(1000 * avgdl * (1 + 1.2 * 0.25)), round(1000 * 1.2 * 0.75)
    content = set(content_terms(terms))
    rows = []
    heads = Head.objects.filter(memory=memory, state="active").values("version_id")
    for v in EntryVersion.objects.filter(pk__in=heads):
        held = set(v.searchable_text.split())
        matched = held & set(terms)
        if len(held & content) >= floor and len(matched) >= max(min_matched, 1):
            score = sum(idf[t] for t in matched) / (a + c * v.term_count)
            rows.append((-score, v.entry_id, v.pk))
    return [entry for _, entry, _ in sorted(rows)]


@pytest.mark.parametrize(
    ("steps", "rank_first", "walk", "prune"),
    [
        (None, None, None, None),
        ((1, 30), None, None, None),
        (None, 0, 0, 0),
        (None, 0, 0, None),
        (None, 0, None, 0),
        (None, 0, 40, None),
        (None, 0, 40, 0),
        ((1, 30), 0, 0, None),
        ((1, 30), 0, None, None),
    ],
)
def test_search_ranks_exactly_as_one_query_over_every_admitted_text(
    memory, me, settings, monkeypatch, steps, rank_first, walk, prune
):
    """Many ties of matched terms and of lengths: whichever statement fills the limit, the order
    is the one of ranking every admitted text at once. With small steps (``LEXICAL_EXACT_STEPS``)
    PostgreSQL looks up the rarest term alone first, and stops there only when no row holding
    just the other terms could enter the top. With ``LEXICAL_RANK_FIRST_ROWS`` 0 every lookup
    counts as a common word's: read shortest first (a few rows a statement, so the walk stops
    between statements; with ``LEXICAL_WALK_ROWS`` 40 it gives up after 40 rows), or only the
    rows holding enough of the terms to pass a score reached (``LEXICAL_PRUNE_GROUPS``), or,
    with both off, ranked before the view's joins, and ranked again with them when too few are
    admitted."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.search import query_floor

    if steps is not None:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_EXACT_STEPS": steps}
    if rank_first is not None:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_RANK_FIRST_ROWS": rank_first}
    if walk is not None:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_WALK_ROWS": walk}
    if prune is not None:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_PRUNE_GROUPS": prune}
    # A walk's first statement returns 2 × the rows asked for (not 64), so it reads on.
    monkeypatch.setattr(lexical, "WALK_FIRST", 3)
    monkeypatch.setattr(lexical, "WALK_SHARE", 0.0)  # every common lookup walked
    statements = set()

    rng = random.Random(11)
    vocab = ["quorvex", "blintar", "zatpel", "mervo", "kestrel", "the"]
    filler = ["alpha", "beta", "gamma"]
    for _ in range(120):
        words = rng.sample(vocab, rng.randint(1, 5)) + [rng.choice(filler)] * rng.randint(0, 3)
        rng.shuffle(words)
        remember(memory, me, " ".join(words).capitalize())
    for query in [
        "quorvex",
        "quorvex blintar",
        "the quorvex zatpel",
        "quorvex blintar zatpel mervo kestrel",
    ]:
        terms = query_terms(query)
        floor = query_floor(terms)
        for min_matched in (0, 2)[: len(terms)]:
            expected = _ranked_by_hand(memory, terms, floor, min_matched)
            assert len(expected) > 10, query
            for limit in (1, 5, 17, 40, 1000):
                with CaptureQueriesContext(connection) as read:
                    found = lexical_channel(
                        memory.pk, terms, view=ACTIVE, limit=limit, min_matched=min_matched
                    )
                statements.add(len(read))
                assert [c.entry_pk for c in found] == expected[:limit], (query, min_matched, limit)
                assert [c.rank for c in found] == list(range(1, len(found) + 1))
    if steps is not None and connection.vendor == "postgresql":
        # Some searches stopped after the rarest term, some needed the later statements.
        assert min(statements) < max(statements), statements


def test_search_ranks_every_admitted_row_and_the_write_check_its_newest(memory, me, settings):
    """Search is plain BM25 over every admitted row, however many match: past
    ``LEXICAL_TIER_ROWS`` of them an older, better text is still found. Only the write path's
    near-duplicate check (``exact=False``) ranks just the newest that many."""
    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_TIER_ROWS": 6}
    both = [remember(memory, me, f"Leader election {'x ' * i}note").entry.pk for i in range(2)]
    # Older is shorter: a ranking of every row returns the three oldest one-term texts.
    one = [remember(memory, me, f"Leader {'y ' * i}note").entry.pk for i in range(12)]
    terms = query_terms("leader election")
    found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=5)
    assert [c.entry_pk for c in found] == both + one[:3]
    newest = lexical_channel(memory.pk, terms, view=ACTIVE, limit=5, exact=False)
    assert [c.entry_pk for c in newest] == one[-6:][:5]


def test_the_rarest_terms_are_looked_up_first_and_the_rest_only_when_needed():
    dfs = {"zebra": 3, "quartz": 1500, "deploy": 9000, "the": 50000}
    rarest = ["zebra", "quartz", "deploy", "the"]
    assert essential_sizes(rarest, dfs) == [2, 3, 4]
    assert essential_sizes(["the", "deploy"], dfs) == [1, 2]  # at least one term each time
    assert essential_sizes(["zebra"], dfs) == [1]


def test_a_walk_in_length_order_stops_only_when_no_unread_row_can_pass_the_last_kept():
    """A row not read by the walk is at least as long as the last read (``last``: length,
    entry, id) and holds at most every term (2,000 here). A = 1,000 × 10 × 1.3 = 13,000 and
    C = 900: the last kept row, 1,100 at length 10, scores 1,100 / 22,000 = 0.05, exactly what
    an unread row of every term at length 30 could (2,000 / 40,000). Such a row has an (entry,
    id) above the last read's, so it ranks after the kept row only when the kept row's is not
    above the last read's."""
    stats = Collection(versions=100, mean_length=10.0, weights={})
    assert stats.length_terms() == (13000, 900)
    kth = stats.score(1100, 10)
    assert kth == stats.score(2000, 30) == 0.05
    last = (30, 20, 200)
    assert _walk_settled((kth, 10, 100), last, best_weight=2000, stats=stats)
    assert _walk_settled((kth, 20, 200), last, best_weight=2000, stats=stats)
    # Entry 30 at length 30, unread, would tie and rank before entry 50.
    assert not _walk_settled((kth, 50, 500), last, best_weight=2000, stats=stats)
    assert _walk_settled((kth, 50, 500), last, best_weight=1999, stats=stats)
    assert not _walk_settled((stats.score(1099, 10), 10, 100), last, best_weight=2000, stats=stats)
    assert _walk_settled(
        (stats.score(1100, 10), 50, 500), (31, 0, 0), best_weight=2000, stats=stats
    )


def test_the_groups_of_terms_reaching_a_weight_are_the_smallest_sets():
    weighted = [("the", 100), ("deploy", 500), ("zebra", 4000), ("queue", 700)]
    assert groups_reaching(weighted, 1200, cap=12) == [
        ["zebra"],
        ["queue", "deploy"],
    ]
    assert groups_reaching(weighted, 1250, cap=12) == [["zebra"], ["queue", "deploy", "the"]]
    assert groups_reaching(weighted, 4100, cap=12) == [
        ["zebra", "queue"],
        ["zebra", "deploy"],
        ["zebra", "the"],
    ]
    assert groups_reaching(weighted, 5301, cap=12) == []  # out of reach: no text can pass
    assert groups_reaching(weighted, 4100, cap=2) is None  # more groups than the cap
    # Every text holding one of the groups reaches the weight, and every text reaching it holds
    # one of them, for every subset of the terms.
    from itertools import combinations

    for need in range(1, 5400, 97):
        groups = groups_reaching(weighted, need, cap=64)
        assert groups is not None
        for size in range(len(weighted) + 1):
            for held in combinations(weighted, size):
                names = {t for t, _ in held}
                reaches = sum(w for _, w in held) >= need
                assert reaches == any(set(g) <= names for g in groups), (need, names)


def test_a_cjk_run_counts_toward_the_floor_by_its_content_words(memory, me):
    from memory.search import query_floor, search

    terms = query_terms("我女儿不能吃什么水果？")
    # 4 content words (不能 吃 什么 水果; 我 and 女 are stop words): ceil(0.25 · 4) → 2, not
    # the 3 of its 9 content bigrams or the 4 of its 14 content terms.
    assert query_floor(terms) == 2
    allergy = remember(memory, me, "我女儿对芒果过敏，点外卖时要注意。").entry
    remember(memory, me, "周末我们去爬山。")
    hits = search(memory, actor=me, query="我女儿不能吃什么水果？").hits
    assert [h.entry_id for h in hits] == [allergy.uid]


def test_japanese_particles_do_not_raise_the_floor(memory, me):
    """妻の習い事は何ですか ("what is my wife's hobby"): two content words, 妻 and 習い事, so
    one is enough, as "wife" is enough for "what is my wife's hobby". Counted by bigrams
    (妻の, の習, 習い, い事, 事は, は何, 何で, すか) the floor asked for two, and the only text
    naming the wife shares just 妻 with it. A text sharing only particles and endings
    (の, は, です) holds no content term and stays out."""
    from memory.search import query_floor, search

    terms = query_terms("妻の習い事は何ですか？")
    assert query_floor(terms) == 1
    wife = remember(memory, me, "妻は毎週末にヨガ教室に通っています。").entry
    remember(memory, me, "チームの定例会議は毎週水曜日の午前11時です。")
    remember(memory, me, "本番環境へのリリースは毎週金曜日の夕方に行います。")
    hits = search(memory, actor=me, query="妻の習い事は何ですか？").hits
    assert [h.entry_id for h in hits] == [wife.uid]
    found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=10)
    assert [c.entry_pk for c in found] == [wife.pk]


def test_min_matched_keeps_exactly_the_texts_holding_that_many_terms(memory, me):
    """However the index condition for ``min_matched`` is written (any of the rarest terms, or
    pairs of them), the rows are those of the plain channel holding that many terms, in the
    same order."""
    rng = random.Random(7)
    vocab = [f"{a}{b}" for a in ("quor", "blin", "zat", "mervo") for b in ("vex", "tar", "pel")]
    stored = {}
    for _ in range(80):
        body = " ".join(rng.sample(vocab, rng.randint(3, 9)))
        result = remember(memory, me, body.capitalize())
        stored[result.entry.pk] = set(query_terms(body))
    query = " ".join(vocab[:10])
    terms = query_terms(query)
    plain = lexical_channel(memory.pk, terms, view=ACTIVE, limit=1000)
    dropped = 0
    for m in range(2, len(terms) + 1):
        expected = [c.entry_pk for c in plain if len(stored[c.entry_pk] & set(terms)) >= m]
        found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=1000, min_matched=m)
        assert [c.entry_pk for c in found] == expected, m
        dropped += len(plain) - len(expected)
    assert plain and dropped  # the condition was put to work


def test_the_bound_counts_only_rows_in_the_view(memory, me, settings):
    """The newest-rows bound applies after the view's filters: an older candidate is found
    in the candidates view although more newer active texts match than the bound."""
    from memory.models import Head, HeadState
    from memory.search.common import CANDIDATES

    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_TIER_ROWS": 3}
    pending = remember(memory, me, "Leader election pending note").entry.pk
    Head.objects.filter(entry_id=pending).update(state=HeadState.CANDIDATE)
    for i in range(8):
        remember(memory, me, f"Leader election note {i}")
    terms = query_terms("leader election")
    for limit in (1, 5):
        found = lexical_channel(memory.pk, terms, view=CANDIDATES, limit=limit)
        assert [c.entry_pk for c in found] == [pending]
    assert len(lexical_channel(memory.pk, terms, view=ACTIVE, limit=5)) == 5


def test_a_hiragana_term_is_no_match_for_a_query_holding_a_content_word(memory, me):
    """どこに転勤しますか ("where am I transferred") has one content word, 転勤: the floor
    asks for one match, and a text sharing only the ending しま (します) or こに is not one."""
    from memory.search import content_terms, query_floor

    terms = query_terms("どこに転勤しますか")
    assert query_floor(terms) == 1
    assert "しま" in terms and "しま" not in content_terms(terms)
    remember(memory, me, "明日の会議をよろしくお願いします。")
    assert lexical_channel(memory.pk, terms, view=ACTIVE, limit=10) == []
    moved = remember(memory, me, "来月、大阪に転勤します。").entry
    found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=10)
    assert [c.entry_pk for c in found] == [moved.pk]


def test_a_query_written_only_in_hiragana_still_counts_its_hiragana_terms(memory, me):
    from memory.search import content_terms, query_floor

    terms = query_terms("すしがすきです")
    assert "すし" in content_terms(terms)
    assert query_floor(terms) == 2
    sushi = remember(memory, me, "わたしはおすしがすきです。").entry
    remember(memory, me, "明日の会議をよろしくお願いします。")
    found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=10)
    assert [c.entry_pk for c in found] == [sushi.pk]


def _forget(memory, me, entry_pk):
    from memory.models import Entry

    actions.forget_entry(memory, actor=me, entry_uid=Entry.objects.get(pk=entry_pk).uid, reason="x")


@pytest.mark.parametrize(("rank_first", "walk"), [(None, None), (0, 0), (0, None)])
def test_the_best_rows_forgotten_leave_the_next_admitted_in_order(
    memory, me, settings, monkeypatch, rank_first, walk
):
    """Most of the shortest (best) texts forgotten: the channel returns the best admitted rows, exactly
    as ranking every admitted text. Ranked before the view's joins (``LEXICAL_RANK_FIRST_ROWS``
    0, the walk off), the lookup's best ``RANK_FIRST_POOL × limit`` rows hold too few admitted
    ones and PostgreSQL ranks the lookup again with the joins; walked shortest first, the
    forgotten rows are not admitted and the walk goes past them: the same answer."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.search import query_floor

    if rank_first is not None:
        settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_RANK_FIRST_ROWS": rank_first}
    if walk is not None:
        settings.STEWARD_SEARCH = {
            **settings.STEWARD_SEARCH,
            "LEXICAL_WALK_ROWS": walk,
            "LEXICAL_PRUNE_GROUPS": 0,
        }
    monkeypatch.setattr(lexical, "WALK_SHARE", 0.0)
    short = [remember(memory, me, f"Quorvex note {i}").entry.pk for i in range(9)]
    long = [
        remember(memory, me, f"Quorvex {'alpha ' * (1 + i % 3)}note {i}").entry.pk
        for i in range(12)
    ]
    for pk in short[:7]:
        _forget(memory, me, pk)
    terms = query_terms("quorvex")
    expected = _ranked_by_hand(memory, terms, query_floor(terms))
    assert expected[:2] == short[7:] and set(expected) == {*short[7:], *long}
    for limit in (1, 2, 5, 20):
        if connection.vendor == "postgresql":
            lexical._lexeme_frequencies()  # read at most every STATS_TTL s: not counted here
        with CaptureQueriesContext(connection) as read:
            found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=limit)
        assert [c.entry_pk for c in found] == expected[:limit], limit
        if rank_first == 0 and walk == 0 and connection.vendor == "postgresql" and limit == 1:
            # The channel reads twice the limit (``READ_FIRST``): of the best 4 × 2 rows, fewer
            # than 2 are admitted — ranked first, then again with the joins.
            assert len(read) == 3, [q["sql"] for q in read.captured_queries]


def test_a_common_word_is_ranked_before_the_views_joins_and_its_texts_read_after(
    memory, me, settings
):
    """A lookup of more rows than ``LEXICAL_RANK_FIRST_ROWS`` (0 here) ranks the lookup's rows
    alone — no head, no lifecycle projection, no text — and joins only its best few: at a
    million rows of a common word, ranking inside the joins cost four times the bare full-text
    query (docs/benchmarks.md)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "postgresql":
        pytest.skip("the statement is PostgreSQL's")
    settings.STEWARD_SEARCH = {
        **settings.STEWARD_SEARCH,
        "LEXICAL_RANK_FIRST_ROWS": 0,
        "LEXICAL_WALK_ROWS": 0,
        "LEXICAL_PRUNE_GROUPS": 0,
    }
    for i in range(4):
        remember(memory, me, f"The leader election note {i}")
    with CaptureQueriesContext(connection) as read:
        # Twice the limit is read (``READ_FIRST``): 2 of the 4 rows, so no second ranking.
        assert lexical_channel(memory.pk, query_terms("the leader"), view=CURRENT, limit=1)
    statement = read.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (VERBOSE) {statement}")
        plan = [row[0] for row in cursor.fetchall()]

    def depth(line):
        return len(line) - len(line.lstrip(" ->"))

    # The ranking: the innermost Limit over a Sort, and everything under it.
    ranking = max(
        i
        for i, line in enumerate(plan[:-1])
        if line.lstrip(" ->").startswith("Limit") and "Sort" in plan[i + 2]
    )
    subtree = [plan[ranking]]
    for line in plan[ranking + 1 :]:
        if line.lstrip().startswith("->") and depth(line) <= depth(plan[ranking]):
            break
        subtree.append(line)
    scanned = " ".join(subtree)
    assert "memory_entryversion" in scanned, subtree
    assert "memory_head" not in scanned and "memory_lifecycleprojection" not in scanned, subtree
    assert "searchable_text" not in scanned, subtree
    joined = " ".join(line for line in plan if line not in subtree)
    assert "memory_head" in joined and "memory_lifecycleprojection" in joined, plan


def test_a_search_narrowed_by_filters_ranks_with_the_joins_inside(memory, me, settings):
    """A session's rows are a small share of a common word's: ranking the lookup's best rows
    first would find few of them and rank again, so a filtered search keeps the one statement
    per step, whatever ``LEXICAL_RANK_FIRST_ROWS`` says."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.search.filters import RecallFilters

    settings.STEWARD_SEARCH = {**settings.STEWARD_SEARCH, "LEXICAL_RANK_FIRST_ROWS": 0}
    ours = [
        remember(memory, me, f"Quorvex session note {i}", session_id="s-1").entry.pk
        for i in range(3)
    ]
    for i in range(12):
        remember(memory, me, f"Quorvex note {i}", session_id="s-2")
    terms = query_terms("quorvex")
    if connection.vendor == "postgresql":
        lexical._lexeme_frequencies()  # read at most every STATS_TTL seconds: not counted here
    with CaptureQueriesContext(connection) as read:
        found = lexical_channel(
            memory.pk, terms, view=ACTIVE, limit=2, filters=RecallFilters(session_id="s-1")
        )
    assert [c.entry_pk for c in found] == ours[:2]
    if connection.vendor == "postgresql":
        assert len(read) == 2  # the term statistics, then one statement


def test_a_small_memorys_lookup_of_a_common_word_reads_its_own_rows(memory, me, monkeypatch):
    """The full-text index holds every Memory's postings: a common word's lookup for a small
    Memory beside a large one read the large one's postings (310 ms p95 at 10,000 versions
    beside 1,000,000, docs/benchmarks.md). When the Memory has fewer versions than PostgreSQL
    estimates the lookup's postings hold, its own rows are read instead, with the same
    match — and the same answer."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.search import query_floor

    if connection.vendor != "postgresql":
        pytest.skip("the statement is PostgreSQL's")
    founder = Actor.for_user(User.objects.get(username="founder"))
    large = actions.create_memory(actor=founder, slug="large", name="Large")
    for i in range(60):
        remember(large, me, f"Quorvex deploy note {i} {'alpha ' * (i % 4)}")
        remember(large, me, f"Blintar release note {i}")
    small = [remember(memory, me, f"Quorvex {'beta ' * i}memo").entry.pk for i in range(4)]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_entryversion")
    # Read the statistics again (a copy: the next test reads them afresh).
    monkeypatch.setattr(lexical, "_stats", {**lexical._stats, "at": -lexical.STATS_TTL})
    terms = query_terms("quorvex")
    assert lexical._scans(terms, 4) and not lexical._scans(terms, 1000)
    expected = _ranked_by_hand(memory, terms, query_floor(terms))
    assert expected == small
    with CaptureQueriesContext(connection) as read:
        found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=3)
    assert [c.entry_pk for c in found] == small[:3]
    statements = [q["sql"] for q in read.captured_queries]
    assert any("ts_match_vq(v.search_vector" in sql for sql in statements), statements
    # The large Memory holds more versions than the word's postings: the index serves it.
    with CaptureQueriesContext(connection) as read:
        assert len(lexical_channel(large.pk, terms, view=ACTIVE, limit=3)) == 3
    assert not any("ts_match_vq" in q["sql"] for q in read.captured_queries)


def test_a_lookup_is_read_row_by_row_only_when_the_memory_is_smaller_than_its_postings(
    monkeypatch,
):
    import time

    monkeypatch.setattr(
        lexical,
        "_stats",
        {"at": time.monotonic(), "freq": {"the": 0.8, "deploy": 0.3}, "rows": 1_000_000.0},
    )
    assert lexical._scans(["the"], 10_000)
    assert lexical._scans(["deploy"], 299_999) and not lexical._scans(["deploy"], 300_000)
    assert lexical._scans(["the", "deploy"], 1_000_000)  # 1.1 million postings to read
    assert not lexical._scans(["zebra"], 10)  # rarer than every listed lexeme: the index
    assert not lexical._scans(["the"], 0)


def test_a_lookup_of_common_words_ranks_only_the_rows_that_can_pass_a_score_reached(
    memory, me, settings
):
    """Two words each common, few texts holding both: the best rows hold both, so once the
    texts holding both are ranked, a text holding one of them cannot pass the fourth best of
    them (at the Memory's shortest length it weighs too little), and only the texts holding
    both are ranked — the same answer as ranking every text that holds either."""
    from django.test.utils import CaptureQueriesContext

    from memory.search import query_floor

    if connection.vendor != "postgresql":
        pytest.skip("the statements are PostgreSQL's")
    settings.STEWARD_SEARCH = {
        **settings.STEWARD_SEARCH,
        "LEXICAL_RANK_FIRST_ROWS": 0,
        "LEXICAL_WALK_ROWS": 0,
    }
    for i in range(25):
        remember(memory, me, f"Alpha note number {i}")
        remember(memory, me, f"Beta note number {i}")
    both = [remember(memory, me, f"Alpha beta {w}").entry.pk for w in ("one", "two", "six")]
    both += [remember(memory, me, f"Alpha beta {w} gamma").entry.pk for w in ("ten", "red")]
    terms = query_terms("alpha beta")
    expected = _ranked_by_hand(memory, terms, query_floor(terms))
    assert expected[:5] == both
    lexical._lexeme_frequencies()  # read at most every STATS_TTL seconds: not counted here
    with CaptureQueriesContext(connection) as read:
        found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=2)
    assert [c.entry_pk for c in found] == expected[:2]
    statements = [q["sql"] for q in read.captured_queries]
    # The statistics, the texts holding both ranked, the shortest length, the pruned lookup.
    assert len(statements) == 4, statements
    assert "@@ '(''alpha'' & ''beta'')'::tsquery" in statements[-1], statements[-1]
    for limit in (1, 3, 5, 40):
        found = lexical_channel(memory.pk, terms, view=ACTIVE, limit=limit)
        assert [c.entry_pk for c in found] == expected[:limit], limit
