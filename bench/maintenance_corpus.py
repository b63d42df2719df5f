"""A seeded corpus with known near-duplicates, contradictions and recurring working notes, for
measuring the maintenance passes (``bench/maintenance_eval.py``) — plus the negative controls:
unrelated current-state facts (each with a value) that must never conflict, near-topic facts
about *different* subjects, one-session note themes that must never be promoted.

Each group is written by hand: the labels are the truth the passes are scored against.
"""

from __future__ import annotations

#: Groups of near-duplicates (same kind, same content, no differing value): one cluster each.
DUPLICATE_GROUPS: list[list[str]] = [
    [
        "The build cache lives in s3://acme-cache and is purged weekly",
        "The build cache lives in s3://acme-cache",
        "Build cache location: the build cache lives in s3://acme-cache",
    ],
    [
        "Release notes are drafted by the on-call engineer every Friday",
        "Release notes are drafted by the on-call engineer on Fridays",
    ],
    [
        "The payments service is owned by Mara Okafor",
        "Mara Okafor owns the payments service",
        "The payments service owner is Mara Okafor",
    ],
    [
        "Integration tests run against the docker compose stack in tests/compose.yml",
        "The integration tests run against the docker compose stack defined in tests/compose.yml",
    ],
    [
        "Feature flags are stored in LaunchDarkly under the project acme-web",
        "Feature flags are stored in LaunchDarkly, project acme-web",
    ],
    [
        "Secrets are injected at deploy time from Vault path kv/acme/prod",
        "At deploy time secrets are injected from the Vault path kv/acme/prod",
    ],
    [
        "The style guide requires type hints on every public function",
        "Type hints are required on every public function by the style guide",
    ],
    [
        "Error budgets are reviewed in the monthly SRE review",
        "The monthly SRE review looks at the error budgets",
        "Error budgets get reviewed in the monthly SRE review meeting",
    ],
    [
        "The mobile app uses the GraphQL gateway at https://api.acme.dev/graphql",
        "The mobile app talks to the GraphQL gateway at https://api.acme.dev/graphql",
    ],
    [
        "Database migrations must be backwards compatible for one release",
        "Migrations of the database must stay backwards compatible for one release",
    ],
    [
        "Log retention in Loki is 30 days",
        "Loki keeps logs for 30 days of retention",
    ],
    [
        "The nightly backup job writes to the bucket acme-backups in eu-west-1",
        "Nightly backup job writes to bucket acme-backups, region eu-west-1",
    ],
]

#: Unrelated facts (distractors for the duplicate pass), each with its own subject.
DISTRACTORS: list[str] = [
    "Customer emails are answered within one business day",
    "The design system components live in packages/ui",
    "Pull requests need one approving review before merge",
    "The analytics warehouse is refreshed every hour",
    "Our status page is hosted by Atlassian Statuspage",
    "Interns get a laptop on their first day",
    "The search index is rebuilt after every schema change",
    "Invoices are generated on the first of the month",
    "The staging cluster scales down to zero at night",
    "API keys are rotated every quarter",
    "The wiki has a page for every runbook",
    "Support tickets are triaged by the duty manager",
    "Localization strings are managed in Crowdin",
    "The marketing site is a static build on Netlify",
    "Load tests run before every major release",
    "The data team owns the dbt models",
    "On-call handover happens on Monday mornings",
    "The VPN client is WireGuard",
    "Dependabot opens upgrade pull requests weekly",
    "The legacy billing code is frozen",
]

#: Contradictions: (older current-state fact, newer fact with a different value). The newer one
#: cites evidence, so a supersession proposal is expected too.
CONTRADICTIONS: list[tuple[str, str]] = [
    ("The daily standup is at 9:30", "Update: the daily standup moved from 9:30 to 10:00"),
    ("The deploy target is eu-2", "The deploy target is now eu-3"),
    ("The staging database runs PostgreSQL 15", "The staging database runs PostgreSQL 16"),
    (
        "The API rate limit is 600 requests per minute",
        "The API rate limit is 1200 requests per minute",
    ),
    ("The release train leaves every 2 weeks", "The release train now leaves every 3 weeks"),
    ("The payments team lead is Mara Okafor", "The payments team lead is now Ken Adebayo"),
    ("The CI runners have 8 GB of memory", "The CI runners were upgraded to 16 GB of memory"),
    ("The support hotline closes at 18:00", "The support hotline now closes at 20:00"),
    ("The current mobile app version is 4.2.0", "The current mobile app version is 4.3.1"),
    ("The code freeze starts on 2026-03-01", "The code freeze moved to 2026-03-08"),
    ("The primary region is us-east-1", "The primary region changed to us-west-2"),
    ("The on-call rotation has 6 engineers", "The on-call rotation has 8 engineers"),
]

