"""The analyzer (memory.text): ICU segmentation per script, Snowball stemming identical at index
and query time, stop words that only set the admission floor, the stored token count, and the
reindex of stored versions (migration 0014, ``rebuild_projection --reindex``)."""

from __future__ import annotations

import importlib
import re
import unicodedata
from io import StringIO
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from lib.append_only import rewriting_derived_columns
from memory.models import EntryVersion
from memory.search import content_terms, lexical_candidates, query_floor, query_terms
from memory.search.reindex import reanalyze_versions
from memory.text import searchable_text, stop_terms, tokenize, words
from tests.factories import remember

UNSTEMMED = override_settings(STEWARD_ANALYZER={"STEM": False})


@pytest.fixture
def me(agent):
    return agent.actor


# --- Segmentation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Devanagari: vowel signs and the virama are marks inside the word.
        ("उपयोगकर्ता को कॉफ़ी पसंद है", ["उपयोगकर्ता", "को", "कॉफ़ी", "पसंद", "है"]),
        # Scripts written without spaces: ICU's dictionaries.
        ("ผู้ใช้งานชอบกาแฟ", ["ผู้", "ใช้", "งาน", "ชอบ", "กาแฟ"]),
        ("ຜູ້ໃຊ້ມັກກາເຟ", ["ຜູ້", "ໃຊ້", "ມັກ", "ກາເຟ"]),
        ("អ្នកប្រើចូលចិត្តកាហ្វេ", ["អ្នកប្រើ", "ចូលចិត្ត", "កាហ្វេ"]),
        ("မြန်မာစာသုံးစွဲသူ", ["မြန်မာ", "စာ", "သုံးစွဲ", "သူ"]),
        ("المستخدم يحب القهوة", ["المستخدم", "يحب", "القهوة"]),
        # Arabic vowel marks stay inside the word too.
        ("يُحِبُّ", ["يُحِبُّ"]),
    ],
)
def test_words_of_each_script(text, expected):
    assert words(text) == expected


def test_cjk_stays_unigrams_and_adjacent_bigrams_across_icu_words():
    # ICU's dictionary splits 東京|タワー; the CJK run is still one run of unigrams and bigrams.
    assert tokenize("東京タワー") == ["東", "京", "タ", "ワ", "ー", "東京", "京タ", "タワ", "ワー"]
    assert tokenize("한국어 사용자") == [
        "한",
        "국",
        "어",
        "한국",
        "국어",
        "사",
        "용",
        "자",
        "사용",
        "용자",
    ]
    assert tokenize("v2部署") == ["v2", "部", "署", "部署"]


def test_punctuation_is_dropped_and_joiners_do_not_split_or_count():
    assert tokenize("3.14, don't!") == ["3", "14", "don", "t"]
    assert tokenize("می\u200cخواهم") == tokenize("میخواهم") == ["میخواهم"]
    assert tokenize("co\u00adoperate") == tokenize("cooperate")


def test_ascii_fast_path_agrees_with_icu():
    # Pure ASCII skips ICU; a non-ASCII character anywhere sends the same words through ICU.
    text = "Use redis_7 on eu-2, v3.1 at 09:00 (don't)"
    assert tokenize(text + " é")[:-1] == tokenize(text)


@given(st.text(max_size=60))
def test_tokens_are_words_without_spaces_and_survive_a_round_trip(text):
    tokens = tokenize(text)
    assert all(t and not any(c.isspace() for c in t) for t in tokens)
    assert all(unicodedata.category(c)[0] in "LMN" or c == "_" for t in tokens for c in t)
    assert searchable_text(text) == " ".join(tokens)
    assert tokenize(unicodedata.normalize("NFD", text)) == tokens


# --- Stemming -------------------------------------------------------------------------------


def test_english_words_are_stemmed_the_same_at_index_and_query_time():
    assert tokenize("deploys deployed deploying") == ["deploy", "deploy", "deploy"]
    assert query_terms("scheduled") == query_terms("schedule") == tokenize("schedule")
    assert searchable_text("The release schedule") == "the releas schedul"


