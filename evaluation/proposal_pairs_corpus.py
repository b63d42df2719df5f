"""Labelled pairs for ``manage.py evaluate passes``: does the near-duplicate pass file a
consolidation only for restatements, and does verification name what a change loses or
contradicts?

Each pair ``(a, b)`` of agent memories carries one of four labels, in English, Japanese,
Korean and Russian (the languages the passes read):

- ``restatement`` — ``b`` says what ``a`` says (reordered, inflected, a filler word more or
  less, a count written out). The near-duplicate pass should file a consolidation; a change
  replacing ``a`` by ``b``, or merging the two, loses and contradicts nothing.
- ``different_fact`` — one subject, another fact: another method, actor, place, value or
  polarity ("migrations are applied automatically by the deploy pipeline" / "… by hand by the
  on-call engineer"). The pass must never merge them (a ``conflicts_with`` observation at
  most).
- ``contradiction`` — one subject, two incompatible values. Never merged; a merge of the two
  (what the pass glued before: both sentences, extractively) fails verification.
- ``dropped_clause`` — ``b`` is ``a`` without a clause that limits it: a negation ("never"),
  a restriction ("only", "except", "unless"), a condition ("if", "when") or a modality
  ("must", "always"), or without a value ("09:00 CET"). Never merged; a change replacing ``a``
  by ``b`` must name the lost clause.

Written by hand by the people who wrote the rules: a regression check per language, not a
general accuracy claim.
"""

from __future__ import annotations

from typing import NamedTuple

RESTATEMENT = "restatement"
DIFFERENT_FACT = "different_fact"
CONTRADICTION = "contradiction"
DROPPED_CLAUSE = "dropped_clause"
LABELS = (RESTATEMENT, DIFFERENT_FACT, CONTRADICTION, DROPPED_CLAUSE)
LANGUAGES = ("en", "ja", "ko", "ru")


class Pair(NamedTuple):
    id: str
    lang: str
    label: str
    a: str
    b: str


