"""Labelled memories for ``manage.py evaluate passes``: what the maintenance passes should find in
one Memory per language, and what they must leave alone.

The same workload is written in English, Japanese, Korean, Russian and mixed Japanese/English
(the way a Japanese developer's agent notes down English terms): the shapes of
``bench/maintenance_corpus.py`` (the English corpus of ``bench/maintenance_eval.py``), with the
values written as each language writes them — Japanese and Korean without spaces around numbers
and units ("30秒", "4つ", "10시", "3회"), weekdays as words ("水曜日", "수요일", "среда").

- ``duplicates`` — groups of facts restating one fact in close wording: one consolidation each
  (the near-duplicate pass).
- ``contradictions`` — (older, newer) current-state facts giving one slot another value: one
  ``conflicts_with`` observation each (the contradiction pass).
- ``themes`` — working notes recurring in different sessions: one promotion each.
- Must be left alone: ``not_duplicates`` (facts worded alike with one word of another value —
  "dark" / "light" theme: never merged), ``controls`` (current-state facts with values about
  near-topic *other* subjects: never in a conflict), ``singles`` (notes of one session only:
  never promoted), ``distractors`` (unrelated facts).

Written by hand by the people who wrote the passes: a regression check per language, not a
general accuracy claim.
"""

from __future__ import annotations

from typing import TypedDict


class Corpus(TypedDict):
    duplicates: list[list[str]]
    contradictions: list[tuple[str, str]]
    not_duplicates: list[tuple[str, str]]
    controls: list[str]
    distractors: list[str]
    #: Each theme: [(session, body), ...].
    themes: list[list[tuple[str, str]]]
    singles: list[list[tuple[str, str]]]