def test_identifiers_are_not_stemmed():
    assert tokenize("max_connections redis_7 v2s") == ["max_connections", "redis_7", "v2s"]


def test_cyrillic_greek_and_armenian_words_are_stemmed_by_their_script():
    # Russian: the plural, the genitive plural and ё written as е are one term.
    assert tokenize("серверы серверов") == ["сервер", "сервер"]
    assert tokenize("короткими короткие") == tokenize("короткий")[:1] * 2
    assert tokenize("ёлка") == tokenize("елки")
    # Greek: the case endings and the accents.
    assert tokenize("διακομιστής διακομιστές") == ["διακομ", "διακομ"]
    assert tokenize("βάση βάσεις") == tokenize("βαση")[:1] * 2
    assert tokenize("սերվերներ") == ["սերվեր"]


def test_scripts_without_a_stemmer_and_mixed_words_stay_verbatim():
    # Arabic letters write several languages; CJK and Thai do not inflect here.
    assert tokenize("الخوادم") == ["الخوادم"]
    assert tokenize("サーバー") == words("サーバー")
    # A word mixing scripts (Latin and Cyrillic) belongs to no one stemmer.
    assert tokenize("serverы") == ["serverы"]


def test_stemming_is_read_from_the_setting_at_call_time():
    assert tokenize("deploys") == ["deploy"]
    with UNSTEMMED:
        assert tokenize("deploys") == ["deploys"]
        assert query_terms("scheduled") == ["scheduled"]
    assert tokenize("deploys") == ["deploy"]


def test_words_never_stem():
    assert words("Deploys deployed") == ["deploys", "deployed"]


@pytest.mark.django_db
def test_stemmed_query_finds_the_other_form(memory, me):
    entry = remember(memory, me, "The release schedule is weekly").entry
    assert lexical_candidates(memory.pk, "scheduled") == [entry.pk]


@pytest.mark.django_db
def test_unstemmed_memory_needs_the_exact_form(memory, me):
    with UNSTEMMED:
        entry = remember(memory, me, "The release schedule is weekly").entry
        assert lexical_candidates(memory.pk, "scheduled") == []
        assert lexical_candidates(memory.pk, "schedule") == [entry.pk]


# --- Stop words -----------------------------------------------------------------------------


def test_stop_words_come_from_the_package_and_are_analyzed_like_queries():
    stops = stop_terms()
    assert {"what", "is", "my", "the"} <= stops
    assert "pet" not in stops and "call" not in stops
    assert "的" in stops  # Chinese, one of the lists of languages not written in Latin letters


def test_the_floor_counts_content_terms_only():
    terms = query_terms("what is my pet called")
    assert terms == ["what", "is", "my", "pet", "call"]
    assert content_terms(terms) == ["pet", "call"]
    assert query_floor(terms) == 1  # five terms would ask for two
    # A query of stop words only: they are its content.
    assert content_terms(query_terms("what is it")) == ["what", "is", "it"]


def test_cjk_runs_are_rebuilt_from_their_bigrams_and_counted_by_content_words():
    from memory.search.common import cjk_content_words, cjk_runs

    terms = query_terms("妻の習い事は何ですか？")
    assert cjk_runs(terms) == ["妻の習い事は何ですか"]
    # ICU's words 妻 の 習い事 は 何 です か: the particles, the stop word 何 and the
    # hiragana ending ですか are not content.
    assert cjk_content_words(terms) == ["妻", "習い事"]
    mixed = query_terms("Redis のタイムアウトは30秒です")
    assert cjk_runs(mixed) == ["のタイムアウトは", "秒です"]
    assert cjk_content_words(mixed) == ["タイム", "アウト", "秒"]
    assert query_floor(mixed) == 2  # redis and three CJK words
    # A single CJK character between other words is a run of its own.
    assert cjk_runs(query_terms("port 犬 8080")) == ["犬"]
    # Only stop words and hiragana: the content terms are counted, a run by its bigrams.
    assert cjk_content_words(query_terms("これは何ですか")) == []
    assert query_floor(query_terms("これは何ですか")) == 2


