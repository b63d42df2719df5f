"""Labelled pairs of agent memories for ``manage.py evaluate near_duplicates``: is the second a
restatement of the first (one fact, one consolidation), or something a merge must never join?

The memories are what a coding assistant keeps about a user and their projects — facts,
preferences, decisions, constraints — written by hand, in English and in the other languages of
the recall corpus (``evaluation/corpora/recall.json``) plus German; and pairs that must never be
merged in Korean, Russian, Greek and Hebrew too (``different_fact`` and ``unrelated``: in scripts
the embedding model cannot read, unrelated sentences score as high as restatements; see
``memory.embeddings.model_reads``). Four labels:

- ``restatement`` — the same fact in other words, often sharing no content word ("The deploy
  pipeline runs on GitHub Actions" / "We ship through GitHub Actions workflows"). The only
  positive: what the near-duplicate pass should cluster.
- ``different_value`` — one subject, one slot, another value: a contradiction for the conflict
  pass, never a merge. The hard ones differ in a single number, time, host, version, name or
  word ("dark mode" / "light mode"), or by a negation.
- ``different_fact`` — one topic, a different fact ("the staging DB is db-stage-3" / "the
  staging cache is redis-2"), some with the same value in another slot ("the payments service
  is owned by Mara Okafor" / "the payments team lead is Mara Okafor").
- ``unrelated`` — different topics, some sharing incidental words ("every Tuesday").

Every pair belongs to one of two halves (:func:`split`): thresholds are chosen on
``calibration`` and the figures reported on ``held_out`` as well. The labels are the truth the
rule is scored against; the pairs are written by the people who wrote the rule, so the figures
are a regression check, not a general accuracy claim.
"""

from __future__ import annotations

from typing import NamedTuple

