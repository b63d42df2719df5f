"""Memory Steward settings: one module, driven by environment variables.

- ``DATABASE_URL``: SQLite file by default (``db.sqlite3`` beside manage.py);
  PostgreSQL via psycopg 3.
- ``CELERY_BROKER_URL``: unset means tasks run eagerly in-process.
- ``SECRET_KEY``, ``DEBUG``, ``ALLOWED_HOSTS``.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# --- Core -----------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or "dev-only-insecure-key-set-SECRET_KEY-in-production"
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
    "memory",
    "proposals",
    "review",
    "audit",
    "evaluation",
    "agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "lib.correlation.CorrelationIdMiddleware",
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
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has no row locks: every write transaction takes the write lock up front
    # (IMMEDIATE) and waits for a busy writer instead of failing at once.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/review/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# --- I18n / time ----------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static ---------------------------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "lib.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "lib.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Steward API",
    "DESCRIPTION": "Agents write and recall memories and propose maintenance; reviewers decide.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI is served from our own static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
# Request bodies above this are refused with 413 ``too_large`` before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
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
}

# --- Email ----------------------------------------------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "memory-steward@localhost")
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
    "VECTOR_MIN_COSINE": 0.3,
    "VECTOR_MAX_SCAN": 50_000,  # vectors compared per query, newest versions first
    "RERANKER": os.environ.get("STEWARD_RERANKER") or None,  # dotted path, off by default
}
# Optional vector channel: a provider class by dotted path, e.g.
# "memory.embeddings.MiniLMProvider" (pip install .[embeddings]). None = lexical only.
STEWARD_EMBEDDINGS = {"PROVIDER": os.environ.get("STEWARD_EMBEDDINGS_PROVIDER") or None}

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