_TEXTS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "en": {
        RESTATEMENT: [
            (
                "Production deploys run every Tuesday at 14:00.",
                "Every Tuesday at 14:00 the production deploys run.",
            ),
            (
                "The user wants code review comments in English.",
                "The user wants the code review comments written in English.",
            ),
            (
                "The nightly backup of the billing database runs at 03:00 UTC.",
                "At 03:00 UTC the nightly backup of the billing database runs.",
            ),
            (
                "The frontend is built with Vite and deployed to Netlify.",
                "The frontend gets built with Vite and deployed to Netlify.",
            ),
            ("The staging cluster has 4 nodes.", "The staging cluster has four nodes."),
            (
                "Feature flags are managed in LaunchDarkly.",
                "Feature flags are all managed in LaunchDarkly.",
            ),
            (
                "The user prefers tabs over spaces in Makefiles.",
                "In Makefiles the user prefers tabs over spaces.",
            ),
            (
                "Error reports from the mobile app go to Sentry.",
                "Error reports from the mobile app are sent to Sentry.",
            ),
            (
                "The release branch is cut every second Monday.",
                "Every second Monday the release branch is cut.",
            ),
            (
                "Integration tests run in the ci-integration job.",
                "The integration tests run in the ci-integration job.",
            ),
            (
                "The design docs live in the docs/design folder.",
                "Design docs live in the docs/design folder.",
            ),
            (
                "Customer data is stored in the eu-west-1 region.",
                "Customer data is kept in the eu-west-1 region.",
            ),
            (
                "The on-call engineer is paged through PagerDuty.",
                "The on-call engineer gets paged through PagerDuty.",
            ),
            (
                "Redis is used only for rate limits; never store sessions in it.",
                "Redis is used only for rate limits, and never store sessions in it.",
            ),
            (
                "Unless the build is green, nothing is merged to main.",
                "Nothing is merged to main unless the build is green.",
            ),
            (
                "If a migration fails, the deploy stops.",
                "The deploy stops if a migration fails.",
            ),
            (
                "The API timeout is 30 seconds.",
                "The API timeout is thirty seconds.",
            ),
            (
                "Python code is indented with 4 spaces.",
                "Python code is indented with four spaces.",
            ),
            (
                "Docker images are pushed to ghcr.io/acme.",
                "The Docker images are pushed to ghcr.io/acme after each build.",
            ),
            (
                "Code review comments must be written in English.",
                "Code review comments must always be written in English.",
            ),
        ],
        DIFFERENT_FACT: [
            (
                "The changelog is written by the release manager.",
                "The changelog is generated from commit messages.",
            ),
            (
                "Dashboards are edited in the Grafana UI.",
                "Dashboards are provisioned from grafana/dashboards/*.json.",
            ),
            (
                "Releases are approved by the product owner.",
                "Releases are approved by the security team.",
            ),
            (
                "Secrets are stored in HashiCorp Vault.",
                "Secrets are stored in environment files on the hosts.",
            ),
            (
                "The staging database is db-stage-3.",
                "The staging cache is redis-2.",
            ),
            (
                "The payments service is owned by Mara Okafor.",
                "The payments service is deployed by the platform team.",
            ),
            (
                "Log retention is 30 days in staging.",
                "Log retention is 90 days in production.",
            ),
            (
                "Pull requests are reviewed by two engineers.",
                "Pull requests are merged by the release bot.",
            ),
            (
                "The search index is rebuilt nightly from the primary database.",
                "The search index is rebuilt manually after each schema change.",
            ),
            (
                "Load tests run against the staging environment.",
                "Load tests run against a dedicated perf cluster.",
            ),
        ],
        CONTRADICTION: [
            (
                "The team sync is every Wednesday at 10:00.",
                "The team sync is every Thursday at 10:00.",
            ),
            ("The batch job retries 3 times.", "The batch job now retries 5 times."),
            ("Staging runs Python 3.11.", "Staging runs Python 3.12."),
            ("The production cluster has 4 nodes.", "The production cluster has 6 nodes."),
            ("Deploys on Fridays are allowed.", "Deploys on Fridays are not allowed."),
            (
                "Database migrations are applied automatically by the deploy pipeline.",
                "Database migrations are applied by hand by the on-call engineer.",
            ),
            (
                "The daily standup starts at 09:00 CET.",
                "The daily standup starts at 09:30 CET.",
            ),
            ("The editor uses the dark theme.", "The editor uses the light theme."),
            (
                "The API rate limit is 100 requests per minute.",
                "The API rate limit is 500 requests per minute.",
            ),
            (
                "Backups are encrypted with the prod-kms key.",
                "Backups are encrypted with the legacy-gpg key.",
            ),
            (
                "Hotfixes are deployed by the release manager.",
                "Hotfixes are deployed by whoever wrote the fix.",
            ),
            ("The default branch is main.", "The default branch is master."),
        ],
        DROPPED_CLAUSE: [
            (
                "Redis is used only for rate limits; never store sessions in it.",
                "Redis is used for rate limits and 5 other caches.",
            ),
            (
                "Never push directly to main.",
                "Push directly to main.",
            ),
            (
                "Only admins may rotate the API keys.",
                "Admins may rotate the API keys.",
            ),
            (
                "Deploys run every weekday except Friday.",
                "Deploys run every weekday.",
            ),
            (
                "Merge to main unless the nightly build is red.",
                "Merge to main.",
            ),
            (
                "If the queue is full, drop the oldest job.",
                "Drop the oldest job.",
            ),
            (
                "When a deploy fails, page the on-call engineer.",
                "Page the on-call engineer.",
            ),
            (
                "Tests must pass before merging.",
                "Tests pass before merging.",
            ),
            (
                "Always run the linter before committing.",
                "Run the linter before committing.",
            ),
            (
                "Secrets should never be logged.",
                "Secrets should be logged.",
            ),
            (
                "The daily report is sent at 09:00 CET.",
                "The daily report is sent every morning.",
            ),
            (
                "Do not restart the primary database during business hours.",
                "Restart the primary database during business hours.",
            ),
        ],
    },
    "ja": {
        RESTATEMENT: [
            (
                "本番のデプロイは毎週火曜日の14時に行う。",
                "毎週火曜日の14時に本番のデプロイを行う。",
            ),
            (
                "APIのタイムアウトは30秒に設定されている。",
                "APIのタイムアウトは30秒に設定している。",
            ),
            (
                "ユーザーはコードレビューのコメントを日本語で欲しい。",
                "ユーザーはコードレビューのコメントを日本語で欲しがっている。",
            ),
            (
                "ビルドキャッシュはs3://acme-cacheに保存される。",
                "ビルドキャッシュはs3://acme-cacheに保存されている。",
            ),
            (
                "ステージングクラスタのノードは4つ。",
                "ステージングクラスタにはノードが4つある。",
            ),
            (
                "エラーレポートはSentryに送られる。",
                "エラーレポートはSentryへ送られる。",
            ),
            (
                "デザイン資料はdocs/designにある。",
                "デザイン資料はdocs/designに置いてある。",
            ),
            (
                "顧客データはeu-west-1リージョンに保存する。",
                "顧客データの保存先はeu-west-1リージョン。",
            ),
            (
                "オンコール担当者にはPagerDutyで通知する。",
                "PagerDutyでオンコール担当者に通知する。",
            ),
            (
                "機能フラグはLaunchDarklyで管理している。",
                "機能フラグはすべてLaunchDarklyで管理している。",
            ),
        ],
        DIFFERENT_FACT: [
            (
                "データベースのマイグレーションはデプロイパイプラインが自動で適用する。",
                "データベースのマイグレーションはオンコール担当者が手作業で適用する。",
            ),
            (
                "ダッシュボードはGrafanaの画面で編集する。",
                "ダッシュボードはgrafana/dashboards/*.jsonから配布する。",
            ),
            (
                "リリースはプロダクトオーナーが承認する。",
                "リリースはセキュリティチームが承認する。",
            ),
            (
                "シークレットはVaultに保存する。",
                "シークレットは各ホストの環境ファイルに保存する。",
            ),
            (
                "ステージングのデータベースはdb-stage-3。",
                "ステージングのキャッシュはredis-2。",
            ),
            (
                "ログの保持期間はステージングで30日。",
                "ログの保持期間は本番で90日。",
            ),
        ],
        CONTRADICTION: [
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
            (
                "社内チャットでは絵文字リアクションを使います。",
                "社内チャットでは絵文字リアクションを使いません。",
            ),
            ("APIのレート制限は毎分100リクエスト。", "APIのレート制限は毎分500リクエスト。"),
            ("デフォルトブランチはmain。", "デフォルトブランチはmaster。"),
            ("朝会は9時に始まる。", "朝会は9時半に始まる。"),
            ("エディタは深色テーマを使う。", "エディタは浅色テーマを使う。"),
        ],
        DROPPED_CLAUSE: [
            (
                "Redisはレート制限のみに使い、セッションは保存しない。",
                "Redisはレート制限とセッションに使う。",
            ),
            ("本番環境のみデプロイする。", "本番環境にデプロイする。"),
            ("ビルドが失敗した場合は再試行する。", "ビルドを再試行する。"),
            ("必ずレビューを受けてからマージする。", "レビューを受けてからマージする。"),
            ("金曜日はデプロイしない。", "金曜日はデプロイする。"),
            ("管理者だけがAPIキーを更新できる。", "管理者がAPIキーを更新できる。"),
            ("日次レポートは9時に送信される。", "日次レポートは毎朝送信される。"),
            (
                "営業時間中はプライマリDBを再起動してはいけない。",
                "営業時間中にプライマリDBを再起動する。",
            ),
        ],
    },
    "ko": {
        RESTATEMENT: [
            (
                "프로덕션 배포는 매주 화요일 14시에 진행한다.",
                "매주 화요일 14시에 프로덕션 배포를 진행한다.",
            ),
            (
                "API 타임아웃은 30초로 설정되어 있다.",
                "API 타임아웃은 30초로 설정돼 있다.",
            ),
            (
                "빌드 캐시는 s3://acme-cache에 저장된다.",
                "빌드 캐시는 s3://acme-cache에 저장되어 있다.",
            ),
            (
                "에러 리포트는 Sentry로 전송된다.",
                "에러 리포트는 Sentry로 전송됩니다.",
            ),
            (
                "스테이징 클러스터의 노드는 4개다.",
                "스테이징 클러스터에는 노드가 4개 있다.",
            ),
            (
                "디자인 문서는 docs/design 폴더에 있다.",
                "디자인 문서는 docs/design 폴더에 있습니다.",
            ),
            (
                "고객 데이터는 eu-west-1 리전에 저장한다.",
                "고객 데이터는 eu-west-1 리전에 저장합니다.",
            ),
            (
                "사용자는 코드 리뷰 코멘트를 한국어로 원한다.",
                "사용자는 코드 리뷰 코멘트를 한국어로 원합니다.",
            ),
            (
                "온콜 엔지니어에게는 PagerDuty로 알린다.",
                "PagerDuty로 온콜 엔지니어에게 알린다.",
            ),
            (
                "기능 플래그는 LaunchDarkly에서 관리한다.",
                "기능 플래그는 모두 LaunchDarkly에서 관리한다.",
            ),
        ],
        DIFFERENT_FACT: [
            (
                "데이터베이스 마이그레이션은 배포 파이프라인이 자동으로 적용한다.",
                "데이터베이스 마이그레이션은 온콜 엔지니어가 수동으로 적용한다.",
            ),
            (
                "대시보드는 Grafana 화면에서 편집한다.",
                "대시보드는 grafana/dashboards/*.json에서 배포한다.",
            ),
            (
                "릴리스는 프로덕트 오너가 승인한다.",
                "릴리스는 보안팀이 승인한다.",
            ),
            (
                "시크릿은 Vault에 저장한다.",
                "시크릿은 각 호스트의 환경 파일에 저장한다.",
            ),
            (
                "스테이징 데이터베이스는 db-stage-3이다.",
                "스테이징 캐시는 redis-2이다.",
            ),
            (
                "로그 보존 기간은 스테이징에서 30일이다.",
                "로그 보존 기간은 프로덕션에서 90일이다.",
            ),
        ],
        CONTRADICTION: [
            (
                "팀 정기 회의는 매주 수요일 10시다.",
                "팀 정기 회의는 매주 목요일 10시다.",
            ),
            ("배치 작업은 3회 재시도한다.", "배치 작업은 이제 5회 재시도한다."),
            (
                "스테이징은 Python 3.11로 돌아간다.",
                "스테이징은 Python 3.12로 돌아간다.",
            ),
            ("프로덕션 클러스터의 노드는 4개다.", "프로덕션 클러스터의 노드는 6개다."),
            (
                "사내 채팅에서는 이모지 반응을 사용한다.",
                "사내 채팅에서는 이모지 반응을 사용하지 않는다.",
            ),
            ("API 요청 제한은 분당 100회다.", "API 요청 제한은 분당 500회다."),
            ("기본 브랜치는 main이다.", "기본 브랜치는 master이다."),
            ("아침 회의는 9시에 시작한다.", "아침 회의는 10시에 시작한다."),
            ("에디터는 다크 테마를 사용한다.", "에디터는 라이트 테마를 사용한다."),
        ],
        DROPPED_CLAUSE: [
            (
                "Redis는 요청 제한에만 쓰고 세션은 저장하지 않는다.",
                "Redis는 요청 제한과 세션에 쓴다.",
            ),
            ("주말에만 배포한다.", "주말에 배포한다."),
            ("빌드가 실패하면 재시도한다.", "빌드를 재시도한다."),
            ("반드시 리뷰를 받고 병합한다.", "리뷰를 받고 병합한다."),
            ("금요일에는 배포하지 않는다.", "금요일에는 배포한다."),
            ("관리자만 API 키를 교체할 수 있다.", "관리자가 API 키를 교체할 수 있다."),
            ("일일 보고서는 9시에 발송된다.", "일일 보고서는 매일 아침 발송된다."),
            (
                "업무 시간에는 기본 데이터베이스를 재시작하면 안 된다.",
                "업무 시간에 기본 데이터베이스를 재시작한다.",
            ),
        ],
    },
    "ru": {
        RESTATEMENT: [
            (
                "Продакшен-деплой проходит каждый вторник в 14:00.",
                "Каждый вторник в 14:00 проходит продакшен-деплой.",
            ),
            (
                "Таймаут API равен 30 секундам.",
                "Таймаут API равен тридцати секундам.",
            ),
            (
                "Кэш сборки хранится в s3://acme-cache.",
                "Кэш сборки хранится в бакете s3://acme-cache.",
            ),
            (
                "Отчёты об ошибках отправляются в Sentry.",
                "Отчёты об ошибках уходят в Sentry.",
            ),
            (
                "В кластере staging 4 узла.",
                "Кластер staging состоит из 4 узлов.",
            ),
            (
                "Дизайн-документы лежат в папке docs/design.",
                "Дизайн-документы лежат в docs/design.",
            ),
            (
                "Данные клиентов хранятся в регионе eu-west-1.",
                "В регионе eu-west-1 хранятся данные клиентов.",
            ),
            (
                "Пользователь хочет комментарии к ревью на русском.",
                "Комментарии к ревью пользователь хочет на русском.",
            ),
            (
                "Дежурного инженера вызывают через PagerDuty.",
                "Через PagerDuty вызывают дежурного инженера.",
            ),
            (
                "Фича-флаги управляются в LaunchDarkly.",
                "Все фича-флаги управляются в LaunchDarkly.",
            ),
        ],
        DIFFERENT_FACT: [
            (
                "Миграции базы данных применяются автоматически пайплайном деплоя.",
                "Миграции базы данных применяются вручную дежурным инженером.",
            ),
            (
                "Дашборды редактируются в интерфейсе Grafana.",
                "Дашборды разворачиваются из grafana/dashboards/*.json.",
            ),
            (
                "Релизы утверждает владелец продукта.",
                "Релизы утверждает команда безопасности.",
            ),
            (
                "Секреты хранятся в Vault.",
                "Секреты хранятся в файлах окружения на хостах.",
            ),
            (
                "База данных staging это db-stage-3.",
                "Кэш staging это redis-2.",
            ),
            (
                "Логи в staging хранятся 30 дней.",
                "Логи в продакшене хранятся 90 дней.",
            ),
        ],
        CONTRADICTION: [
            (
                "Командная встреча проходит каждую среду в 10:00.",
                "Командная встреча проходит каждый четверг в 10:00.",
            ),
            ("Пакетная задача повторяется 3 раза.", "Пакетная задача теперь повторяется 5 раз."),
            ("Staging работает на Python 3.11.", "Staging работает на Python 3.12."),
            ("В продакшен-кластере 4 узла.", "В продакшен-кластере 6 узлов."),
            (
                "Деплой по пятницам разрешён.",
                "Деплой по пятницам не разрешён.",
            ),
            (
                "Лимит запросов API 100 в минуту.",
                "Лимит запросов API 500 в минуту.",
            ),
            ("Основная ветка main.", "Основная ветка master."),
            ("Утренняя встреча начинается в 09:00.", "Утренняя встреча начинается в 09:30."),
            ("Редактор использует тёмную тему.", "Редактор использует светлую тему."),
        ],
        DROPPED_CLAUSE: [
            (
                "Redis используется только для лимитов; никогда не храните в нём сессии.",
                "Redis используется для лимитов и сессий.",
            ),
            ("Никогда не пушьте напрямую в main.", "Пушьте напрямую в main."),
            ("Только администраторы меняют ключи API.", "Администраторы меняют ключи API."),
            ("Деплой идёт каждый будний день, кроме пятницы.", "Деплой идёт каждый будний день."),
            ("Если очередь переполнена, удаляйте старые задачи.", "Удаляйте старые задачи."),
            ("Тесты должны проходить перед слиянием.", "Тесты проходят перед слиянием."),
            ("Всегда запускайте линтер перед коммитом.", "Запускайте линтер перед коммитом."),
            ("Ежедневный отчёт отправляется в 09:00.", "Ежедневный отчёт отправляется утром."),
        ],
    },
}


def _build() -> list[Pair]:
    out = []
    for lang, by_label in _TEXTS.items():
        for label, pairs in by_label.items():
            for i, (a, b) in enumerate(pairs, 1):
                out.append(Pair(f"{lang}-{label}-{i}", lang, label, a, b))
    return out


PAIRS: list[Pair] = _build()