CORPORA: dict[str, Corpus] = {
    "en": {
        "duplicates": [
            [
                "The build cache lives in s3://acme-cache and is purged weekly",
                "The build cache lives in s3://acme-cache",
            ],
            [
                "Production deploys run every Tuesday at 14:00",
                "Every Tuesday at 14:00 the production deploys run",
            ],
            [
                "The user wants code review comments in English",
                "The user wants the code review comments written in English",
            ],
            [
                "The API timeout is set to 30 seconds",
                "The API timeout is configured to 30 seconds",
            ],
            [
                "The production database backup runs every night at 03:00 and the result is "
                "posted to the ops channel",
                "Every night at 03:00 the production database backup runs and its result gets "
                "posted in the ops channel",
            ],
        ],
        "contradictions": [
            (
                "The team sync is every Wednesday at 10:00",
                "The team sync is every Thursday at 10:00",
            ),
            ("The batch job retries 3 times", "The batch job now retries 5 times"),
            ("Staging runs Python 3.11", "Staging runs Python 3.12"),
            ("The production cluster has 4 nodes", "The production cluster has 6 nodes"),
        ],
        "not_duplicates": [
            ("The editor uses the dark theme", "The editor uses the light theme"),
        ],
        "controls": [
            "The design review is every Friday at 15:00",
            "Production runs Python 3.10",
            "The backup job retries 2 times",
            "The search cluster has 3 nodes",
            "The dev environment timeout is 10 seconds",
        ],
        "distractors": [
            "Customer emails are answered within one business day",
            "The design system components live in packages/ui",
            "The analytics warehouse is refreshed every hour",
            "Interns get a laptop on their first day",
            "Localization strings are managed in Crowdin",
            "The VPN client is WireGuard",
        ],
        "themes": [
            [
                ("en-a1", "test_checkout is flaky because of the timezone in CI"),
                ("en-a2", "test_checkout flaky again: the timezone in CI differs"),
            ],
            [
                ("en-b1", "The docker build fails when the pip cache volume is missing"),
                ("en-b2", "docker build failed again because the pip cache volume was missing"),
            ],
            [
                ("en-c1", "Remember to regenerate the OpenAPI client after changing serializers"),
                ("en-c2", "Had to regenerate the OpenAPI client after changing the serializers"),
            ],
        ],
        "singles": [
            [
                ("en-x1", "The lint step is slow because mypy has no cache"),
                ("en-x1", "mypy has no cache so the lint step is slow"),
            ],
            [("en-x2", "The screenshot tests need a fixed font")],
        ],
    },
    "ja": {
        "duplicates": [
            [
                "ビルドキャッシュはs3://acme-cacheに保存され、毎週削除される。",
                "ビルドキャッシュはs3://acme-cacheに保存される。",
            ],
            [
                "本番のデプロイは毎週火曜日の14時に行う。",
                "本番デプロイは毎週火曜日14時に行う。",
            ],
            [
                "ユーザーはコードレビューのコメントを日本語で欲しい。",
                "ユーザーはコードレビューのコメントを日本語で欲しがっている。",
            ],
            [
                "APIのタイムアウトは30秒に設定されている。",
                "APIのタイムアウトは30秒に設定している。",
            ],
            [
                "本番データベースのバックアップは毎晩3時に実行され、結果は運用チャンネルに通知される。",
                "本番データベースのバックアップは毎晩3時に実行されて、その結果が運用チャンネルへ通知されます。",
            ],
        ],
        "contradictions": [
            (
                "チームの定例会議は毎週水曜日の10時から。",
                "チームの定例会議は毎週木曜日の10時から。",
            ),
            ("バッチ処理のリトライ回数は3回。", "バッチ処理のリトライ回数は5回に変更した。"),
            (
                "ステージング環境はPython 3.11で動いている。",
                "ステージング環境はPython 3.12で動いている。",
            ),
            ("本番クラスタのノードは4つ。", "本番クラスタのノードは6つ。"),
        ],
        "not_duplicates": [
            ("エディタは深色テーマを使う。", "エディタは浅色テーマを使う。"),
            # A negation ("use" / "do not use") is another value of the slot too.
            (
                "社内チャットでは絵文字リアクションを使います。",
                "社内チャットでは絵文字リアクションを使いません。",
            ),
            # An adjective negated in its く form ("fast" / "not fast").
            ("ステージングのレスポンスは速い。", "ステージングのレスポンスは速くない。"),
        ],
        "controls": [
            "デザインレビューは毎週金曜日の15時から。",
            "本番環境はPython 3.10で動いている。",
            "バックアップのリトライ回数は2回。",
            "検索クラスタのノードは3つ。",
            "開発環境のタイムアウトは10秒。",
        ],
        "distractors": [
            "顧客からのメールには1営業日以内に返信する。",
            "デザインシステムのコンポーネントはpackages/uiにある。",
            "分析用のデータウェアハウスは毎時更新される。",
            "新人には初日にノートPCを渡す。",
            "翻訳文字列はCrowdinで管理している。",
            "VPNクライアントはWireGuardを使う。",
        ],
        "themes": [
            [
                ("ja-a1", "CIでtest_checkoutがタイムゾーンのせいで失敗する"),
                ("ja-a2", "test_checkoutがまたCIのタイムゾーンのせいで失敗した"),
            ],
            [
                ("ja-b1", "pipキャッシュのボリュームがないとdockerビルドが失敗する"),
                ("ja-b2", "pipキャッシュのボリュームがなくてdockerビルドがまた失敗した"),
            ],
            [
                ("ja-c1", "シリアライザを変更したらOpenAPIクライアントを再生成する"),
                ("ja-c2", "シリアライザの変更後にOpenAPIクライアントを再生成する必要があった"),
            ],
        ],
        "singles": [
            [
                ("ja-x1", "mypyのキャッシュがないのでlintが遅い"),
                ("ja-x1", "lintが遅いのはmypyのキャッシュがないから"),
            ],
            [("ja-x2", "スクリーンショットテストには固定フォントが必要")],
        ],
    },
    "ko": {
        "duplicates": [
            [
                "빌드 캐시는 s3://acme-cache에 저장되고 매주 삭제된다.",
                "빌드 캐시는 s3://acme-cache에 저장된다.",
            ],
            [
                "프로덕션 배포는 매주 화요일 오후 2시에 한다.",
                "프로덕션 배포는 매주 화요일 오후 2시에 진행한다.",
            ],
            [
                "사용자는 코드 리뷰 코멘트를 한국어로 받기를 원한다.",
                "사용자는 코드 리뷰 코멘트를 한국어로 받고 싶어 한다.",
            ],
            [
                "API 타임아웃은 30초로 설정되어 있다.",
                "API 타임아웃은 30초로 설정돼 있다.",
            ],
            [
                "프로덕션 데이터베이스 백업은 매일 밤 3시에 실행되고 "
                "결과는 운영 채널로 알림이 간다.",
                "프로덕션 데이터베이스 백업은 매일 밤 3시에 실행되며 "
                "그 결과는 운영 채널에 알림으로 전달된다.",
            ],
        ],
        "contradictions": [
            (
                "팀 정기 회의는 매주 수요일 10시에 시작한다.",
                "팀 정기 회의는 매주 목요일 10시에 시작한다.",
            ),
            ("배치 작업의 재시도 횟수는 3회이다.", "배치 작업의 재시도 횟수는 5회로 바뀌었다."),
            (
                "스테이징 환경은 Python 3.11에서 실행된다.",
                "스테이징 환경은 Python 3.12에서 실행된다.",
            ),
            ("프로덕션 클러스터의 노드는 4개이다.", "프로덕션 클러스터의 노드는 6개이다."),
        ],
        "not_duplicates": [
            ("에디터는 어두운 테마를 사용한다.", "에디터는 밝은 테마를 사용한다."),
            # A negation ("use" / "do not use") is another value of the slot too.
            (
                "사내 채팅에서는 이모지 반응을 사용한다.",
                "사내 채팅에서는 이모지 반응을 사용하지 않는다.",
            ),
            # 아니다 ("is not") against 이다 ("is").
            ("스테이징 서버는 배포 전용 서버이다.", "스테이징 서버는 배포 전용 서버가 아니다."),
        ],
        "controls": [
            "디자인 리뷰는 매주 금요일 15시에 시작한다.",
            "프로덕션 환경은 Python 3.10에서 실행된다.",
            "백업 작업의 재시도 횟수는 2회이다.",
            "검색 클러스터의 노드는 3개이다.",
            "개발 환경의 타임아웃은 10초이다.",
        ],
        "distractors": [
            "고객 이메일에는 영업일 기준 하루 안에 답한다.",
            "디자인 시스템 컴포넌트는 packages/ui에 있다.",
            "분석 데이터 웨어하우스는 매시간 갱신된다.",
            "신입에게는 첫날 노트북을 지급한다.",
            "번역 문자열은 Crowdin에서 관리한다.",
            "VPN 클라이언트는 WireGuard이다.",
        ],
        "themes": [
            [
                ("ko-a1", "CI에서 test_checkout이 시간대 때문에 실패한다"),
                ("ko-a2", "test_checkout이 CI의 시간대 때문에 또 실패했다"),
            ],
            [
                ("ko-b1", "pip 캐시 볼륨이 없으면 docker 빌드가 실패한다"),
                ("ko-b2", "pip 캐시 볼륨이 없어서 docker 빌드가 또 실패했다"),
            ],
            [
                ("ko-c1", "시리얼라이저를 바꾸면 OpenAPI 클라이언트를 다시 생성해야 한다"),
                ("ko-c2", "시리얼라이저를 바꾼 뒤 OpenAPI 클라이언트를 다시 생성해야 했다"),
            ],
        ],
        "singles": [
            [
                ("ko-x1", "mypy 캐시가 없어서 lint 단계가 느리다"),
                ("ko-x1", "lint 단계가 느린 것은 mypy 캐시가 없기 때문이다"),
            ],
            [("ko-x2", "스크린샷 테스트에는 고정 글꼴이 필요하다")],
        ],
    },
    "ru": {
        "duplicates": [
            [
                "Кэш сборки хранится в s3://acme-cache и очищается каждую неделю.",
                "Кэш сборки хранится в s3://acme-cache.",
            ],
            [
                "Деплой в продакшн выполняется каждый вторник в 14:00.",
                "Каждый вторник в 14:00 выполняется деплой в продакшн.",
            ],
            [
                "Пользователь хочет получать комментарии к ревью на русском языке.",
                "Комментарии к ревью пользователь хочет получать на русском языке.",
            ],
            ["Таймаут API составляет 30 секунд.", "Таймаут API — 30 секунд."],
            [
                "Резервное копирование продакшн-базы запускается каждую ночь в 03:00, а результат "
                "отправляется в канал ops.",
                "Каждую ночь в 03:00 запускается резервное копирование продакшн-базы, результат "
                "отправляется в канал ops.",
            ],
        ],
        "contradictions": [
            (
                "Планёрка команды проходит каждую среду в 10:00.",
                "Планёрка команды проходит каждый четверг в 10:00.",
            ),
            (
                "Число повторных попыток пакетной задачи — 3.",
                "Число повторных попыток пакетной задачи теперь 5.",
            ),
            ("Стейджинг работает на Python 3.11.", "Стейджинг работает на Python 3.12."),
            ("В продакшн-кластере 4 узла.", "В продакшн-кластере 3 узла."),
        ],
        "not_duplicates": [
            ("Редактор использует тёмную тему.", "Редактор использует светлую тему."),
        ],
        "controls": [
            "Дизайн-ревью проходит каждую пятницу в 15:00.",
            "Продакшн работает на Python 3.10.",
            "Число повторных попыток резервного копирования — 2.",
            "В поисковом кластере 2 узла.",
            "Таймаут dev-окружения составляет 10 секунд.",
        ],
        "distractors": [
            "На письма клиентов отвечаем в течение одного рабочего дня.",
            "Компоненты дизайн-системы лежат в packages/ui.",
            "Аналитическое хранилище обновляется каждый час.",
            "Новичкам выдают ноутбук в первый день.",
            "Строки перевода ведутся в Crowdin.",
            "VPN-клиент — WireGuard.",
        ],
        "themes": [
            [
                ("ru-a1", "test_checkout падает в CI из-за часового пояса"),
                ("ru-a2", "test_checkout снова падает в CI из-за часового пояса"),
            ],
            [
                ("ru-b1", "docker-сборка падает без тома с кэшем pip"),
                ("ru-b2", "docker-сборка снова падает без тома с кэшем pip"),
            ],
            [
                ("ru-c1", "после изменения сериализаторов нужно перегенерировать клиент OpenAPI"),
                (
                    "ru-c2",
                    "после изменения сериализаторов пришлось перегенерировать клиент OpenAPI",
                ),
            ],
        ],
        "singles": [
            [
                ("ru-x1", "lint медленный, потому что у mypy нет кэша"),
                ("ru-x1", "у mypy нет кэша, поэтому lint медленный"),
            ],
            [("ru-x2", "скриншотным тестам нужен фиксированный шрифт")],
        ],
    },
    "ja-en": {
        "duplicates": [
            [
                "Deploy pipelineはGitHub Actionsで動いている",
                "Deploy pipelineはGitHub Actions上で動いている",
            ],
            [
                "Redisのmaxmemoryは2GBに設定している",
                "Redisのmaxmemoryは2GBに設定されている",
            ],
            ["PRのreviewには2人のapproveが必要", "PRのreviewには2人のapproveが必須"],
            ["log retentionはLokiで30日", "Lokiのlog retentionは30日"],
            [
                "本番DBのbackupは毎晩3時に実行され、結果はopsチャンネルに通知される",
                "本番DBのbackupは毎晩3時に実行されて、その結果がopsチャンネルへ通知されます",
            ],
        ],
        "contradictions": [
            (
                "sprint planningは毎週水曜日の10:00から",
                "sprint planningは毎週木曜日の10:00から",
            ),
            ("API gatewayのtimeoutは30秒", "API gatewayのtimeoutは60秒に変更"),
            (
                "staging DBはPostgreSQL 15を使っている",
                "staging DBはPostgreSQL 16を使っている",
            ),
            ("deploy targetはeu-2", "deploy targetはeu-3になった"),
        ],
        "not_duplicates": [
            ("editorはdark themeを使う", "editorはlight themeを使う"),
        ],
        "controls": [
            "design reviewは毎週金曜日の15:00から",
            "production DBはPostgreSQL 14を使っている",
            "batch jobのtimeoutは10秒",
            "backup targetはeu-central-1",
            "on-callは6人で回している",
        ],
        "distractors": [
            "customerのmailには1営業日以内に返信する",
            "design systemのcomponentはpackages/uiにある",
            "analytics warehouseは毎時更新される",
            "新人には初日にlaptopを渡す",
            "翻訳stringはCrowdinで管理",
            "VPN clientはWireGuard",
        ],
        "themes": [
            [
                ("je-a1", "test_checkoutがCIのtimezoneのせいでflakyになる"),
                ("je-a2", "test_checkoutがまたCIのtimezoneのせいでflakyだった"),
            ],
            [
                ("je-b1", "pip cacheのvolumeがないとdocker buildが失敗する"),
                ("je-b2", "pip cacheのvolumeがなくてdocker buildがまた失敗した"),
            ],
            [
                ("je-c1", "serializerを変えたらOpenAPI clientを再生成すること"),
                ("je-c2", "serializerを変えた後OpenAPI clientを再生成する必要があった"),
            ],
        ],
        "singles": [
            [
                ("je-x1", "mypyのcacheがないのでlintが遅い"),
                ("je-x1", "lintが遅いのはmypyのcacheがないせい"),
            ],
            [("je-x2", "screenshot testには固定fontが必要")],
        ],
    },
}

LANGUAGES = tuple(CORPORA)


def expected_findings(corpus: Corpus) -> int:
    """What the passes should file for ``corpus``: one consolidation per duplicate group, one
    conflict per contradiction, one promotion per theme."""
    return len(corpus["duplicates"]) + len(corpus["contradictions"]) + len(corpus["themes"])
