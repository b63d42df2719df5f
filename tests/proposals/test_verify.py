"""Pure verification functions: detail extraction, presence, lost details, same text and the
lexical similarity (examples and properties)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memory.dedupe import lexical_similarity
from memory.text import tokenize
from proposals.verify import detail_present, extract_details, lost_details, same_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Deploy runs at 02:00 UTC via deploy.sh",
            [("02:00", "time"), ("UTC", "name"), ("deploy.sh", "identifier")],
        ),
        ("Deploys run nightly", []),
        (
            "The primary database is PostgreSQL 15.4 on db-main-1.",
            [("PostgreSQL", "identifier"), ("15.4", "version"), ("db-main-1", "identifier")],
        ),
        (
            "Feature flags live in config/flags.yaml and are read at boot.",
            [("config/flags.yaml", "path")],
        ),
        (
            "Docs at https://wiki.acme.io/Billing, run `make deploy`.",
            [("https://wiki.acme.io/Billing", "url"), ("make deploy", "code")],
        ),
        (
            "Upgraded 2026-10-14; the 3.12 migration is for 2027-Q1.",
            [("2026-10-14", "date"), ("3.12", "version"), ("2027-Q1", "date")],
        ),
        ("Mara Okafor leads billing.", [("Mara", "name"), ("Okafor", "name")]),
        ("The coverage gate is 85% on 400 lines.", [("85%", "number"), ("400", "number")]),
        (
            "CI runs on the ubuntu-22.04 image with 10s timeouts.",
            [("CI", "name"), ("ubuntu-22.04", "identifier"), ("10s", "identifier")],
        ),
        (
            "Ticket PLAT-4711 is about test_scheduler.py.",
            [("PLAT-4711", "identifier"), ("test_scheduler.py", "identifier")],
        ),
        (
            "Mail ops@acme.io and/or page P7X2K.",
            [("ops@acme.io", "email"), ("P7X2K", "identifier")],
        ),
        ("The sprint is three weeks, with one review.", [("three", "number")]),
    ],
)
def test_details_are_extracted_by_kind(text, expected):
    assert [(d.text, d.kind) for d in extract_details(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Japanese has no spaces: a CJK character ends a word (as the analyzer's words do), and a
        # number keeps its counter. The whole sentence was one identifier.
        ("APIのタイムアウトは30秒に設定されている。", [("API", "name"), ("30秒", "number")]),
        ("本番クラスタのノードは4つ。", [("4つ", "number")]),
        ("チームの定例会議は毎週水曜日の10時から。", [("水曜日", "date"), ("10時", "number")]),
        ("ステージング環境はPython 3.11で動いている。", [("Python", "name"), ("3.11", "version")]),
        ("ビルドキャッシュはs3://acme-cacheに保存される。", [("s3://acme-cache", "url")]),
        ("期間は3ヶ月、会議は2週間ごと。", [("3ヶ月", "number"), ("2週間", "number")]),
        ("3から5まで", [("3", "number"), ("5", "number")]),  # a particle is no counter
        # Korean
        ("팀 정기 회의는 매주 수요일 10시에 시작한다.", [("수요일", "date"), ("10시", "number")]),
        ("배치 작업의 재시도 횟수는 5회로 바뀌었다.", [("5회", "number")]),
        ("빌드는 3시간, 리뷰는 5분 걸린다.", [("3시간", "number"), ("5분", "number")]),
        ("3에서 5로", [("3", "number"), ("5", "number")]),
        # Russian: a weekday in the form a weekday takes ("среда" is also "environment")
        ("Планёрка проходит каждую среду в 10:00.", [("среду", "date"), ("10:00", "time")]),
        ("Тестовая среда работает на Python 3.11.", [("Python", "name"), ("3.11", "version")]),
        ("Таймаут API составляет 30 секунд.", [("API", "name"), ("30", "number")]),
        # Mixed Japanese and English
        ("deploy targetはeu-3になった", [("eu-3", "identifier")]),
        ("API gatewayのtimeoutは60秒に変更", [("API", "name"), ("60秒", "number")]),
        ("Redisのmaxmemoryは2GBに設定", [("2GB", "identifier")]),  # "Redis" opens the sentence
        # English: a weekday is a date, wherever it stands
        ("Friday deploys start at 14:00", [("Friday", "date"), ("14:00", "time")]),
    ],
)
def test_details_end_where_the_analyzers_words_do(text, expected):
    assert [(d.text, d.kind) for d in extract_details(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A CJK run starting a segment belongs to a URL or path when "/" or an extension follows.
        ("設定は/srv/データ/設定.yamlにある。", "/srv/データ/設定.yaml"),
        ("手順は docs/設定/README.md を見る", "docs/設定/README.md"),
        ("https://x.io/a/東京.htmlを参照", "https://x.io/a/東京.html"),
        # A URL's last run keeps its Han, Katakana, Hangul, up to a hiragana particle.
        ("詳細はhttps://ja.wikipedia.org/wiki/東京を参照。", "https://ja.wikipedia.org/wiki/東京"),
        ("https://example.com/wiki/東京タワーを参照", "https://example.com/wiki/東京タワー"),
        ("参见 https://zh.wikipedia.org/wiki/北京市。", "https://zh.wikipedia.org/wiki/北京市"),
        ("https://www.google.com/search?q=東京の天気", "https://www.google.com/search?q=東京"),
        ("https://example.com/docsを参照", "https://example.com/docs"),
        # Prose around paths stays out of them.
        ("/srv/data/設定ファイルを開く", "/srv/data/"),
        ("使用/etc/nginx与/etc/apache", "/etc/nginx"),
    ],
)
def test_a_url_or_path_keeps_the_cjk_characters_that_belong_to_it(text, expected):
    assert extract_details(text)[0].text == expected
    assert extract_details(text)[0].kind in ("url", "path")


@pytest.mark.parametrize(
    "text",
    [
        "詳細は https://ja.wikipedia.org/wiki/金曜日 を参照",
        "詳細はhttps://ja.wikipedia.org/wiki/金曜日を参照。",
        "자세한 내용은 https://ko.wikipedia.org/wiki/금요일 참고",
        "See https://example.com/wiki/Friday for the history",
        "営業日は https://example.com/?d=金曜",
    ],
)
def test_a_weekday_inside_a_url_is_part_of_the_url_not_a_date(text):
    # The weekday was claimed first: the URL was cut before it (or lost), and the day counted.
    details = extract_details(text)
    assert [d.kind for d in details] == ["url"]
    assert details[0].text.startswith(("https://ja.", "https://ko.", "https://example.com/"))
    assert details[0].text.endswith(("金曜日", "금요일", "Friday", "金曜"))


def test_a_weekday_beside_a_url_is_still_a_date():
    assert [(d.kind, d.key) for d in extract_details("毎週金曜日に https://x.io/a を確認")] == [
        ("date", "friday"),
        ("url", "https://x.io/a"),
    ]
    assert [(d.kind, d.key) for d in extract_details("Fridays: see https://x.io/sunday")] == [
        ("date", "friday"),
        ("url", "https://x.io/sunday"),
    ]


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("設定は /srv/金曜日/設定.yaml にある", "/srv/金曜日/設定.yaml"),
        ("Backups go to /srv/friday/backup.tar nightly", "/srv/friday/backup.tar"),
        ("Reports land in ~/reports/monday/ first", "~/reports/monday/"),
        ("See docs/sunday-runbook.md before paging", "docs/sunday-runbook.md"),
        # A relative path whose first folder is a weekday, when a file, a year or a version follows.
        ("Restore friday/db.sql first", "friday/db.sql"),
        ("Reports sit in fridays/2024/q1.csv", "fridays/2024/q1.csv"),
        ("Call Friday/v2/api for it", "Friday/v2/api"),
        ("백업은 /data/금요일/dump.sql 에 있다", "/data/금요일/dump.sql"),
    ],
)
def test_a_weekday_inside_a_path_is_part_of_the_path_not_a_date(text, path):
    # The weekday was claimed first and the path, overlapping it, was lost.
    assert [(d.kind, d.text) for d in extract_details(text)] == [("path", path)]


def test_weekdays_joined_by_slashes_are_still_dates():
    assert [(d.kind, d.key) for d in extract_details("Standups are Monday/Thursday/Friday")] == [
        ("date", "monday"),
        ("date", "thursday"),
        ("date", "friday"),
    ]
    # A weekday heading a slash phrase is a date, and what follows it keeps its own kind.
    assert [(d.kind, d.key) for d in extract_details("Deploy Friday/17:00")] == [
        ("date", "friday"),
        ("time", "17:00"),
    ]
    assert [(d.kind, d.key) for d in extract_details("Release Friday/Saturday/weekend")] == [
        ("date", "friday"),
        ("date", "saturday"),
    ]
    assert [d.kind for d in extract_details("Code freeze Friday/after-hours")] == ["date"]
    assert [(d.kind, d.key) for d in extract_details("Deploy Friday/5pm")] == [
        ("date", "friday"),
        ("time", "5pm"),
    ]
    assert [(d.kind, d.text) for d in extract_details("Run ./friday/backup.sh")] == [
        ("path", "./friday/backup.sh")
    ]
    # Rewording such a slash loses nothing.
    assert (
        lost_details(
            [("e_1", "Deploys go out Friday/17:00 UTC.")], "Deploys go out Friday at 17:00 UTC."
        )
        == []
    )
    assert [(d.kind, d.key) for d in extract_details("Deploy Friday from /srv/app/")] == [
        ("date", "friday"),
        ("path", "/srv/app/"),
    ]


def test_a_merge_that_drops_a_path_naming_a_weekday_loses_it():
    friday = "The Friday dump is written to /backups/friday/db.sql"
    lost = lost_details([("e_1", friday)], "The Friday dump is written to /backups/db.sql")
    assert [(d.text, d.kind) for d in lost] == [("/backups/friday/db.sql", "path")]


def test_a_merge_that_drops_a_url_ending_in_a_weekday_loses_it():
    friday = "定例の議事録は https://wiki.acme.jp/会議/金曜日 にある"
    saturday = "定例の議事録は https://wiki.acme.jp/会議/土曜日 にある"
    lost = lost_details([("e_1", friday)], saturday)
    assert [(d.text, d.kind) for d in lost] == [("https://wiki.acme.jp/会議/金曜日", "url")]
    assert lost_details([("e_1", friday)], friday + "。") == []


def test_a_merge_that_changes_the_cjk_part_of_a_url_loses_it():
    old = "詳細は https://ja.wikipedia.org/wiki/東京 を参照"
    lost = lost_details([("e_1", old)], "詳細は https://ja.wikipedia.org/wiki/大阪 を参照")
    assert [(d.text, d.kind) for d in lost] == [("https://ja.wikipedia.org/wiki/東京", "url")]
    assert lost_details([("e_1", old)], "詳細はhttps://ja.wikipedia.org/wiki/東京を参照。") == []


@pytest.mark.parametrize(
    ("spaced", "unspaced"),
    [
        ("APIのタイムアウトは30 秒", "APIのタイムアウトは30秒"),
        ("期間は3 ヶ月、会議は2 週間ごと。", "期間は3ヶ月、会議は2週間ごと。"),
        ("本番クラスタのノードは4 つ。", "本番クラスタのノードは4つ。"),
        ("超时为 30 秒", "超时为30秒"),
        ("빌드는 3 시간, 리뷰는 5 분 걸린다.", "빌드는 3시간, 리뷰는 5분 걸린다."),
        ("재시도 횟수는 5 회로 바뀌었다.", "재시도 횟수는 5회로 바뀌었다."),
    ],
)
def test_a_number_one_space_before_its_counter_is_the_same_value(spaced, unspaced):
    assert [d.key for d in extract_details(spaced)] == [d.key for d in extract_details(unspaced)]
    assert lost_details([("e_1", spaced)], unspaced) == []
    assert lost_details([("e_1", unspaced)], spaced) == []


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("ポート 8080 使用", "8080"),
        ("포트 8080 사용", "8080"),
        ("포트 8080 개발 서버", "8080"),  # 개 is a counter, 개발 ("development") is not
        ("ポート 8080 本番環境", "8080"),
    ],
)
def test_the_word_after_a_number_and_a_space_is_no_counter_unless_listed(text, number):
    assert [(d.text, d.key) for d in extract_details(text) if d.kind == "number"] == [
        (number, number)
    ]


def test_a_weekday_is_valued_by_its_day_in_every_language():
    texts = ("every Friday", "on Fridays", "毎週金曜日", "金曜に", "매주 금요일", "по пятницам")
    assert {d.key for t in texts for d in extract_details(t)} == {"friday"}
    assert [d.key for d in extract_details("по средам, в четверг")] == ["wednesday", "thursday"]


@pytest.mark.parametrize(
    ("detail", "text", "present"),
    [
        ("3", "Python 3.11", False),
        ("3", "30 retries", False),
        ("3.11", "Python 3.11.", True),
        ("deploy.sh", "run scripts/deploy.sh", True),
        ("UTC", "at 02:00 utc", True),
        ("eu-2", "eu-west-2", False),
        ("30秒", "タイムアウトは30秒です", True),
        ("30", "タイムアウトは300秒", False),
        ("水曜日", "毎週水曜日の会議", True),
        ("eu-3", "targetはeu-3になった", True),
    ],
)
def test_detail_presence_is_whole_token_and_case_insensitive(detail, text, present):
    assert detail_present(detail, text) is present


def test_a_count_written_out_is_a_detail_a_merge_can_lose():
    lost = lost_details(
        [("e_1", "The sprint length is two weeks."), ("e_2", "The sprint length is three weeks.")],
        "The sprint length is two weeks.",
    )
    assert [(d.text, d.kind, d.entries) for d in lost] == [("three", "number", ["e_2"])]


def test_lost_details_name_their_entries_once():
    lost = lost_details(
        [("e_1", "Deploy at 02:00 UTC"), ("e_2", "Deploys at 02:00 UTC via deploy.sh")],
        "Deploys run nightly at 02:00",
    )
    assert [(d.text, d.entries) for d in lost] == [("UTC", ["e_1", "e_2"]), ("deploy.sh", ["e_2"])]


def test_same_text_ignores_only_case_punctuation_and_spacing():
    assert same_text("Redis is only a cache.", "redis  is ONLY a cache")
    assert not same_text("Redis is only a cache", "Redis is a cache")


WORDS = st.sampled_from(
    [
        "Deploy",
        "runs",
        "at",
        "02:00",
        "UTC",
        "via",
        "deploy.sh",
        "PostgreSQL",
        "15.4",
        "eu-west-2",
        "the",
        "Mara",
        "Okafor",
        "scripts/run.sh",
        "85%",
        "v2",
        "3",
        "2026-10-14",
        "`make`",
        "Q3",
        "https://x.io/a",
        "and",
        "部署",
        "on",
        "Fridays",
        ".",
    ]
)
TEXTS = st.lists(WORDS, min_size=1, max_size=20).map(" ".join)


@given(TEXTS)
def test_a_body_never_loses_its_own_details(text):
    assert lost_details([("e", text)], text) == []


@given(TEXTS, TEXTS)
def test_appending_text_never_loses_details(text, more):
    assert lost_details([("e", text)], f"{text} {more}") == []


@given(TEXTS, TEXTS)
def test_lexical_similarity_is_symmetric_and_bounded(a, b):
    s = lexical_similarity(a, b)
    assert s == lexical_similarity(b, a)
    assert 0.0 <= s <= 1.0


@given(TEXTS)
def test_a_text_with_words_is_identical_to_itself(text):
    assume(tokenize(text))
    assert lexical_similarity(text, text) == 1.0


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Indent with 4 spaces.", "4"),
        ("Indent with four spaces.", "4"),
        ("Keep 04 replicas.", "4"),
        ("The team has twenty-five engineers.", "25"),
        ("The team has twenty five engineers.", "25"),
        ("Coverage stays above 80%.", "80%"),
    ],
)
def test_a_count_is_compared_by_its_number_however_it_is_written(text, key):
    assert [d.key for d in extract_details(text) if d.kind == "number"] == [key]


def test_a_count_written_another_way_is_not_lost():
    assert lost_details([("e_1", "Indent with four spaces.")], "Indent with 4 spaces.") == []
    lost = lost_details([("e_1", "Indent with four spaces.")], "Indent with 2 spaces.")
    assert [(d.text, d.kind) for d in lost] == [("four", "number")]


def test_a_weekday_matched_regardless_of_case_is_valued_by_its_day():
    # The pattern matches case-insensitively, where a dotless ı stands for i: "FRıDAY" is
    # Friday (its casefold, "frıday", does not start with "fri").
    assert [(d.kind, d.key) for d in extract_details("Standup every FRıDAY at 10:00")] == [
        ("date", "friday"),
        ("time", "10:00"),
    ]


def test_a_number_too_long_for_an_integer_is_compared_by_its_text():
    long = "9" * 5000
    assert [(d.kind, d.key) for d in extract_details(f"The seed is {long}.")] == [("number", long)]


# --- Clauses and glued contradictions ------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "kind", "text"),
    [
        (
            "Redis is used only for rate limits; never store sessions in it.",
            "Redis is used for rate limits and sessions.",
            "negation",
            "never store sessions in it",
        ),
        (
            "Redis is used only for rate limits; never store sessions in it.",
            "Redis is used for rate limits and sessions.",
            "restriction",
            "only for rate limits",
        ),
        (
            "Deploys run every weekday except Friday.",
            "Deploys run every weekday.",
            "restriction",
            "except Friday",
        ),
        (
            "Merge to main unless the nightly build is red.",
            "Merge to main.",
            "restriction",
            "unless the nightly build is red",
        ),
        (
            "If the queue is full, drop the oldest job.",
            "Drop the oldest job.",
            "condition",
            "If the queue is full",
        ),
        (
            "When a deploy fails, page the on-call engineer.",
            "Page the on-call engineer.",
            "condition",
            "When a deploy fails",
        ),
        (
            "Tests must pass before merging.",
            "Tests pass before merging.",
            "modality",
            "must pass before merging",
        ),
        (
            "Always run the linter before committing.",
            "Run the linter before committing.",
            "modality",
            "Always run the linter before committing",
        ),
        (
            "Никогда не пушьте напрямую в main.",
            "Пушьте напрямую в main.",
            "negation",
            "Никогда не пушьте напрямую в main",
        ),
        (
            "Только администраторы меняют ключи API.",
            "Администраторы меняют ключи API.",
            "restriction",
            "Только администраторы меняют ключи API",
        ),
        (
            "Если очередь переполнена, удаляйте старые задачи.",
            "Удаляйте старые задачи.",
            "condition",
            "Если очередь переполнена",
        ),
        (
            "金曜日はデプロイしない。",
            "金曜日はデプロイする。",
            "negation",
            "金曜日はデプロイしない",
        ),
        ("本番環境のみデプロイする。", "本番環境にデプロイする。", "restriction", "本番環境のみ"),
        (
            "ビルドが失敗した場合は再試行する。",
            "ビルドを再試行する。",
            "condition",
            "ビルドが失敗した場合",
        ),
        (
            "マージ前に必ずレビューを受ける。",
            "マージ前にレビューを受ける。",
            "modality",
            "必ずレビューを受ける",
        ),
        (
            "금요일에는 배포하지 않는다.",
            "금요일에는 배포한다.",
            "negation",
            "금요일에는 배포하지 않는다",
        ),
        ("주말에만 배포한다.", "주말에 배포한다.", "restriction", "주말에만"),
        ("빌드가 실패하면 재시도한다.", "빌드를 재시도한다.", "condition", "빌드가 실패하면"),
        (
            "반드시 리뷰를 받고 병합한다.",
            "리뷰를 받고 병합한다.",
            "modality",
            "반드시 리뷰를 받고 병합한다",
        ),
    ],
)
def test_a_dropped_clause_is_a_lost_detail_in_every_language_the_passes_read(
    before, after, kind, text
):
    lost = lost_details([("e_1", before)], after)
    assert (text, kind) in [(d.text, d.kind) for d in lost]
    assert all(d.entries == ["e_1"] for d in lost)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Never push directly to main.", "Direct commits to main are forbidden."),
        (
            "Unless the build is green, nothing is merged to main.",
            "Nothing is merged to main unless the build is green.",
        ),
        ("If a migration fails, the deploy stops.", "The deploy stops if a migration fails."),
        ("Only admins may rotate the API keys.", "API keys may be rotated only by admins."),
        ("金曜日はデプロイしない。", "デプロイは金曜日にはしない。"),
        ("주말에만 배포한다.", "배포는 주말에만 한다."),
    ],
)
def test_a_clause_restated_in_other_words_is_kept(before, after):
    assert lost_details([("e_1", before)], after) == []


def test_glued_contradictions_are_found_and_restatements_are_not():
    from proposals.bodies import glued_conflicts, merged_body

    migrations = (
        "Database migrations are applied automatically by the deploy pipeline.",
        "Database migrations are applied by hand by the on-call engineer.",
    )
    (c,) = glued_conflicts(merged_body(list(migrations)), migrations)
    assert (c.first, c.second, c.how) == (*migrations, "complement")
    assert glued_conflicts("The team sync is every Wednesday. The team sync is every Thursday.")
    assert glued_conflicts("Deploys on Fridays are allowed. Deploys on Fridays are not allowed.")
    assert glued_conflicts("エディタは深色テーマを使う。エディタは浅色テーマを使う。")
    for fine in (
        "The build cache lives in s3://acme-cache. The build cache is purged weekly.",
        "The API timeout is set to 30 seconds. The API timeout is configured to 30 seconds.",
        "The build cache lives in s3://acme-cache, owned by Mara Okafor. It is purged weekly.",
        "The staging DB is db-stage-3. The staging cache is redis-2.",
    ):
        assert glued_conflicts(fine) == [], fine
    # A pair that already stands in one input is that input's wording, not the change's.
    both = "Standup is at 9:30. Standup is at 10:00."
    assert glued_conflicts(both, [both]) == []


def test_a_japanese_half_hour_is_its_own_value():
    assert [
        d.text for d in lost_details([("e_1", "朝会は9時半に始まる。")], "朝会は9時に始まる。")
    ] == ["9時半"]
