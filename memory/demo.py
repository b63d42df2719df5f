"""The demo Memory: realistic entries written through the real actions.

Used by ``manage.py load_demo`` (and so by ``make demo``). Everything goes through actions, so
the demo has real revisions, retirements, a finished session, a conflict and audit events.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission, User

from . import actions
from .actors import Actor
from .db_stats import MEMORY_TABLES, analyze
from .models import Memory, Source

DEMO_SLUG = "acme-platform"
#: A second, empty Memory without admission review, for loading a conversation and asking it
#: (the README's "Load a conversation and ask it"): in the first, every uncited turn would wait
#: for a reviewer as a candidate.
CHAT_SLUG = "acme-chat"
DEMO_PASSWORD = "steward-demo"

SOURCES: list[tuple[str, str, actions.Declaration | None]] = [
    (
        "repo",
        "The acme/platform monorepo",
        {"authority": "repository_attested", "verification": "verified"},
    ),
    (
        "ci",
        "The CI system's build records",
        {"authority": "system_attested", "verification": "verified"},
    ),
    (
        "chat",
        "The #platform team channel",
        {"authority": "user_asserted", "verification": "unknown"},
    ),
    ("wiki", "The team wiki (unreviewed pages)", None),
]

# (key, body, kind, tier, current_state, evidence)
ENTRIES: list[tuple[str, str, str, str, bool, list[tuple[str, str]]]] = [
    (
        "deploy_target",
        "The production deploy target is the eu-west-2 cluster (k8s-prod-2).",
        "fact",
        "long",
        True,
        [("repo", "deploy/prod.yaml")],
    ),
    (
        "deploy_time",
        "Production deploys run at 02:00 UTC via scripts/deploy.sh.",
        "fact",
        "long",
        True,
        [("repo", "scripts/deploy.sh")],
    ),
    ("deploy_nightly", "Deploys run nightly.", "fact", "long", False, [("chat", "msg-20931")]),
    (
        "no_friday",
        "Never deploy to production on Fridays after 15:00 CET.",
        "constraint",
        "long",
        False,
        [("wiki", "Release-Policy")],
    ),
    (
        "pg_version",
        "The primary database is PostgreSQL 15.4 on db-main-1.",
        "fact",
        "long",
        True,
        [("repo", "infra/db.tf")],
    ),
    (
        "pg_locks",
        "Use PostgreSQL advisory locks for leader election in the scheduler.",
        "decision",
        "long",
        False,
        [("repo", "docs/adr/0007-leader-election.md")],
    ),
    (
        "redis_cache",
        "Redis 7 is used only as a cache; never store sessions in it.",
        "constraint",
        "long",
        False,
        [("repo", "docs/adr/0011-cache.md")],
    ),
    (
        "tabs",
        "The team prefers tabs in Makefiles and 4 spaces in Python.",
        "preference",
        "long",
        False,
        [],
    ),
    (
        "small_prs",
        "Reviewers prefer pull requests under 400 changed lines.",
        "preference",
        "long",
        False,
        [("chat", "msg-18812")],
    ),
    (
        "ci_runner",
        "CI runs on GitHub Actions with the ubuntu-22.04 runner image.",
        "fact",
        "long",
        True,
        [("ci", "workflow/ci.yml#L12")],
    ),
    (
        "coverage",
        "The coverage gate is 85% on changed lines.",
        "constraint",
        "long",
        False,
        [("ci", "codecov.yml")],
    ),
    (
        "api_version",
        "The public API is versioned in the URL path (/v1/, /v2/).",
        "decision",
        "long",
        False,
        [("repo", "docs/adr/0003-api-versioning.md")],
    ),
    (
        "oncall",
        "On-call rotation changes every Monday at 09:00 CET.",
        "fact",
        "long",
        True,
        [("wiki", "Oncall")],
    ),
    (
        "pager",
        "Pages go to the #platform-oncall channel and PagerDuty service P7X2K.",
        "fact",
        "long",
        True,
        [("wiki", "Oncall")],
    ),
    (
        "logs_retention",
        "Application logs are retained for 30 days in Loki.",
        "fact",
        "long",
        True,
        [("repo", "infra/loki.tf")],
    ),
    (
        "python_version",
        "Services run on Python 3.11; 3.12 migration is planned for Q3.",
        "fact",
        "long",
        True,
        [("repo", "pyproject.toml")],
    ),
    (
        "feature_flags",
        "Feature flags live in config/flags.yaml and are read at boot.",
        "fact",
        "long",
        True,
        [("repo", "config/flags.yaml")],
    ),
    (
        "error_budget",
        "The checkout service SLO is 99.9% monthly availability.",
        "constraint",
        "long",
        False,
        [("wiki", "SLOs")],
    ),
    (
        "timezone",
        "All timestamps are stored in UTC and rendered in the user's zone.",
        "decision",
        "long",
        False,
        [("repo", "docs/adr/0002-time.md")],
    ),
    (
        "naming",
        "Kubernetes namespaces are named <team>-<env>, e.g. payments-prod.",
        "decision",
        "long",
        False,
        [("repo", "docs/conventions.md")],
    ),
    (
        "staging_db",
        "The staging database is db-stage-3.",
        "fact",
        "short",
        True,
        [("chat", "msg-21007")],
    ),
    (
        "ticket_4711",
        "Ticket PLAT-4711: flaky test in test_scheduler.py::test_lease_expiry.",
        "fact",
        "short",
        True,
        [("ci", "run/88213")],
    ),
    (
        "owner_billing",
        "The billing service is owned by the payments team (lead: Mara Okafor).",
        "fact",
        "long",
        True,
        [("wiki", "Service-Owners")],
    ),
    (
        "secrets_vault",
        "Secrets are read from Vault at path kv/platform/<service>; never from env files.",
        "constraint",
        "long",
        False,
        [("repo", "docs/adr/0009-secrets.md")],
    ),
    (
        "migration_rule",
        "Database migrations must be backwards compatible for one release.",
        "constraint",
        "long",
        False,
        [("repo", "docs/adr/0012-migrations.md")],
    ),
    (
        "cn_note",
        "部署窗口是每周二晚上十点，需要提前通知运维团队。",
        "fact",
        "long",
        True,
        [("chat", "msg-30011")],
    ),
    (
        "ja_note",
        "本番環境のデプロイは火曜日の夜に行います。",
        "fact",
        "long",
        False,
        [("chat", "msg-30012")],
    ),
    (
        "queue",
        "Background jobs use Celery 5 with Redis as the broker.",
        "fact",
        "long",
        True,
        [("repo", "worker/celery.py")],
    ),
    (
        "http_timeout",
        "Outbound HTTP calls use a 10s timeout and 3 retries with backoff.",
        "decision",
        "long",
        False,
        [("repo", "lib/http.py")],
    ),
    (
        "dashboards",
        "Grafana dashboards are provisioned from grafana/dashboards/*.json.",
        "fact",
        "long",
        False,
        [("repo", "grafana/")],
    ),
    (
        "legacy_ftp",
        "Nightly exports are uploaded to the legacy FTP host ftp-old.acme.internal.",
        "fact",
        "long",
        True,
        [("wiki", "Exports")],
    ),
    (
        "code_owner",
        "CODEOWNERS requires one platform reviewer for changes under infra/.",
        "constraint",
        "long",
        False,
        [("repo", ".github/CODEOWNERS")],
    ),
]

# Working notes from two sessions on the same theme (promotion material).
SESSION_NOTES = [
    ("s-0412", "Working note: the scheduler lease expires after 30s; renew at 10s."),
    ("s-0412", "Working note: PLAT-4711 is caused by the 30s lease expiring under load."),
    ("s-0419", "Working note: scheduler lease is 30s and should be renewed every 10s."),
]


#: The revised entries: (key, new body, cited (source, ref), the expected head version or None).
REVISIONS: list[tuple[str, str, tuple[str, str], int | None]] = [
    (
        "pg_version",
        "The primary database is PostgreSQL 15.6 on db-main-1 (upgraded 2026-10-14).",
        ("ci", "run/90112"),
        1,
    ),
    (
        "python_version",
        "Services run on Python 3.11; the 3.12 migration is scheduled for 2027-Q1.",
        ("chat", "msg-22540"),
        None,
    ),
]
#: The retired entries: (key, reason); the dashboards entry is restored afterwards.
RETIREMENTS = [
    ("legacy_ftp", "FTP host decommissioned"),
    ("ticket_4711", "PLAT-4711 closed"),
    ("dashboards", "moved to dashboards-as-code"),
]


@dataclass
class DemoResult:
    memory: Memory
    entries: dict[str, str]
    agent: Actor
    agent_key: str
    reviewer_key: str
    auditor_key: str


#: The demo users' addresses (the demo's mail goes to the console or files, see the README).
DEMO_EMAIL = "{username}@acme.example"


def _user(username: str, group: str | None, *, staff: bool = False) -> User:
    """A demo user; the staff user reads every model in the Django admin and changes none
    (every change goes through the audited product, never through the admin)."""
    user = User.objects.filter(username=username).first()
    email = DEMO_EMAIL.format(username=username)
    if user is None:
        user = User.objects.create_user(
            username, email=email, password=DEMO_PASSWORD, is_staff=staff
        )
    if not user.email:  # demo databases made before the users had addresses
        user.email = email
        user.save(update_fields=["email"])
    if staff:
        if user.is_superuser or not user.is_staff:
            user.is_staff, user.is_superuser = True, False
            user.save(update_fields=["is_staff", "is_superuser"])
        user.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def load_demo() -> DemoResult:
    """Create (or reuse) the demo Memory and print-worthy credentials. Idempotent."""
    from .keys import issue_api_key

    admin = _user("admin", None, staff=True)
    _user("rita", "reviewer")
    _user("ravi", "reviewer")
    _user("ada", "auditor")
    staff = Actor.for_user(admin)

    for name, description, declaration in SOURCES:
        if not Source.objects.filter(name=name).exists():
            actions.register_source(
                actor=staff, name=name, description=description, declaration=declaration
            )

    memory = Memory.objects.filter(slug=DEMO_SLUG).first()
    fresh = memory is None
    if memory is None:
        memory = actions.create_memory(
            actor=staff,
            slug=DEMO_SLUG,
            name="Acme platform team",
            policy={"quality_ranking": True},
        )
    if not Memory.objects.filter(slug=CHAT_SLUG).exists():
        actions.create_memory(actor=staff, slug=CHAT_SLUG, name="Acme agent conversations")
    agent_key, agent_secret = issue_api_key(
        name="demo-agent", role="agent", memory_slugs=[DEMO_SLUG, CHAT_SLUG]
    )
    _, reviewer_secret = issue_api_key(name="demo-reviewer", role="reviewer", owner_username="rita")
    _, auditor_secret = issue_api_key(name="demo-auditor", role="auditor", owner_username="ada")
    agent = Actor.for_key(agent_key, frozenset({memory.pk}))
    entries: dict[str, str] = {}
    if fresh:
        entries = _write_history(memory, agent, staff)
        analyze(MEMORY_TABLES)  # a bulk load: the planner needs statistics of the new rows
    return DemoResult(memory, entries, agent, agent_secret, reviewer_secret, auditor_secret)


def _write_history(memory: Memory, agent: Actor, staff: Actor) -> dict[str, str]:
    ids: dict[str, str] = {}
    for key, body, kind, tier, current, evidence in ENTRIES:
        result = actions.add_entry(
            memory,
            actor=agent,
            body=body,
            kind=kind,
            tier=tier,
            current_state=current,
            evidence=[{"source": s, "ref": r} for s, r in evidence],
            dedupe=False,
        )
        ids[key] = result.entry.uid
    for i, (session, body) in enumerate(SESSION_NOTES):
        result = actions.add_entry(
            memory,
            actor=agent,
            body=body,
            kind="working_note",
            tier="session",
            session_id=session,
            dedupe=False,
        )
        ids[f"note_{i}"] = result.entry.uid
    # A corrected fact (two versions) and a moved target.
    for key, body, (source, ref), expected_version in REVISIONS:
        actions.revise_entry(
            memory,
            actor=agent,
            entry_uid=ids[key],
            body=body,
            evidence=[{"source": source, "ref": ref}],
            expected_version=expected_version,
        )
    # Retirements and a restore.
    for key, reason in RETIREMENTS:
        actions.forget_entry(memory, actor=agent, entry_uid=ids[key], reason=reason)
    actions.reactivate_entry(
        memory, actor=agent, entry_uid=ids["dashboards"], reason="migration rolled back"
    )
    # A conflict observation between two deploy statements.
    actions.record_conflict(
        memory,
        actor=agent,
        from_entry=ids["deploy_nightly"],
        to_entry=ids["deploy_time"],
        evidence=[{"source": "chat", "ref": "msg-20931"}],
    )
    # A reviewer pins the Friday rule.
    actions.pin_entry(
        memory,
        actor=staff,
        entry_uid=ids["no_friday"],
        pinned=True,
        category="safety_policy",
        reason="Company release policy",
    )
    # A finished session: its session-tier notes are retired with session_end.
    actions.add_entry(
        memory,
        actor=agent,
        body="Working note: investigating slow CI caches on the ubuntu runner.",
        kind="working_note",
        tier="session",
        session_id="s-0420",
        dedupe=False,
    )
    actions.end_session(memory, actor=agent, session_id="s-0420")
    return ids