@pytest.mark.django_db
def test_one_content_term_is_enough_where_stop_words_once_raised_the_floor(memory, me):
    pet = remember(memory, me, "Pet: a cat named Miso").entry
    remember(memory, me, "My laptop is what I code on")  # only stop words in common
    assert lexical_candidates(memory.pk, "what is my pet called") == [pet.pk]


@pytest.mark.django_db
def test_stop_words_are_still_searched_and_rank(memory, me):
    longer = remember(memory, me, "The pet sleeps all day long here").entry
    shorter = remember(memory, me, "Pet food is cheap").entry
    # Both have the content term; "the" puts the longer text first.
    assert lexical_candidates(memory.pk, "the pet") == [longer.pk, shorter.pk]


# --- term_count -----------------------------------------------------------------------------


def _rewrite(version_pk, **columns):
    sets = ", ".join(f"{name} = %s" for name in columns)
    with (
        transaction.atomic(),
        rewriting_derived_columns(connection, "memory_entryversion"),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f"UPDATE memory_entryversion SET {sets} WHERE id = %s", [*columns.values(), version_pk]
        )


@pytest.mark.django_db
def test_writer_stores_the_token_count(memory, me):
    result = remember(memory, me, "Deploys go to eu-2 every Tuesday")
    version = EntryVersion.objects.get(pk=result.version.pk)
    assert version.term_count == len(tokenize(version.body)) == 7
    assert version.searchable_text == searchable_text(version.body)


@pytest.mark.django_db
def test_ties_are_broken_by_the_stored_token_count(memory, me):
    a = remember(memory, me, "Leader election uses advisory locks")
    b = remember(memory, me, "Leader election flapped twice during the incident")
    assert lexical_candidates(memory.pk, "leader election") == [a.entry.pk, b.entry.pk]
    _rewrite(a.version.pk, term_count=100)
    assert lexical_candidates(memory.pk, "leader election") == [b.entry.pk, a.entry.pk]


# --- Append-only: only derived columns, only inside the rewrite -----------------------------


def _refused(sql, *, lifted=False):
    with pytest.raises(DatabaseError) as exc, transaction.atomic():
        if lifted:
            with rewriting_derived_columns(connection, "memory_entryversion"):
                connection.cursor().execute(sql)
        else:
            connection.cursor().execute(sql)
    return str(exc.value)


@pytest.mark.django_db
def test_derived_columns_are_refused_outside_the_rewrite(memory, me):
    remember(memory, me, "The deploy target is eu-2")
    assert "append-only" in _refused("UPDATE memory_entryversion SET term_count = 1")
    _rewrite(EntryVersion.objects.get().pk, term_count=1)
    # The guard is back after the block.
    assert "append-only" in _refused("UPDATE memory_entryversion SET searchable_text = 'x'")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the column check is PostgreSQL's")
def test_body_stays_append_only_even_inside_the_rewrite(memory, me):
    remember(memory, me, "The deploy target is eu-2")
    for sql in (
        "UPDATE memory_entryversion SET body = 'changed'",
        "UPDATE memory_entryversion SET content_hash = 'x', term_count = 1",
        "DELETE FROM memory_entryversion",
    ):
        assert "append-only" in _refused(sql, lifted=True)


# --- Reindex --------------------------------------------------------------------------------


def _age(version_pk):
    """Make a version look analyzed by the first analyzer (``\\w+``, no stemming, no count)."""
    body = EntryVersion.objects.get(pk=version_pk).body
    old = " ".join(re.findall(r"\w+", body.casefold()))
    _rewrite(version_pk, searchable_text=old, term_count=0)