RESTATEMENT = "restatement"
DIFFERENT_VALUE = "different_value"
DIFFERENT_FACT = "different_fact"
UNRELATED = "unrelated"
LABELS = (RESTATEMENT, DIFFERENT_VALUE, DIFFERENT_FACT, UNRELATED)
SPLITS = ("calibration", "held_out")


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
                "The deploy pipeline runs on GitHub Actions.",
                "We ship through GitHub Actions workflows.",
            ),
            ("Production logs go to Datadog.", "We send prod logging to Datadog."),
            (
                "The user prefers concise answers without a preamble.",
                "Keep replies short and skip the introduction.",
            ),
            (
                "Always run `make lint` before committing.",
                "Lint with `make lint` prior to every commit.",
            ),
            (
                "The frontend installs packages with pnpm, never npm.",
                "Use pnpm rather than npm for the frontend's dependencies.",
            ),
            ("Never push directly to main.", "Direct commits to the main branch are forbidden."),
            ("The API server is written in Go.", "Our backend service is implemented in Golang."),
            (
                "Python code is indented with 4 spaces.",
                "Use four spaces for indentation in Python files.",
            ),
            ("Tests must pass before merging.", "No merge until the test suite is green."),
            (
                "The user dislikes emojis in commit messages.",
                "Don't put emoji in commit messages.",
            ),
            (
                "The staging environment lives at staging.acme.dev.",
                "Staging is reachable at staging.acme.dev.",
            ),
            ("The monorepo builds with Bazel.", "Builds in the monorepo go through Bazel."),
            (
                "We chose PostgreSQL over MySQL for the orders service.",
                "The orders service uses PostgreSQL; MySQL was rejected.",
            ),
            (
                "Prefer composition over inheritance.",
                "Favour composing objects instead of subclassing.",
            ),
            (
                "The user writes documentation in British English.",
                "Docs should use UK spelling such as colour and organise.",
            ),
            (
                "Every pull request needs two approvals.",
                "A PR can only merge after two reviewers approve it.",
            ),
            (
                "Schema migrations are never deployed on a Friday.",
                "Don't run database migrations on Fridays.",
            ),
            ("Secrets are kept in 1Password.", "We store credentials in the 1Password vault."),
            (
                "The user is a senior backend engineer.",
                "They work as a senior engineer on backend systems.",
            ),
            (
                "The documentation site is built with MkDocs.",
                "We generate the docs using MkDocs.",
            ),
            (
                "Database backups run nightly at 02:00 UTC.",
                "Every night at 02:00 UTC the database is backed up.",
            ),
            (
                "The project supports Python 3.11 and later.",
                "The minimum supported Python version is 3.11.",
            ),
            (
                "The user wants type hints on every function.",
                "Annotate all functions with types.",
            ),
            (
                "The reporting service avoids ORMs and uses raw SQL.",
                "Queries in the reporting service are hand-written SQL, no ORM.",
            ),
            (
                "Feature flags are managed in LaunchDarkly.",
                "We toggle features through LaunchDarkly.",
            ),
            ("The cache layer is Redis.", "We use Redis for caching."),
            ("Errors are tracked in Sentry.", "Exceptions get reported to Sentry."),
            (
                "The CI pipeline must finish in under 10 minutes.",
                "CI runs longer than 10 minutes are not acceptable.",
            ),
            (
                "Branch names follow feature/<ticket>-<slug>.",
                "Name branches like feature/<ticket>-<slug>.",
            ),
            (
                "Our workloads run on GKE.",
                "We deploy to Google's managed Kubernetes, GKE.",
            ),
            ("The user prefers tabs over spaces.", "Indent with tabs, not spaces."),
            (
                "Mara Okafor owns the payments service.",
                "The payments service is Mara Okafor's responsibility.",
            ),
            (
                "Renovate handles dependency updates.",
                "Dependency bump PRs are opened by the Renovate bot.",
            ),
            (
                "Python function names use snake_case.",
                "Name Python functions in snake_case.",
            ),
            ("The user develops on macOS.", "They work on a Mac."),
            (
                "Explain the reasoning before showing code.",
                "The user likes the why first, then the snippet.",
            ),
            (
                "The team does trunk-based development.",
                "Everyone commits to trunk; there are no long-lived branches.",
            ),
            (
                "The user reviews pull requests in the morning.",
                "PR reviews happen first thing in their day.",
            ),
            (
                "Don't add new dependencies without asking.",
                "Ask the user before introducing any third-party package.",
            ),
            (
                "Integration tests need Docker running.",
                "You have to start Docker before the integration suite.",
            ),
            (
                "The mobile apps release every two weeks.",
                "iOS and Android builds ship biweekly.",
            ),
            (
                "Use UTC for every timestamp stored in the database.",
                "Timestamps in the database are always UTC.",
            ),
        ],
        DIFFERENT_VALUE: [
            ("Standup is at 9:30.", "Standup is at 10:00."),
            ("The project targets Python 3.11.", "The project targets Python 3.12."),
            ("The staging DB host is db-stage-3.", "The staging DB host is db-stage-4."),
            ("Production runs in eu-west-1.", "Production runs in us-east-1."),
            ("The user prefers dark mode.", "The user prefers light mode."),
            ("Use tabs for indentation.", "Use spaces for indentation."),
            ("The CI timeout is 30 minutes.", "The CI timeout is 45 minutes."),
            ("Code review needs two approvals.", "Code review needs one approval."),
            ("The frontend builds with Node 18.", "The frontend builds with Node 20."),
            (
                "The public API allows 100 requests per minute.",
                "The public API allows 1000 requests per minute.",
            ),
            ("New feature flags are on by default.", "New feature flags are off by default."),
            ("The user wants verbose logging.", "The user does not want verbose logging."),
            ("Deploys are allowed on Fridays.", "Deploys are not allowed on Fridays."),
            ("The orders service uses PostgreSQL.", "The orders service uses MySQL."),
            ("The release branch is release/2.4.", "The release branch is release/2.5."),
            ("Sprints last two weeks.", "Sprints last three weeks."),
            ("Backups are kept for 30 days.", "Backups are kept for 90 days."),
            (
                "Mara Okafor owns the payments service.",
                "Jonas Weber owns the payments service.",
            ),
            ("The default branch is main.", "The default branch is master."),
            ("The line length limit is 100.", "The line length limit is 120."),
            ("The user prefers pytest.", "The user prefers unittest."),
            ("The package manager is pnpm.", "The package manager is yarn."),
            (
                "The staging URL is https://staging.acme.dev.",
                "The staging URL is https://stage.acme.io.",
            ),
            ("Application logs are shipped to Datadog.", "Application logs are shipped to Loki."),
            ("The retro is on Thursday.", "The retro is on Friday."),
            ("The user's editor is VS Code.", "The user's editor is Neovim."),
            ("The maximum upload size is 25 MB.", "The maximum upload size is 50 MB."),
            ("Always squash-merge pull requests.", "Never squash-merge pull requests."),
            ("The user wants answers in German.", "The user wants answers in French."),
            (
                "Docker images are based on python:3.11-slim.",
                "Docker images are based on python:3.12-slim.",
            ),
            ("The cache TTL is 5 minutes.", "The cache TTL is 15 minutes."),
            ("The user likes code comments.", "The user dislikes code comments."),
            (
                "The deploy pipeline runs on GitHub Actions.",
                "The deploy pipeline runs on GitLab CI.",
            ),
            ("Staging moved to staging-2.acme.dev.", "Staging is at staging-1.acme.dev."),
            (
                "The user prefers single quotes in Python.",
                "The user prefers double quotes in Python.",
            ),
            ("The monorepo builds with Bazel.", "The monorepo builds with Gradle."),
        ],
        DIFFERENT_FACT: [
            ("The staging DB is db-stage-3.", "The staging cache is redis-2."),
            ("Standup is at 9:30.", "The retro is at 16:00 on Fridays."),
            ("The data team has 5 analysts.", "The data team owns the dbt models."),
            ("CI runs on GitHub Actions.", "CI caches dependencies between runs."),
            ("The project targets Python 3.11.", "The project manages dependencies with Poetry."),
            (
                "Production runs in eu-west-1.",
                "Production database backups are encrypted with KMS.",
            ),
            ("The user prefers dark mode.", "The user prefers a larger font size."),
            ("The frontend uses React.", "The frontend is deployed to Vercel."),
            ("Tests must pass before merging.", "Tests run in parallel with pytest-xdist."),
            ("Python code is indented with 4 spaces.", "Python strings use double quotes."),
            (
                "The public API allows 100 requests per minute.",
                "The public API returns JSON errors.",
            ),
            (
                "Mara Okafor owns the payments service.",
                "The payments service processes refunds nightly.",
            ),
            ("Deploys happen on Tuesdays.", "Deploys require a change ticket."),
            (
                "The mobile app talks to the GraphQL gateway.",
                "The mobile app supports offline mode.",
            ),
            ("Secrets live in Vault.", "Vault tokens expire after 24 hours."),
            (
                "Code review needs two approvals.",
                "Review comments must be resolved before merging.",
            ),
            (
                "The user writes commit messages in the imperative mood.",
                "The user signs commits with GPG.",
            ),
            ("The docs are built with MkDocs.", "The docs are published to docs.acme.dev."),
            (
                "The anonymous rate limit is 10 requests per second.",
                "The API rate limit is 100 requests per second.",
            ),
            ("The office closes at 18:00.", "The support hotline closes at 18:00."),
            ("The backend team deploys with Helm.", "The frontend team deploys with Vercel."),
            (
                "Pull requests need a linked Jira ticket.",
                "Pull requests need a changelog entry.",
            ),
            (
                "The user wants a test for every bug fix.",
                "The user wants documentation for every new feature.",
            ),
            ("The nightly job starts at 02:00.", "The nightly backup runs at 02:00."),
            ("The staging cluster has 3 nodes.", "The production cluster has 3 nodes."),
            ("Linting runs with ruff.", "Formatting runs with black."),
            (
                "Error budgets are reviewed monthly.",
                "Postmortems are written within 48 hours of an incident.",
            ),
            (
                "The user's GitHub handle is mokafor.",
                "The user's Slack status is usually focus time.",
            ),
            ("The search service is written in Rust.", "The search service indexes with Tantivy."),
            ("The user prefers pytest.", "The user prefers small, focused commits."),
            (
                "The deploy pipeline runs on GitHub Actions.",
                "The deploy pipeline needs a manual approval for production.",
            ),
            ("The cache layer is Redis.", "Cache keys are prefixed with the tenant id."),
            # One value, another slot: the same person, tool or channel in two roles.
            (
                "The payments service is owned by Mara Okafor.",
                "The payments team lead is Mara Okafor.",
            ),
            ("Priya Nair is on call this week.", "Priya Nair reviews every database migration."),
            (
                "The billing service is owned by Ken Adebayo.",
                "The platform team lead is Ken Adebayo.",
            ),
            ("The CI runners use Ubuntu 22.04.", "The production hosts run Ubuntu 22.04."),
            (
                "Sentry alerts go to #backend-alerts.",
                "Deploy notifications are posted in #backend-alerts.",
            ),
            ("The legacy billing code is frozen.", "The code freeze starts on 2026-03-01."),
            ("Jonas Weber approves every release.", "Jonas Weber maintains the design system."),
            ("The API gateway runs on Kubernetes.", "The batch jobs run on Kubernetes."),
            ("Grafana dashboards live in the ops repo.", "Alert rules live in the ops repo."),
            ("Mara Okafor owns the payments service.", "Mara Okafor is the payments team lead."),
        ],
        UNRELATED: [
            (
                "Deploys run every Tuesday at 14:00.",
                "The user's 1:1 with their manager is every Tuesday.",
            ),
            ("The build cache lives in S3.", "The user prefers short variable names."),
            ("Standup is at 9:30.", "Python functions use snake_case."),
            ("The user is allergic to peanuts.", "The orders service uses PostgreSQL."),
            ("Secrets are kept in 1Password.", "The mobile apps release every two weeks."),
            ("The user develops on macOS.", "Error budgets are reviewed monthly."),
            ("Backups are kept for 30 days.", "The free trial lasts 30 days."),
            ("The user prefers dark mode.", "The orders service publishes events to Kafka."),
            ("Never push directly to main.", "The user's main language is Portuguese."),
            ("The frontend uses React.", "The user takes Fridays off in August."),
            ("Integration tests need Docker running.", "The office coffee machine is broken."),
            ("Renovate handles dependency updates.", "The team offsite is in Lisbon in May."),
            (
                "The user reviews pull requests in the morning.",
                "The invoice service rounds amounts to two decimals.",
            ),
            ("Logs go to Datadog.", "Prefer composition over inheritance."),
            (
                "The CI pipeline must finish in under 10 minutes.",
                "The user walks their dog at 10 minutes past noon.",
            ),
            ("Feature flags are managed in LaunchDarkly.", "The user prefers tabs over spaces."),
        ],
    },
    "de": {
        RESTATEMENT: [
            (
                "Die Deploy-Pipeline läuft auf GitHub Actions.",
                "Wir liefern über GitHub-Actions-Workflows aus.",
            ),
            ("Der Nutzer möchte kurze Antworten.", "Antworten bitte knapp halten."),
            (
                "Datenbank-Backups laufen jede Nacht um 02:00 Uhr.",
                "Jede Nacht um 02:00 Uhr wird die Datenbank gesichert.",
            ),
        ],
        DIFFERENT_VALUE: [
            ("Das Standup ist um 9:30 Uhr.", "Das Standup ist um 10:00 Uhr."),
            ("Das Projekt nutzt Python 3.11.", "Das Projekt nutzt Python 3.12."),
        ],
        DIFFERENT_FACT: [
            ("Die Staging-Datenbank ist db-stage-3.", "Der Staging-Cache ist redis-2."),
            ("Das Frontend nutzt React.", "Das Frontend wird auf Vercel deployt."),
        ],
        UNRELATED: [
            ("Der Nutzer arbeitet auf macOS.", "Backups werden 30 Tage aufbewahrt."),
        ],
    },
    "zh": {
        RESTATEMENT: [
            ("部署流水线运行在 GitHub Actions 上。", "我们通过 GitHub Actions 工作流发布。"),
            ("用户喜欢简短的回答。", "回复请尽量简洁。"),
            ("数据库每天凌晨 02:00 备份。", "每晚 02:00 会对数据库做一次备份。"),
        ],
        DIFFERENT_VALUE: [
            ("站会在 9:30 开始。", "站会在 10:00 开始。"),
            ("项目使用 Python 3.11。", "项目使用 Python 3.12。"),
        ],
        DIFFERENT_FACT: [
            ("预发布数据库是 db-stage-3。", "预发布缓存是 redis-2。"),
            ("前端使用 React。", "前端部署在 Vercel 上。"),
            ("团队每周一早上开会。", "团队远程办公。"),
            ("王伟负责支付。", "支付通过 Stripe 处理。"),
        ],
        UNRELATED: [
            ("用户在 macOS 上开发。", "备份保留 30 天。"),
            ("团队每周一早上开会。", "生产服务器运行在Linux上。"),
            ("我更喜欢空格而不是制表符。", "每周二发布新版本。"),
            ("生产服务器运行在Linux上。", "王伟负责支付。"),
        ],
    },
    "ja": {
        RESTATEMENT: [
            (
                "デプロイパイプラインは GitHub Actions で動いている。",
                "リリースは GitHub Actions のワークフローで行う。",
            ),
            ("ユーザーは短い回答を好む。", "返答は簡潔にしてほしい。"),
            (
                "データベースのバックアップは毎晩 02:00 に実行される。",
                "毎晩 02:00 に DB をバックアップする。",
            ),
        ],
        DIFFERENT_VALUE: [
            ("朝会は 9:30 から。", "朝会は 10:00 から。"),
            ("プロジェクトは Python 3.11 を使う。", "プロジェクトは Python 3.12 を使う。"),
        ],
        DIFFERENT_FACT: [
            ("ステージングの DB は db-stage-3。", "ステージングのキャッシュは redis-2。"),
            ("フロントエンドは React を使う。", "フロントエンドは Vercel にデプロイする。"),
            ("チームは毎週月曜の朝に集まる。", "チームはリモートで働いている。"),
            ("田中さんが支払いを担当している。", "支払いは Stripe で処理される。"),
        ],
        UNRELATED: [
            ("ユーザーは macOS で開発している。", "バックアップは 30 日間保持される。"),
            ("チームは毎週月曜の朝に集まる。", "本番サーバーはLinuxで動いている。"),
            ("タブよりスペースが好きだ。", "リリースは毎週火曜日だ。"),
            ("本番サーバーはLinuxで動いている。", "田中さんが支払いを担当している。"),
        ],
    },
    "ar": {
        RESTATEMENT: [
            ("يعمل خط النشر على GitHub Actions.", "ننشر عبر مسارات عمل GitHub Actions."),
            ("يفضّل المستخدم الإجابات القصيرة.", "اجعل الردود موجزة."),
            (
                "تُنسخ قاعدة البيانات احتياطيًا كل ليلة الساعة 02:00.",
                "كل ليلة في 02:00 يتم نسخ قاعدة البيانات.",
            ),
        ],
        DIFFERENT_VALUE: [
            ("الاجتماع اليومي الساعة 9:30.", "الاجتماع اليومي الساعة 10:00."),
            ("يستخدم المشروع Python 3.11.", "يستخدم المشروع Python 3.12."),
        ],
        DIFFERENT_FACT: [
            ("قاعدة بيانات الاختبار هي db-stage-3.", "ذاكرة التخزين المؤقت للاختبار هي redis-2."),
            ("الواجهة الأمامية تستخدم React.", "الواجهة الأمامية منشورة على Vercel."),
            ("يجتمع الفريق كل صباح اثنين.", "يعمل الفريق عن بُعد."),
            ("أحمد مسؤول عن المدفوعات.", "تتم معالجة المدفوعات عبر Stripe."),
        ],
        UNRELATED: [
            ("يعمل المستخدم على macOS.", "تُحفظ النسخ الاحتياطية لمدة 30 يومًا."),
            ("يجتمع الفريق كل صباح اثنين.", "يعمل خادم الإنتاج على لينكس."),
            ("أفضل المسافات بدلاً من علامات التبويب.", "تصدر الإصدارات كل ثلاثاء."),
            ("يعمل خادم الإنتاج على لينكس.", "أحمد مسؤول عن المدفوعات."),
        ],
    },
    "hi": {
        RESTATEMENT: [
            (
                "डिप्लॉय पाइपलाइन GitHub Actions पर चलती है।",
                "हम GitHub Actions वर्कफ़्लो से रिलीज़ करते हैं।",
            ),
            ("उपयोगकर्ता छोटे जवाब पसंद करते हैं।", "जवाब संक्षिप्त रखें।"),
            ("डेटाबेस का बैकअप हर रात 02:00 बजे होता है।", "हर रात 02:00 बजे डेटाबेस का बैकअप लिया जाता है।"),
        ],
        DIFFERENT_VALUE: [
            ("स्टैंडअप 9:30 बजे है।", "स्टैंडअप 10:00 बजे है।"),
            ("प्रोजेक्ट Python 3.11 इस्तेमाल करता है।", "प्रोजेक्ट Python 3.12 इस्तेमाल करता है।"),
        ],
        DIFFERENT_FACT: [
            ("स्टेजिंग डेटाबेस db-stage-3 है।", "स्टेजिंग कैश redis-2 है।"),
            ("फ्रंटएंड React इस्तेमाल करता है।", "फ्रंटएंड Vercel पर डिप्लॉय होता है।"),
            ("टीम हर सोमवार सुबह मिलती है।", "टीम घर से काम करती है।"),
            ("राहुल भुगतान के लिए ज़िम्मेदार है।", "भुगतान Stripe से होते हैं।"),
        ],
        UNRELATED: [
            ("उपयोगकर्ता macOS पर काम करते हैं।", "बैकअप 30 दिन तक रखे जाते हैं।"),
            ("टीम हर सोमवार सुबह मिलती है।", "प्रोडक्शन सर्वर लिनक्स पर चलता है।"),
            ("मुझे टैब की जगह स्पेस पसंद हैं।", "रिलीज़ हर मंगलवार होती है।"),
            ("प्रोडक्शन सर्वर लिनक्स पर चलता है।", "राहुल भुगतान के लिए ज़िम्मेदार है।"),
        ],
    },
    "th": {
        RESTATEMENT: [
            ("ไปป์ไลน์ดีพลอยทำงานบน GitHub Actions", "เราปล่อยงานผ่านเวิร์กโฟลว์ของ GitHub Actions"),
            ("ผู้ใช้ชอบคำตอบที่สั้น", "ตอบให้กระชับ"),
            ("ฐานข้อมูลสำรองทุกคืนเวลา 02:00", "ทุกคืนเวลา 02:00 จะสำรองฐานข้อมูล"),
        ],
        DIFFERENT_VALUE: [
            ("ประชุมสแตนด์อัปเวลา 9:30", "ประชุมสแตนด์อัปเวลา 10:00"),
            ("โปรเจกต์ใช้ Python 3.11", "โปรเจกต์ใช้ Python 3.12"),
        ],
        DIFFERENT_FACT: [
            ("ฐานข้อมูลสเตจจิงคือ db-stage-3", "แคชสเตจจิงคือ redis-2"),
            ("ฟรอนต์เอนด์ใช้ React", "ฟรอนต์เอนด์ดีพลอยบน Vercel"),
            ("ทีมประชุมทุกเช้าวันจันทร์", "ทีมทำงานจากที่บ้าน"),
            ("สมชายรับผิดชอบเรื่องการชำระเงิน", "การชำระเงินดำเนินการผ่าน Stripe"),
        ],
        UNRELATED: [
            ("ผู้ใช้พัฒนาบน macOS", "เก็บข้อมูลสำรองไว้ 30 วัน"),
            ("ทีมประชุมทุกเช้าวันจันทร์", "เซิร์ฟเวอร์โปรดักชันทำงานบนลินุกซ์"),
            ("ฉันชอบเว้นวรรคมากกว่าแท็บ", "ออกรุ่นใหม่ทุกวันอังคาร"),
            ("เซิร์ฟเวอร์โปรดักชันทำงานบนลินุกซ์", "สมชายรับผิดชอบเรื่องการชำระเงิน"),
        ],
    },
    "ko": {
        DIFFERENT_FACT: [
            ("팀은 매주 월요일 아침에 모입니다.", "팀은 원격으로 일합니다."),
            ("민수가 결제를 담당합니다.", "결제는 Stripe로 처리됩니다."),
        ],
        UNRELATED: [
            ("팀은 매주 월요일 아침에 모입니다.", "프로덕션 서버는 리눅스에서 실행됩니다."),
            ("탭보다 공백을 선호합니다.", "릴리스는 매주 화요일에 나갑니다."),
            ("프로덕션 서버는 리눅스에서 실행됩니다.", "민수가 결제를 담당합니다."),
        ],
    },
    "ru": {
        DIFFERENT_FACT: [
            ("Команда встречается каждый понедельник утром.", "Команда работает удалённо."),
            ("Иван отвечает за платежи.", "Платежи обрабатываются через Stripe."),
        ],
        UNRELATED: [
            ("Команда встречается каждый понедельник утром.", "Продакшн-сервер работает на Linux."),
            ("Я предпочитаю пробелы вместо табов.", "Релизы выходят каждый вторник."),
            ("Продакшн-сервер работает на Linux.", "Иван отвечает за платежи."),
        ],
    },
    "el": {
        DIFFERENT_FACT: [
            ("Η ομάδα συναντιέται κάθε Δευτέρα το πρωί.", "Η ομάδα δουλεύει εξ αποστάσεως."),
            (
                "Ο Γιώργος είναι υπεύθυνος για τις πληρωμές.",
                "Οι πληρωμές επεξεργάζονται μέσω Stripe.",
            ),
        ],
        UNRELATED: [
            (
                "Η ομάδα συναντιέται κάθε Δευτέρα το πρωί.",
                "Ο διακομιστής παραγωγής τρέχει σε Linux.",
            ),
            ("Προτιμώ τα κενά αντί για tabs.", "Οι κυκλοφορίες γίνονται κάθε Τρίτη."),
            (
                "Ο διακομιστής παραγωγής τρέχει σε Linux.",
                "Ο Γιώργος είναι υπεύθυνος για τις πληρωμές.",
            ),
        ],
    },
    "he": {
        DIFFERENT_FACT: [
            ("הצוות נפגש כל יום שני בבוקר.", "הצוות עובד מרחוק."),
            ("דני אחראי על התשלומים.", "התשלומים מעובדים דרך Stripe."),
        ],
        UNRELATED: [
            ("הצוות נפגש כל יום שני בבוקר.", "שרת הייצור רץ על לינוקס."),
            ("אני מעדיף רווחים על פני טאבים.", "גרסאות יוצאות כל יום שלישי."),
            ("שרת הייצור רץ על לינוקס.", "דני אחראי על התשלומים."),
        ],
    },
}


def _build() -> list[Pair]:
    out = []
    for lang, by_label in _TEXTS.items():
        for label, texts in by_label.items():
            for i, (a, b) in enumerate(texts, start=1):
                out.append(Pair(f"{lang}-{label}-{i:02d}", lang, label, a, b))
    return out


PAIRS: list[Pair] = _build()


def split(pair: Pair) -> str:
    """``held_out`` for every third pair of each language and label (the 3rd, 6th, …), else
    ``calibration``: fixed by the pair's id, so adding pairs never moves one between halves."""
    return "held_out" if int(pair.id.rsplit("-", 1)[1]) % 3 == 0 else "calibration"