#: Negative control: current-state facts with values about unrelated subjects — and near-topic
#: facts about *different* subjects — none of which may ever conflict.
NEGATIVE_CONTROL: list[str] = [
    "The weekly retro is at 16:00 on Fridays",
    "The production database runs PostgreSQL 14",
    "The anonymous rate limit is 20 requests per minute",
    "The office closes at 18:00",
    "The support inbox is answered within 4 hours",
    "Release 5.0 ships on 2026-06-01",
    "The build runners have 32 GB of disk",
    "The billing service is owned by Ken Adebayo",
    "The web app version is 2.8.0",
    "The design review is at 14:00 on Tuesdays",
    "The backup region is eu-central-1",
    "The data team has 5 analysts",
    "The cache TTL is 300 seconds",
    "The search service uses 3 replicas",
    "The Kafka cluster has 12 partitions per topic",
    "The free plan allows 2 projects",
    "The monthly report is due on the 5th",
    "The SLA for incidents is 15 minutes",
    "The nightly job starts at 02:00",
    "The docs site is built with Sphinx 7",
]

#: Working-note themes recurring in independent sessions: one promotion proposal each.
#: Each theme: [(session, body), ...]
RECURRING_THEMES: list[list[tuple[str, str]]] = [
    [
        ("s-a1", "test_checkout is flaky because of the timezone in CI"),
        ("s-a2", "test_checkout flaky again: the timezone in CI differs"),
    ],
    [
        ("s-b1", "The docker build fails when the pip cache volume is missing"),
        ("s-b2", "docker build failed again because the pip cache volume was missing"),
        ("s-b3", "Missing pip cache volume makes the docker build fail"),
    ],
    [
        ("s-c1", "Remember to regenerate the OpenAPI client after changing serializers"),
        ("s-c2", "Had to regenerate the OpenAPI client after changing the serializers"),
    ],
    [
        ("s-d1", "The staging login breaks when the SSO certificate expires"),
        ("s-d2", "Staging login broke: the SSO certificate had expired"),
    ],
    [
        ("s-e1", "Running migrations locally needs the PGHOST variable set"),
        ("s-e2", "Local migrations failed until the PGHOST variable was set"),
    ],
    [
        ("s-f1", "The e2e suite needs the seed fixture loaded before it runs"),
        ("s-f2", "e2e suite failed: load the seed fixture before it runs"),
    ],
    # The same observation in other words: they share too few words for the lexical
    # similarity (Jaccard 0.18-0.38); the embedding model pairs them (cosine 0.71-0.83, except
    # the restart pair, 0.55, below the near-topic notes of the single-session list).
    [
        ("s-g1", "CI flaked on the integration suite again"),
        ("s-g2", "integration tests failed intermittently in CI"),
        ("s-g3", "The integration job in CI is unreliable and fails at random"),
    ],
    [
        ("s-h1", "Had to restart the dev server by hand after editing settings.py"),
        ("s-h2", "Autoreload ignores changes to settings.py, so runserver needs a manual restart"),
    ],
    [
        ("s-i1", "Dana wants a summary of the changed files when a session ends"),
        ("s-i2", "At the end of each session, list the modified files for Dana"),
    ],
    [
        ("s-j1", "npm install breaks on the wrong Node version; run nvm use first"),
        ("s-j2", "Switching Node with nvm before installing packages avoids the npm errors"),
    ],
]

#: Themes that occur in one session only (two notes, same session) or once: never promoted.
SINGLE_SESSION: list[list[tuple[str, str]]] = [
    [
        ("s-x1", "The lint step is slow because mypy has no cache"),
        ("s-x1", "mypy has no cache so the lint step is slow"),
    ],
    [
        ("s-x2", "The translation export script drops plural forms"),
        ("s-x2", "Plural forms get dropped by the translation export script"),
    ],
    [("s-x3", "The screenshot tests need a fixed font")],
    [("s-x4", "The release checklist lives in the wiki")],
    # Single notes on the topic of a recurring theme, about something else (cosine up to 0.56
    # with a note of that theme).
    [("s-y1", "The integration suite needs Docker running")],
    [("s-y2", "settings.py holds the dev database password")],
    [("s-y3", "Dana reviews the pull requests on Fridays")],
]