@pytest.fixture
def aged(memory, me):
    """Versions written before the analyzer changed: Devanagari split at its vowel signs, English
    unstemmed, no token count."""
    hindi = remember(memory, me, "उपयोगकर्ता को कॉफ़ी पसंद है")
    english = remember(memory, me, "The release schedule is weekly")
    for r in (hindi, english):
        _age(r.version.pk)
    assert lexical_candidates(memory.pk, "उपयोगकर्ता") == []
    assert lexical_candidates(memory.pk, "scheduled") == []
    return hindi.entry, english.entry


def _assert_reanalyzed(memory, hindi, english):
    assert lexical_candidates(memory.pk, "उपयोगकर्ता") == [hindi.pk]
    assert lexical_candidates(memory.pk, "scheduled") == [english.pk]
    for v in EntryVersion.objects.all():
        assert (v.searchable_text, v.term_count) == (
            searchable_text(v.body),
            len(tokenize(v.body)),
        )


@pytest.mark.django_db
def test_reanalyze_recomputes_old_rows_in_batches_and_is_idempotent(memory, aged):
    batches: list[int] = []
    report = reanalyze_versions(batch_size=1, progress=batches.append)
    assert (report.rows, report.changed) == (2, 2)
    assert batches == [1, 1]
    _assert_reanalyzed(memory, *aged)
    assert reanalyze_versions().changed == 0


@pytest.mark.django_db
def test_reanalyze_check_writes_nothing(memory, aged):
    assert reanalyze_versions(check=True).changed == 2
    assert reanalyze_versions(check=True).changed == 2


@pytest.mark.django_db
def test_a_query_finds_the_other_russian_and_greek_forms(memory, me):
    russian = remember(memory, me, "Наши серверы баз данных работают во Франкфурте").entry
    greek = remember(memory, me, "Ο διακομιστής της βάσης δεδομένων είναι στην Αθήνα").entry
    assert lexical_candidates(memory.pk, "сервер базы") == [russian.pk]
    assert lexical_candidates(memory.pk, "διακομιστές") == [greek.pk]


@pytest.mark.django_db
def test_migration_0019_restems_cyrillic_versions_written_before(memory, me):
    version = remember(memory, me, "Наши серверы баз данных работают во Франкфурте").version
    _rewrite(version.pk, searchable_text="наши серверы баз данных работают во франкфурте")
    assert lexical_candidates(memory.pk, "серверов") == []
    migration = importlib.import_module("memory.migrations.0019_stem_by_script")
    migration.reindex(None, SimpleNamespace(connection=connection))
    assert lexical_candidates(memory.pk, "серверов") == [version.entry_id]
    v = EntryVersion.objects.get(pk=version.pk)
    assert v.searchable_text == searchable_text(v.body)


@pytest.mark.django_db
def test_migration_0014_reindexes_existing_versions(memory, aged):
    migration = importlib.import_module("memory.migrations.0014_analyzer_v2")
    migration.reindex(None, SimpleNamespace(connection=connection))
    _assert_reanalyzed(memory, *aged)


def _command(*args):
    out, err = StringIO(), StringIO()
    try:
        call_command("rebuild_projection", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_rebuild_projection_reports_stale_rows_then_reindexes_them(memory, aged):
    code, out, _ = _command("--check", "--no-progress")
    assert code == 1 and "analyzer: 2 of 2 versions stale (run --reindex)" in out
    code, out, err = _command("--reindex")
    assert code == 0
    assert "analyzer: 2 of 2 versions re-analyzed" in out
    assert "lexical index rebuilt." in out
    assert "analyzer" in err and "2/2" in err  # the progress bar
    _assert_reanalyzed(memory, *aged)
    code, out, _ = _command("--reindex", "--no-progress")
    assert "analyzer: 0 of 2 versions re-analyzed" in out
    code, out, _ = _command("--check", "--no-progress")
    assert code == 0 and "analyzer: 0 of 2 versions stale" in out
